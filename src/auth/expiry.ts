/** Unix times below this are seconds; above, milliseconds (1e11 s is in the year 5138). */
const SECONDS_LIMIT = 1e11;
/** When the exchange gives no usable lifetime at all, assume a short one. */
export const FALLBACK_LIFETIME_MS = 60_000;

/** `expires_at` as epoch milliseconds: an ISO date, or Unix time in seconds or milliseconds. */
export function parseExpiresAt(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) {
    return value < SECONDS_LIMIT ? value * 1000 : value;
  }
  if (typeof value === "string" && value.trim() !== "") {
    const text = value.trim();
    if (/^\d+(\.\d+)?$/.test(text)) return parseExpiresAt(Number(text));
    const parsed = Date.parse(text);
    return Number.isNaN(parsed) ? null : parsed;
  }
  return null;
}

export function parseExpiresIn(value: unknown): number | null {
  const seconds =
    typeof value === "string" && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
  return typeof seconds === "number" && Number.isFinite(seconds) && seconds > 0
    ? seconds * 1000
    : null;
}

/**
 * When a bearer stops being valid, on the local clock. `expires_at` is on the server's clock
 * (shifted by the known offset); `expires_in` counts from when the answer arrived. When both
 * are given the earlier wins; when neither is, a short fallback.
 */
export function bearerExpiry(args: {
  expiresAt: unknown;
  expiresIn: unknown;
  receivedAtMs: number;
  serverOffsetMs: number;
}): number {
  const candidates: number[] = [];
  const at = parseExpiresAt(args.expiresAt);
  if (at !== null) candidates.push(at - args.serverOffsetMs);
  const inMs = parseExpiresIn(args.expiresIn);
  if (inMs !== null) candidates.push(args.receivedAtMs + inMs);
  return candidates.length > 0 ? Math.min(...candidates) : args.receivedAtMs + FALLBACK_LIFETIME_MS;
}

/** Renew this long before expiry: a tenth of the lifetime, between 1 s and 60 s. */
export function renewalMarginMs(lifetimeMs: number): number {
  return Math.min(60_000, Math.max(1_000, lifetimeMs / 10));
}
