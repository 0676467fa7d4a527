import { randomBytes, randomUUID } from "node:crypto";
import type { Operation } from "../api/catalogue.js";
import type { ApiClient } from "../api/client.js";
import type { DelegatedUser } from "../config.js";
import { activeTraceparent } from "../telemetry/tracing.js";
import type { IntentBook } from "./book.js";
import { confirmationIdOf } from "./confirmation-id.js";
import { describeUser } from "./describe-user.js";
import { displayed } from "./display.js";
import { type Caller, type Channel, canonicalDigest, type Intent, type Preview } from "./intent.js";
import { UNSENT_DRAFT_GRACE_MS } from "./journal.js";
import type { Recorder } from "./recorder.js";
import { GateRefusal } from "./refusal.js";

/** A write as a tool drafts it: the exact request and how to show it. */
export interface WriteDraft {
  operation: string;
  path: Record<string, unknown>;
  /** Rare for writes, but the contract may give one a query. */
  query?: Record<string, unknown>;
  body: unknown;
  /** Untrusted parts (names, values) are neutralised by the gate before anyone sees them. */
  preview: Omit<Preview, "recorded_as">;
}

export interface DraftingParts {
  book: IntentBook;
  api: ApiClient;
  recorder: Recorder;
  ttlMs: number;
  /** Drafts one user of one client may leave unconfirmed at once. */
  maxPendingPerUser: number;
}

/**
 * Drafting: a checked request stored as a pending intent, with its own Idempotency-Key and a
 * confirmation id that names it, before anyone is asked. Nothing is sent.
 */
export class Drafting {
  constructor(private readonly parts: DraftingParts) {}

  /** Stores a new pending intent with a fresh key and confirmation id. Nothing is sent. */
  async propose(
    draft: WriteDraft,
    caller: Caller,
    delegatedUser: DelegatedUser | null,
    channel: Channel,
  ): Promise<Intent> {
    const { api, book } = this.parts;
    const now = book.clock();
    await this.makeRoom(caller, delegatedUser, now);
    const operation = api.operation(draft.operation);
    api.validate(
      operation,
      { path: draft.path, query: draft.query, body: draft.body },
      { delegatedUser },
    );
    const request = this.requestOf(draft, operation, caller, delegatedUser, channel);
    const id = `cf_${randomBytes(12).toString("base64url")}`;
    const intent: Intent = {
      ...request,
      id,
      confirmationId: confirmationIdOf({ ...request, id }),
      preview: this.previewOf(draft, operation, delegatedUser),
      state: "pending",
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.parts.ttlMs).toISOString(),
      confirmedAt: null,
      updatedAt: new Date(now).toISOString(),
      attempts: 0,
      result: null,
      error: null,
      ...traceOf(activeTraceparent()),
    };
    const stored = await book.persist(intent);
    this.parts.recorder.tell("draft", stored, "drafted");
    return stored;
  }

  /** Refuses a draft while this user of this client holds as many as allowed. */
  private async makeRoom(
    caller: Caller,
    delegatedUser: DelegatedUser | null,
    now: number,
  ): Promise<void> {
    const { book, maxPendingPerUser } = this.parts;
    const user = describeUser(delegatedUser);
    // Drafts still held for this user: waiting, and the unsent ones kept a minute without
    // their body. Counting the latter keeps draft-and-cancel loops from filling the store.
    const awaiting = () =>
      book
        .all()
        .filter(
          (i) =>
            i.caller.client === caller.client &&
            describeUser(i.delegatedUser) === user &&
            (i.state === "pending"
              ? now <= Date.parse(i.expiresAt)
              : (i.state === "cancelled" || i.state === "expired") &&
                now <= Date.parse(i.updatedAt) + UNSENT_DRAFT_GRACE_MS),
        );
    let pending = awaiting().length;
    if (pending >= maxPendingPerUser) {
      // With a shared store, other replicas may have confirmed or cancelled some of them since
      // this one drafted them: what it holds in memory would refuse drafts for their whole TTL.
      await Promise.all(awaiting().map((i) => book.refresh(i.id)));
      pending = awaiting().length;
    }
    if (pending >= maxPendingPerUser) {
      throw new GateRefusal(
        "full",
        `${pending} drafted writes already await confirmation for this user, or were cancelled or expired less than a minute ago; confirm some, or wait a minute, before drafting another. Nothing was drafted.`,
      );
    }
  }

  /** The exact request, who asked for it, where it goes and its key: what is sent, if anything. */
  private requestOf(
    draft: WriteDraft,
    operation: Operation,
    caller: Caller,
    delegatedUser: DelegatedUser | null,
    channel: Channel,
  ) {
    const settings = this.parts.api.settings;
    return {
      operation: draft.operation,
      // The route it was drafted against: a restart with another contract sends it here or
      // nowhere, never to wherever the operation has moved.
      route: {
        method: operation.method,
        path: operation.path,
        capability: operation.capability,
        bodyType: operation.bodyType,
      },
      path: draft.path,
      ...(draft.query && Object.keys(draft.query).length > 0 ? { query: draft.query } : {}),
      body: draft.body,
      bodyDigest: canonicalDigest(draft.body ?? null),
      delegatedUser,
      caller: {
        sessionId: caller.sessionId,
        client: caller.client,
        grants: caller.grants,
        email: caller.email ?? null,
      },
      channel,
      upstream: { baseUrl: settings.baseUrl, keyId: settings.keyId },
      idempotencyKey: `pmcp-${randomUUID()}`,
    };
  }

  /** The preview as the person will see it, saying whom the API will record as the author. */
  private previewOf(
    draft: WriteDraft,
    operation: Operation,
    delegatedUser: DelegatedUser | null,
  ): Preview {
    const user = describeUser(delegatedUser);
    return displayed({
      ...draft.preview,
      // Spec part 5: only /users/me* routes act as the delegated user; every other write is
      // recorded by the API as the key's own (its service account), whoever asked for it.
      recorded_as:
        operation.capability !== null
          ? `${user ?? "the delegated user"} (the user this server acts for)`
          : `the API key ${this.parts.api.settings.keyId} (the integration's service account, not a person)`,
    });
  }
}

/** The draft's trace context, kept with the intent (and so covered by its MAC). */
function traceOf(traceparent: string | null): Pick<Intent, "trace"> {
  return traceparent ? { trace: traceparent } : {};
}
