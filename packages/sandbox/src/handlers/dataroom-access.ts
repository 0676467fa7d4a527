import { type SandboxKey, serviceAccount } from "../keys.js";
import type { StoredDocument } from "../models/documents.js";
import { notFound, Problem } from "../problem.js";
import type { SandboxState } from "../state.js";

/**
 * Dataroom rights (spec part 1: access is scopes, routes, IP restrictions "and, for some
 * documents, dataroom access rights"). Documents, search and extraction are not delegated
 * routes (delegation is for /users/me*, spec part 5), so the caller is the key itself, known by
 * its service account `apikey:<key_id>`, the identity that signs its writes. A document outside
 * any dataroom is open to every key with the route's scope; one inside a dataroom only to its
 * members. Lists, search and the timeline leave out what the caller may not open; asking for
 * it by id is 403 `dataroom_access_denied`.
 */
export function mayOpen(state: SandboxState, key: SandboxKey, document: StoredDocument): boolean {
  if (document.dataroom === null) return true;
  return isMember(state, key, document.dataroom.id);
}

export function isMember(state: SandboxState, key: SandboxKey, dataroomId: string): boolean {
  const room = state.data.datarooms.find((d) => d.id === dataroomId);
  return room?.members.includes(serviceAccount(key)) ?? false;
}

/** The documents this key may open, in the stored order. */
export function openableDocuments(state: SandboxState, key: SandboxKey): StoredDocument[] {
  return state.data.documents.filter((d) => mayOpen(state, key, d));
}

export function findDocument(state: SandboxState, id: string): StoredDocument {
  const document = state.data.documents.find((d) => d.id === id.toLowerCase());
  if (!document) throw notFound("document", id, "document_not_found");
  return document;
}

/** The document, if this key may open it: 404 when it does not exist, 403 when it may not. */
export function openDocument(state: SandboxState, key: SandboxKey, id: string): StoredDocument {
  const document = findDocument(state, id);
  if (!mayOpen(state, key, document)) throw dataroomDenied(document.dataroom?.name ?? "");
  return document;
}

/** A dataroom this key is a member of: 404 when it does not exist, 403 when it is not. */
export function assertDataroomMember(state: SandboxState, key: SandboxKey, id: string): void {
  const room = state.data.datarooms.find((d) => d.id === id.toLowerCase());
  if (!room) throw notFound("dataroom", id, "dataroom_not_found");
  if (!isMember(state, key, room.id)) throw dataroomDenied(room.name);
}

function dataroomDenied(name: string): Problem {
  return new Problem(
    403,
    `This key is not a member of the dataroom "${name}"; ask its administrator for access.`,
    { reasonCode: "dataroom_access_denied" },
  );
}
