import { BlockList, isIP } from "node:net";
import { hasScope, type SandboxKey } from "./keys.js";
import { Problem } from "./problem.js";

/** `::ffff:127.0.0.1` (IPv4 seen through a dual-stack socket) is the IPv4 address. */
export function normaliseAddress(address: string | undefined): string {
  if (!address) return "";
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export function assertAddressAllowed(key: SandboxKey, address: string, routeId: string): void {
  if (!key.ips) return;
  const allowed = new BlockList();
  for (const entry of key.ips) {
    const [ip, bits] = entry.split("/");
    const family = isIP(ip ?? "") === 6 ? "ipv6" : "ipv4";
    if (bits === undefined) allowed.addAddress(ip ?? "", family);
    else allowed.addSubnet(ip ?? "", Number(bits), family);
  }
  const family = isIP(address) === 6 ? "ipv6" : "ipv4";
  if (!address || !allowed.check(address, family)) {
    throw new Problem(403, `This key may not be used from ${address || "this address"}.`, {
      reasonCode: "ip_not_allowed",
      routeId,
    });
  }
}

/** Key-level authorisation of one route: address, route allowlist, then scope (spec part 5). */
export function assertRouteAllowed(
  key: SandboxKey,
  route: { id: string; scope: string },
  address: string,
): void {
  assertAddressAllowed(key, address, route.id);
  if (key.routes && !key.routes.includes(route.id)) {
    throw new Problem(403, `This key is not allowed to call ${route.id}.`, {
      reasonCode: "route_not_allowed",
      routeId: route.id,
    });
  }
  if (!hasScope(key, route.scope)) {
    throw new Problem(403, `This key lacks the scope ${route.scope}.`, {
      reasonCode: "insufficient_scope",
      scope: route.scope,
      routeId: route.id,
    });
  }
}
