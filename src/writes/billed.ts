import { createHash } from "node:crypto";
import { canonicalJson } from "../canonical.js";
import type { DelegatedUser } from "../config.js";
import type { Logger } from "../log.js";
import type { SharedRedis } from "../state/redis.js";
import type { Intent } from "./intent.js";

/**
 * Billable calls a caller made lately (a SIREN resolved with the provider): the next draft of
 * the same call says so in its preview ("resolved 2 minutes ago"), so that nobody pays twice by
 * accident. Kept per caller (its client and delegated user: a person's, not a session's, since a
 * new session does not make a second charge any cheaper) and per request (the operation and
 * everything it sends), for an hour. A hint, never a refusal: the person may want a fresh answer.
 */
export const BILLED_TTL_MS = 3_600_000;

/** How a call that was billed ended, as far as this server knows. */
export interface BilledCall {
  /** When the person confirmed it (ms since the epoch). */
  at: number;
  /** `uncertain`: sent, and no answer yet; it may have been charged. */
  state: "succeeded" | "uncertain";
}

export interface BilledCalls {
  remember(key: string, call: BilledCall): Promise<void>;
  recall(key: string): Promise<BilledCall | null>;
}

/** The request a billable call is known by, and who made it. */
export interface BilledRequest {
  client: string;
  delegatedUser: DelegatedUser | null;
  operation: string;
  path: Record<string, unknown>;
  query?: Record<string, unknown>;
  body: unknown;
}

/** A digest, so that neither the store nor its keys hold what was sent. */
export function billedKey(request: BilledRequest): string {
  const { client, delegatedUser, operation, path, query, body } = request;
  return createHash("sha256")
    .update(canonicalJson([client, delegatedUser, operation, path, query ?? {}, body ?? null]))
    .digest("hex");
}

/** This process's memory: a single server, or each replica of a fleet without Redis. */
export class BilledInMemory implements BilledCalls {
  private readonly calls = new Map<string, BilledCall>();

  constructor(
    private readonly max = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  async remember(key: string, call: BilledCall): Promise<void> {
    this.calls.delete(key); // re-inserted last: the map's order is the eviction order
    this.calls.set(key, call);
    while (this.calls.size > this.max) this.calls.delete(this.calls.keys().next().value as string);
  }

  async recall(key: string): Promise<BilledCall | null> {
    const call = this.calls.get(key);
    if (!call) return null;
    if (this.now() - call.at < BILLED_TTL_MS) return call;
    this.calls.delete(key);
    return null;
  }
}

/**
 * The fleet's memory on its Redis: a 2026 client's next request may reach another replica than
 * the one that sent the call. Each entry expires on its own after an hour.
 */
export class BilledOnRedis implements BilledCalls {
  constructor(private readonly redis: SharedRedis) {}

  async remember(key: string, call: BilledCall): Promise<void> {
    await this.redis.run((c) =>
      c.set(this.redis.key(`billed:${key}`), JSON.stringify(call), { PX: BILLED_TTL_MS }),
    );
  }

  async recall(key: string): Promise<BilledCall | null> {
    const raw = await this.redis.run((c) => c.get(this.redis.key(`billed:${key}`)));
    if (typeof raw !== "string") return null;
    try {
      const call = JSON.parse(raw) as Partial<BilledCall>;
      if (typeof call.at !== "number" || (call.state !== "succeeded" && call.state !== "uncertain"))
        return null;
      return { at: call.at, state: call.state };
    } catch {
      return null;
    }
  }
}

/**
 * A confirmed billable write, remembered once the gate settled it: sent (succeeded, or its
 * outcome unknown); a refusal was not billed. The write stands whatever becomes of this.
 */
export async function rememberBilled(
  billed: BilledCalls,
  intent: Intent,
  logger: Logger,
): Promise<void> {
  if (!intent.preview.billable) return;
  if (intent.state !== "succeeded" && intent.state !== "uncertain") return;
  const at = Date.parse(intent.confirmedAt ?? intent.updatedAt);
  try {
    await billed.remember(billedKey({ ...intent, client: intent.caller.client }), {
      at: Number.isNaN(at) ? Date.now() : at,
      state: intent.state,
    });
  } catch (error) {
    logger.warn({ err: error, intent: intent.id }, "a billable call could not be remembered");
  }
}

/**
 * How long ago the same billable call was made ("2 minutes ago"), and whether its outcome is
 * known; null when it was not made within the hour, or the memory cannot be read.
 */
export async function billedLately(
  billed: BilledCalls,
  request: BilledRequest,
  logger: Logger,
  now = Date.now(),
): Promise<{ ago: string; state: BilledCall["state"] } | null> {
  let call: BilledCall | null;
  try {
    call = await billed.recall(billedKey(request));
  } catch (error) {
    logger.warn({ err: error }, "billable calls made lately could not be read");
    return null;
  }
  if (!call || now - call.at >= BILLED_TTL_MS) return null;
  return { ago: ago(now - call.at), state: call.state };
}

/** "less than a minute ago", "1 minute ago", "2 minutes ago" (within the hour). */
export function ago(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000);
  if (minutes === 0) return "less than a minute ago";
  return `${minutes} minute${minutes === 1 ? "" : "s"} ago`;
}
