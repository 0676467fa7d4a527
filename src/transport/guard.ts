import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

/** Loopback names a local browser or client may use for this server. */
const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."));
}

/** A bind to every address (a container's), which listens on loopback too. */
export function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::";
}

export interface GuardSettings {
  bindHost: string;
  port: number;
  allowedHosts: string[];
  allowedOrigins: string[];
}

/**
 * Which Host and Origin values this server answers to: its own address (and the loopback
 * names when bound to loopback or to every address, so that a container's health check and
 * a published port on 127.0.0.1 reach it), plus what the operator listed. A DNS-rebinding page reaches
 * us under a foreign Host; a cross-site page under a foreign Origin.
 */
export function allowedOrigins(settings: GuardSettings): {
  hosts: Set<string>;
  origins: Set<string>;
} {
  const bound = settings.bindHost.includes(":") ? `[${settings.bindHost}]` : settings.bindHost;
  const own = isLoopback(settings.bindHost)
    ? LOOPBACK_NAMES
    : isWildcard(settings.bindHost)
      ? [...LOOPBACK_NAMES, bound]
      : [bound];
  const hosts = new Set([
    ...own.map((h) => `${h}:${settings.port}`),
    ...settings.allowedHosts.map((h) => h.toLowerCase()),
  ]);
  const origins = new Set([
    ...own.flatMap((h) => [`http://${h}:${settings.port}`, `https://${h}:${settings.port}`]),
    ...settings.allowedOrigins.map((o) => o.replace(/\/+$/, "").toLowerCase()),
  ]);
  return { hosts, origins };
}

export type GuardRefusal = { status: 403 | 401; message: string } | null;

export function checkHostAndOrigin(
  req: IncomingMessage,
  allowed: { hosts: Set<string>; origins: Set<string> },
): GuardRefusal {
  const host = (req.headers.host ?? "").toLowerCase();
  if (!allowed.hosts.has(host))
    return { status: 403, message: `Host ${host || "(none)"} is not allowed.` };
  const origin = req.headers.origin;
  if (origin !== undefined && !allowed.origins.has(origin.toLowerCase())) {
    return { status: 403, message: `Origin ${origin} is not allowed.` };
  }
  return null;
}

/** Compares a presented bearer with the expected one in constant time (hashes even the lengths out). */
export function bearerMatches(header: string | undefined, expectedToken: string): boolean {
  const presented = /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1] ?? "";
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expectedToken).digest();
  return timingSafeEqual(a, b) && presented.length > 0;
}
