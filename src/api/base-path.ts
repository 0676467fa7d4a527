/**
 * Whether a route stays under the API's base path. A URL resolves `.` and `..` segments, and
 * WHATWG URL reads `%2e` as a dot there too: `/v1/%2e%2e/_admin` is `/_admin` on the same host,
 * past every route the key's contract lists. Pure, so the gate can check a stored route with it
 * at delivery as the client checks every URL it builds.
 */

/** A `.` or `..` segment, spelled with dots or `%2e` in any case. */
export function hasDotSegment(path: string): boolean {
  return path.split(/[/\\]/).some((segment) => /^(\.|%2e){1,2}$/i.test(segment));
}

/**
 * True when `path` (the part after the base URL, starting with `/`) has no dot segment, no
 * control character, space, query or fragment, and, as WHATWG URL resolves it, stays on the base
 * URL's origin under its path.
 */
export function staysUnderBase(baseUrl: string, path: string): boolean {
  // WHATWG URL drops tabs and newlines before it resolves: `.\t.` would be `..` by then.
  if (!path.startsWith("/") || /[?#\p{Cc} ]/u.test(path) || hasDotSegment(path)) return false;
  let base: URL;
  let resolved: URL;
  try {
    base = new URL(baseUrl);
    resolved = new URL(`${baseUrl.replace(/\/+$/, "")}${path}`);
  } catch {
    return false;
  }
  const root = base.pathname.replace(/\/+$/, "");
  return resolved.origin === base.origin && resolved.pathname.startsWith(`${root}/`);
}
