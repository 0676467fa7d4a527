import { neutralise } from "../neutralise.js";

/**
 * The confirmation id of a two-step write: what the person is asked to approve when the client
 * asks "allow confirm_write?", so it names the write itself, and only in words no upstream text
 * can write: the operation id, the target's path parameters and a digest of the body, then the
 * journal id in brackets. Upstream names (long, or crafted to look like another write) stay in
 * the preview, where each is quoted and shown whole.
 *
 *   operation_note_create operation_id=3f2a… · body sha256:1a2b3c4d5e6f [cf_…]
 */
const PART_MAX = 64;
const DIGEST_CHARS = 12;
const ID_IN_BRACKETS = /\[(cf_[A-Za-z0-9_-]{8,64})\]$/;

export function confirmationIdOf(write: {
  id: string;
  operation: string;
  path: Record<string, unknown>;
  body: unknown;
  bodyDigest: string;
}): string {
  const targets = Object.entries(write.path).map(
    ([name, value]) => `${part(name)}=${part(String(value))}`,
  );
  const content =
    write.body === undefined || write.body === null
      ? "no body"
      : `body sha256:${write.bodyDigest.slice(0, DIGEST_CHARS)}`;
  return `${[part(write.operation), ...targets].join(" ")} · ${content} [${write.id}]`;
}

/** `cf_…` from a confirmation id, or null. */
export function idOf(confirmationId: string): string | null {
  return ID_IN_BRACKETS.exec(confirmationId)?.[1] ?? null;
}

/** One word of the id: nothing invisible, no space or bracket that could fake another part. */
function part(text: string): string {
  return neutralise(text, { max: PART_MAX }).replace(/[\s[\]·]/g, "_");
}
