import { ApiError } from "./errors.js";
import { SERVER_PRINCIPAL } from "./principal.js";
import type { ShareLimits, WaitReason } from "./share-math.js";

/** The one sentence of a refused turn: which limit, its setting, when to retry. */
export function turnRefusal(
  call: { operationId: string; requestId: string },
  principal: string,
  reason: WaitReason,
  waitMs: number,
  settings: ShareLimits,
  keyFactor: number,
): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  const detail = explain(reason, principal, settings, keyFactor);
  return new ApiError(`${call.operationId} was not sent: ${detail}; retry in ${seconds} s.`, {
    code: "rate_limited",
    operationId: call.operationId,
    requestId: call.requestId,
    retryAfterSeconds: seconds,
    reasonCode: reason,
    detail,
  });
}

/** Why a turn was refused, naming the setting that decides it. */
function explain(
  reason: WaitReason,
  principal: string,
  settings: ShareLimits,
  keyFactor: number,
): string {
  const [who, has, its] = principal.startsWith(SERVER_PRINCIPAL)
    ? ["this server's own requests (sign-in, lookups)", "have", "their"]
    : ["this client", "has", "its"];
  const rate =
    keyFactor < 1
      ? `${settings.perMinute} requests a minute, lowered to ${Math.floor(settings.perMinute * keyFactor)} after the API's 429s`
      : `${settings.perMinute} requests a minute`;
  switch (reason) {
    case "client_share":
      return `${who} ${has} used ${its} share of the Partner API key's rate (PORTFOLIO_API_SHARE_PER_CLIENT: ${Math.round(settings.share * 100)} % of PORTFOLIO_API_RATE_LIMIT_PER_MINUTE, ${rate})`;
    case "key_rate":
      return `the Partner API key's rate is in use by every client together (PORTFOLIO_API_RATE_LIMIT_PER_MINUTE: ${rate})`;
    case "in_flight":
      return `${who} already ${has} ${settings.maxInFlight} request${settings.maxInFlight === 1 ? "" : "s"} to the Partner API under way (PORTFOLIO_API_MAX_IN_FLIGHT_PER_CLIENT)`;
  }
}

/** Refusals of a turn carry one of these reason codes, and no HTTP status: nothing was sent. */
export const TURN_REFUSALS: ReadonlySet<string> = new Set<WaitReason>([
  "client_share",
  "key_rate",
  "in_flight",
]);
