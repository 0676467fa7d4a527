import { randomBytes, randomUUID } from "node:crypto";
import { staysUnderBase } from "../api/base-path.js";
import type { Operation } from "../api/catalogue.js";
import type { ApiClient } from "../api/client.js";
import { withoutShareTokens } from "../api/response.js";
import type { DelegatedUser } from "../config.js";
import { UserFacingError, userMessage } from "../errors.js";
import type { Observer } from "../events.js";
import { ApiError, isInProgressConflict } from "../http/errors.js";
import { asPrincipal } from "../http/principal.js";
import type { Logger } from "../log.js";
import { neutraliseDeep } from "../neutralise.js";
import { StoreUnavailable } from "../state/redis.js";
import { activeTraceparent, traced } from "../telemetry/tracing.js";
import { confirmationIdOf, idOf } from "./confirmation-id.js";
import { describeUser } from "./describe-user.js";
import { capped, flatten, neutralise, SHOWN_VALUE_MAX } from "./display.js";
import { writeEvent } from "./events.js";
import {
  type Caller,
  type Channel,
  canonicalDigest,
  type Grants,
  type Intent,
  type Preview,
} from "./intent.js";
import {
  DamagedIntent,
  FINISHED_RETENTION_MS,
  type IntentStore,
  UNSENT_DRAFT_GRACE_MS,
} from "./journal.js";

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

export type RefusalReason =
  | "unknown"
  | "foreign"
  | "expired"
  | "cancelled"
  | "mismatch"
  | "full"
  | "changed"
  | "channel"
  | "damaged"
  | "store"
  | "audit";

/** A confirmation id that cannot be used: nothing was sent. */
export class GateRefusal extends UserFacingError {
  override name = "GateRefusal";
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

const SWEEP_INTERVAL_MS = 60_000;
/** Outcomes that leave a confirmed write unknown: it is sent again, with the same key. */
const UNCERTAIN_CODES = new Set([
  "network_error",
  "timeout",
  "server_error",
  "rate_limited",
  "unexpected_response",
  "aborted",
]);

export interface GateOptions {
  store: IntentStore;
  api: ApiClient;
  logger: Logger;
  ttlMs: number;
  /** Drafts one user of one client may leave unconfirmed at once. */
  maxPendingPerUser: number;
  clock?: () => number;
  /**
   * How long a delivery lease lasts without renewal: a replica that dies mid-delivery leaves
   * its confirmed write to another after this long. Renewed every third of it while sending.
   */
  deliveryLeaseMs?: number;
  /**
   * With a shared store (Redis): how often to look for writes a dead replica left mid-delivery.
   * Off for the file store, which one process owns.
   */
  recoverAbandonedEveryMs?: number;
  /** How long a confirmation waits for another process's delivery of the same intent. */
  waitForOtherDeliveryMs?: number;
  /**
   * Why this server would not offer an intent's operation to the caller with these grants (its
   * own rules: read-only, sensitivity, the contract, the allowlist), or null when it would.
   * Asked before every delivery, on whichever replica delivers. Absent: the contract alone.
   */
  undeliverable?: (intent: Intent, grants: Grants | null) => string | null;
  /**
   * Told of every draft, decision and delivery (the audit trail, telemetry). A confirmation it
   * cannot record is not acted on: the write is not sent (fail closed).
   */
  observer?: Observer;
}

const DELIVERY_LEASE_MS = 15_000;
const POLL_MS = 50;
/** How long a replica whose store did not answer a claim leaves abandoned writes to others. */
const STORE_TROUBLE_PAUSE_MS = 30_000;

/**
 * The confirmation gate and the exactly-once delivery behind it. An intent is stored before
 * anyone is asked; a confirmed intent is sent with its own Idempotency-Key on every attempt,
 * after a restart included; a succeeded intent is never sent again.
 */
export class WriteGate {
  private readonly intents = new Map<string, Intent>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly clock: () => number;
  private sweeper: NodeJS.Timeout | null = null;
  private recoverer: NodeJS.Timeout | null = null;
  /** This process, as the owner of the delivery leases it takes. */
  private readonly owner = `gate-${randomBytes(9).toString("base64url")}`;
  /** Until then the store was too slow to answer a claim: abandoned deliveries are left alone. */
  private storeTroubleUntil = 0;
  /** Writes being finished for a previous run or a dead replica: their delivery is a recovery. */
  private readonly recovering = new Set<string>();

  private constructor(private readonly options: GateOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /** Loads the journal, drops expired drafts and forgets old finished intents. */
  static async open(options: GateOptions): Promise<WriteGate> {
    const gate = new WriteGate(options);
    for (const intent of await options.store.load()) gate.intents.set(intent.id, intent);
    await gate.sweep();
    gate.sweeper = setInterval(() => {
      gate
        .sweep()
        .catch((error: unknown) =>
          options.logger.warn({ err: error }, "could not remove expired drafts"),
        );
    }, SWEEP_INTERVAL_MS);
    gate.sweeper.unref();
    const every = options.recoverAbandonedEveryMs;
    if (every) {
      gate.recoverer = setInterval(() => {
        gate
          .recoverAbandoned()
          .catch((error: unknown) =>
            options.logger.warn({ err: error }, "could not look for abandoned deliveries"),
          );
      }, every);
      gate.recoverer.unref();
    }
    return gate;
  }

  /** Stops the periodic sweep. */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.recoverer) clearInterval(this.recoverer);
  }

  /**
   * Removes drafts nobody confirmed within their TTL, unsent ones (cancelled, expired) a minute
   * after (journal and memory: an abandoned draft costs nothing after it expires), and delivered
   * or refused writes past their retention.
   */
  async sweep(): Promise<number> {
    const now = this.clock();
    let removed = 0;
    for (const intent of [...this.intents.values()]) {
      const expiredDraft = intent.state === "pending" && now > Date.parse(intent.expiresAt);
      const unsentGone =
        (intent.state === "cancelled" || intent.state === "expired") &&
        now - Date.parse(intent.updatedAt) > UNSENT_DRAFT_GRACE_MS;
      const finished = intent.state === "succeeded" || intent.state === "failed";
      const stale = finished && now - Date.parse(intent.updatedAt) > FINISHED_RETENTION_MS;
      if (!expiredDraft && !unsentGone && !stale) continue;
      if (this.queues.has(intent.id)) continue; // being confirmed right now
      await this.options.store.remove(intent.id);
      this.intents.delete(intent.id);
      removed++;
    }
    return removed;
  }

  get(id: string): Intent | undefined {
    return this.intents.get(idOf(id) ?? id);
  }

  /**
   * An intent by id or confirmation id, from memory or else from the store: another process
   * sharing the state directory (a replica, a restarted server) may have drafted it.
   */
  async find(id: string): Promise<Intent | undefined> {
    const key = idOf(id) ?? id;
    const known = this.intents.get(key);
    if (known) return known;
    const stored = await this.read(key);
    if (stored) this.intents.set(key, stored);
    return stored ?? undefined;
  }

  /** The stored intent; a damaged one (quarantined by the store) is refused in one sentence. */
  private async read(id: string): Promise<Intent | null> {
    try {
      return await this.options.store.read(id);
    } catch (error) {
      if (!(error instanceof DamagedIntent)) throw error;
      this.intents.delete(id);
      throw new GateRefusal(
        "damaged",
        error.setAside
          ? `The stored write ${id} is damaged (${error.problem}): it was set aside for a person to check and will not be sent; this call sent nothing. Draft the write again if it is still wanted.`
          : `This server cannot verify the stored write ${id}: ${error.problem}; this call sent nothing.`,
      );
    }
  }

  /** Stores a new pending intent with a fresh key and confirmation id. Nothing is sent. */
  async propose(
    draft: WriteDraft,
    caller: Caller,
    delegatedUser: DelegatedUser | null,
    channel: Channel,
  ): Promise<Intent> {
    const now = this.clock();
    const settings = this.options.api.settings;
    const user = describeUser(delegatedUser);
    // Drafts still held for this user: waiting, and the unsent ones kept a minute without
    // their body. Counting the latter keeps draft-and-cancel loops from filling the store.
    const awaiting = () =>
      [...this.intents.values()].filter(
        (i) =>
          i.caller.client === caller.client &&
          describeUser(i.delegatedUser) === user &&
          (i.state === "pending"
            ? now <= Date.parse(i.expiresAt)
            : (i.state === "cancelled" || i.state === "expired") &&
              now <= Date.parse(i.updatedAt) + UNSENT_DRAFT_GRACE_MS),
      );
    let pending = awaiting().length;
    if (pending >= this.options.maxPendingPerUser) {
      // With a shared store, other replicas may have confirmed or cancelled some of them since
      // this one drafted them: what it holds in memory would refuse drafts for their whole TTL.
      await Promise.all(awaiting().map((i) => this.refresh(i.id)));
      pending = awaiting().length;
    }
    if (pending >= this.options.maxPendingPerUser) {
      throw new GateRefusal(
        "full",
        `${pending} drafted writes already await confirmation for this user, or were cancelled or expired less than a minute ago; confirm some, or wait a minute, before drafting another. Nothing was drafted.`,
      );
    }
    const operation = this.options.api.operation(draft.operation);
    this.options.api.validate(
      operation,
      { path: draft.path, query: draft.query, body: draft.body },
      { delegatedUser },
    );
    const delegated = operation.capability !== null;
    const base = {
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
    const id = `cf_${randomBytes(12).toString("base64url")}`;
    const preview = displayed({
      ...draft.preview,
      // Spec part 5: only /users/me* routes act as the delegated user; every other write is
      // recorded by the API as the key's own (its service account), whoever asked for it.
      recorded_as: delegated
        ? `${user ?? "the delegated user"} (the user this server acts for)`
        : `the API key ${settings.keyId} (the integration's service account, not a person)`,
    });
    const intent: Intent = {
      ...base,
      id,
      confirmationId: confirmationIdOf({ ...base, id }),
      preview,
      state: "pending",
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.options.ttlMs).toISOString(),
      confirmedAt: null,
      updatedAt: new Date(now).toISOString(),
      attempts: 0,
      result: null,
      error: null,
      ...traceOf(activeTraceparent()),
    };
    const stored = await this.persist(intent);
    this.tell("draft", stored, "drafted");
    return stored;
  }

  /**
   * Delivers the stored request once the human said yes. A succeeded or failed intent gives its
   * recorded outcome and sends nothing; an uncertain one is sent again with the same key.
   */
  confirm(
    confirmationId: string,
    caller: Caller,
    delegatedUser: DelegatedUser | null,
    via: Channel,
  ): Promise<Intent> {
    return this.exclusive(idOf(confirmationId) ?? confirmationId, async () => {
      const id = await this.exactId(confirmationId);
      // Another replica may have moved it on since this one last looked.
      await this.refresh(id);
      const intent = this.owned(id, caller, delegatedUser);
      if (intent.state === "pending") this.checkChannel(intent, via);
      if (intent.state === "pending" && this.clock() > Date.parse(intent.expiresAt)) {
        await this.persist(unsent(intent, "expired")).catch(ignoreConflict);
        await this.refresh(id);
        this.tell("decision", intent, "expired");
      }
      const current = this.intents.get(id) as Intent;
      switch (current.state) {
        case "succeeded":
        case "failed":
          return current;
        case "expired":
          throw new GateRefusal(
            "expired",
            `Confirmation ${id} expired at ${current.expiresAt}; nothing was sent. Draft the write again.`,
          );
        case "cancelled":
          throw new GateRefusal("cancelled", `Confirmation ${id} was cancelled; nothing was sent.`);
        default:
          // The person's yes is on record before anything is sent, or nothing is sent.
          if (current.state === "pending") this.recordConfirmation(current);
          return this.deliver(current, caller.grants ?? null);
      }
    }).catch((error: unknown) => {
      throw this.unknownOutcome(error);
    });
  }

  /** Drops a pending intent. A write already confirmed cannot be taken back here. */
  cancel(
    confirmationId: string,
    caller: Caller,
    delegatedUser: DelegatedUser | null,
    via: Channel,
    /** declined: the person said no in a form; cancelled: dropped (or a form left unanswered). */
    how: "cancelled" | "declined" = "cancelled",
  ): Promise<Intent> {
    return this.exclusive(idOf(confirmationId) ?? confirmationId, async () => {
      const id = await this.exactId(confirmationId);
      await this.refresh(id);
      const intent = this.owned(id, caller, delegatedUser);
      if (intent.state === "cancelled") return intent;
      if (intent.state !== "pending") {
        throw new GateRefusal(
          "unknown",
          `Confirmation ${id} is ${intent.state}; only a pending write can be cancelled.`,
        );
      }
      this.checkChannel(intent, via);
      const cancelled = await this.persist(unsent(intent, "cancelled"));
      this.tell("decision", cancelled, how);
      return cancelled;
    });
  }

  /**
   * Finishes what a previous run left confirmed but unfinished (sending or uncertain), with the
   * same keys, for this API and key only.
   */
  async recover(): Promise<Intent[]> {
    return this.finish((i) => i.state === "sending" || i.state === "uncertain");
  }

  /**
   * With a shared store: finishes the writes another replica was sending when it died (its
   * lease has run out), with the same keys. Writes a live replica is sending are left to it.
   */
  async recoverAbandoned(): Promise<Intent[]> {
    // A replica whose link to the store is too slow to claim anything leaves it to the others.
    if (this.clock() < this.storeTroubleUntil) return [];
    // Only the intents whose lease has lapsed are read: the look costs the same with five or
    // five thousand stored.
    const lapsed = new Set<string>();
    let abandoned: Intent[];
    try {
      abandoned = await this.options.store.abandoned();
    } catch (error) {
      if (error instanceof StoreUnavailable)
        this.storeTroubleUntil = this.clock() + STORE_TROUBLE_PAUSE_MS;
      throw error;
    }
    for (const stored of abandoned) {
      lapsed.add(stored.id);
      const known = this.intents.get(stored.id);
      if (!known || (known.revision ?? 0) < (stored.revision ?? 0))
        this.intents.set(stored.id, stored);
    }
    return this.finish((i) => lapsed.has(i.id) && i.state === "sending" && !this.queues.has(i.id));
  }

  private async finish(which: (intent: Intent) => boolean): Promise<Intent[]> {
    const { baseUrl, keyId } = this.options.api.settings;
    const unfinished = [...this.intents.values()].filter(
      (i) =>
        which(i) &&
        i.confirmedAt !== null &&
        i.upstream.baseUrl === baseUrl &&
        i.upstream.keyId === keyId,
    );
    if (unfinished.length > 0)
      this.options.logger.info({ intents: unfinished.length }, "finishing confirmed writes");
    // Each on its own: one that cannot be finished never holds the others back.
    const settled = await Promise.allSettled(
      unfinished.map((i) =>
        // One another live process is delivering is left to it: no waiting here.
        // Counted against the share of the client that drafted it, as its own call would be.
        asPrincipal(i.caller.client, () =>
          this.exclusive(i.id, async () => {
            this.recovering.add(i.id);
            try {
              return await this.deliver(this.intents.get(i.id) as Intent, null, 0);
            } finally {
              this.recovering.delete(i.id);
            }
          }),
        ),
      ),
    );
    return settled.flatMap((outcome, n) => {
      if (outcome.status === "fulfilled") return [outcome.value];
      this.options.logger.error(
        { intent: unfinished[n]?.id, err: outcome.reason },
        "could not finish a confirmed write",
      );
      return [];
    });
  }

  /** Pending or unfinished intents, for metrics and tests. */
  count(state: Intent["state"]): number {
    return [...this.intents.values()].filter((i) => i.state === state).length;
  }

  /**
   * Takes the delivery lease and sends, or else waits for whoever holds it: however many
   * processes confirm one intent at once, one request is on the wire at a time, and a lease
   * left by a dead process is taken over after it runs out (same Idempotency-Key).
   */
  private async deliver(seen: Intent, grants: Grants | null, waitMs?: number): Promise<Intent> {
    const deadline =
      this.clock() + (waitMs ?? this.options.waitForOtherDeliveryMs ?? this.leaseMs() * 2);
    let intent = seen;
    for (;;) {
      if (!["pending", "sending", "uncertain"].includes(intent.state)) return intent;
      if (intent.state === "pending" && this.clock() > Date.parse(intent.expiresAt)) return intent;
      const refused = this.undeliverable(intent, grants);
      if (refused) return this.refuse(intent, refused);
      let claimed: Intent | null;
      try {
        claimed = await this.options.store.replace(
          this.stamped({
            ...intent,
            state: "sending",
            confirmedAt: intent.confirmedAt ?? new Date(this.clock()).toISOString(),
            attempts: intent.attempts + 1,
          }),
          intent.revision ?? 0,
          { owner: this.owner, ms: this.leaseMs() },
        );
      } catch (error) {
        if (error instanceof StoreUnavailable && error.outcomeUnknown)
          return this.claimUnknown(intent, error);
        throw error;
      }
      if (claimed) {
        this.intents.set(claimed.id, claimed);
        return this.send(claimed);
      }
      // Another process changed it or is delivering it: look again shortly.
      if (this.clock() > deadline) return (await this.refresh(intent.id)) ?? intent;
      await sleep(POLL_MS);
      intent = (await this.refresh(intent.id)) ?? intent;
    }
  }

  /**
   * Why this write must not leave now, whoever asks: its route no longer stays under the API's
   * base path, or this server would not offer its operation to the caller (re-checked on every
   * delivery, on whichever replica delivers). The grants are the confirming caller's, else
   * those recorded with the draft.
   */
  private undeliverable(intent: Intent, grants: Grants | null): string | null {
    const route = intent.route?.path;
    if (route !== undefined && !staysUnderBase(this.options.api.settings.baseUrl, route))
      return `its route ${neutralise(route, 200)} leaves the API's base address`;
    return this.options.undeliverable?.(intent, grants ?? intent.caller.grants ?? null) ?? null;
  }

  /** Records that a write will not be sent, and why: the person is told nothing went out. */
  private async refuse(intent: Intent, why: string): Promise<Intent> {
    this.options.logger.warn(
      { intent: intent.id, op: intent.operation, why },
      "a confirmed write was not delivered: this server does not offer it",
    );
    const refused = await this.persist({
      ...intent,
      state: "failed",
      error: {
        code: "not_offered",
        message: `This server does not send ${intent.operation} for this caller now: ${why}; it was not sent.`,
      },
    });
    this.tell("delivery", refused, "refused", why);
    return refused;
  }

  /**
   * The claim was sent to the store and no answer came: it may have been recorded, and then
   * this write goes out (here or on another replica, with its one key) once the lease is given
   * up. Nothing here may say it was not sent; the lease is given up at once, so that a slow link
   * never keeps the others from finishing it, and this replica stops looking for abandoned
   * deliveries for a while.
   */
  private claimUnknown(intent: Intent, error: StoreUnavailable): Intent {
    this.storeTroubleUntil = this.clock() + STORE_TROUBLE_PAUSE_MS;
    this.options.store
      .relinquish(intent.id, this.owner)
      .catch((failure: unknown) =>
        this.options.logger.warn(
          { intent: intent.id, err: (failure as Error).message },
          "could not give up a delivery lease; it lapses on its own",
        ),
      );
    this.options.logger.warn(
      { intent: intent.id, err: error.message },
      "the store did not answer a delivery claim; the write may go out once the lease is given up",
    );
    this.tell("delivery", intent, "uncertain", error.message);
    return {
      ...intent,
      state: "uncertain",
      error: {
        code: "store_unanswered",
        message: `${error.message} in time after this write was claimed for sending: it may have been sent, or may still be sent shortly (never twice: it keeps its one Idempotency-Key). Ask again with the same confirmation id to learn what became of it.`,
      },
    };
  }

  /**
   * A store failure during a confirmation, as one true sentence: this call sent nothing, and
   * what became of the write is not known until the store answers (an earlier confirmation may
   * have sent it).
   */
  private unknownOutcome(error: unknown): unknown {
    if (!(error instanceof StoreUnavailable)) return error;
    return new GateRefusal(
      "store",
      `${error.message}: this confirmation sent nothing, and what became of the write is not known until the store answers; ask again with the same confirmation id once it is back (the write can never be sent twice).`,
    );
  }

  /** Sends a claimed intent, keeping its lease alive meanwhile, and records the outcome. */
  private async send(intent: Intent): Promise<Intent> {
    let current = intent;
    const lease = { owner: this.owner, ms: this.leaseMs() };
    const heartbeat = setInterval(
      () => {
        this.options.store.renew(intent.id, lease).then(
          (held) => {
            if (!held)
              this.options.logger.warn({ intent: intent.id }, "lost the delivery lease mid-send");
          },
          (error: unknown) =>
            this.options.logger.warn({ intent: intent.id, err: error }, "could not renew a lease"),
        );
      },
      Math.max(100, Math.floor(lease.ms / 3)),
    );
    heartbeat.unref();
    // In the draft's trace, on whichever replica (or run) sends it; linked to the request that
    // confirmed it, when that is another request.
    const confirming = activeTraceparent();
    const span = {
      parent: intent.trace,
      links: confirming !== intent.trace ? [confirming] : [],
      attributes: {
        "portfolio.intent.id": intent.id,
        "portfolio.operation.id": intent.operation,
        "portfolio.delivery.attempt": intent.attempts,
        "portfolio.recovery": this.recovering.has(intent.id),
      },
    };
    try {
      const result = await traced("write delivery", span, () =>
        this.options.api.send(
          this.routeOf(intent),
          { path: intent.path, query: intent.query, body: intent.body },
          {
            idempotencyKey: intent.idempotencyKey,
            delegatedUser: intent.delegatedUser,
            // Checked when it was drafted; what the person approved is sent as it is.
            prevalidated: true,
          },
        ),
      );
      current = {
        ...current,
        state: "succeeded",
        result: withoutShareTokens(result.data),
        error: null,
      };
    } catch (error) {
      current = { ...current, ...this.unsent(intent, error) };
    } finally {
      clearInterval(heartbeat);
    }
    return this.record(intent, current);
  }

  /**
   * What a failed attempt makes of the write. Uncertain when the outcome is unknown (no answer,
   * a 5xx, a 429, a timeout): sent again with the same key. Failed when the API refused it for
   * good. Succeeded when the API applied it and only its answer was too large to read.
   */
  private unsent(intent: Intent, error: unknown): Pick<Intent, "state" | "result" | "error"> {
    const e = error instanceof ApiError ? error : null;
    if (e?.code === "answer_too_large" && e.status !== undefined && e.status < 300)
      return {
        state: "succeeded",
        result: { answer_not_read: e.detail ?? e.message },
        error: null,
      };
    // A 401 here means the bearer was refused even after one renewal (it expired again on the
    // way): the API refused before doing anything, and the next confirmation may well pass.
    const bearerRefused = e?.status === 401 && e.operationId === intent.operation;
    // A 409 for the same key still in progress (a retry racing a slow first attempt) says
    // nothing of the outcome yet: the next confirmation resends with the same key.
    const uncertain =
      !e ||
      UNCERTAIN_CODES.has(e.code) ||
      (e.code === "answer_too_large" && (e.status === undefined || e.status >= 500)) ||
      e.status === 408 ||
      e.status === 429 ||
      bearerRefused ||
      isInProgressConflict(e.status, e.reasonCode, e.retryAfterSeconds);
    const state = uncertain ? "uncertain" : "failed";
    this.options.logger.warn(
      { intent: intent.id, op: intent.operation, state, code: e?.code ?? "internal_error" },
      "write not confirmed by the API",
    );
    return {
      state,
      result: intent.result,
      error: {
        code: e?.code ?? "internal_error",
        message: userMessage(error, "the write"),
        ...(e?.status ? { status: e.status } : {}),
        ...(e?.reasonCode ? { reasonCode: e.reasonCode } : {}),
      },
    };
  }

  /** Records a delivery's outcome under this process's lease; the outcome is the truth to tell. */
  private async record(intent: Intent, current: Intent): Promise<Intent> {
    let settled: Intent | null;
    try {
      settled = await this.options.store.settle(this.stamped(current), this.owner);
    } catch (error) {
      // The request went out and the API answered: that outcome is the truth to tell. The
      // journal still says "sending" under this lease; once it lapses another process sends it
      // again with the same key, and the API replays its first answer.
      this.options.logger.warn(
        { intent: intent.id, state: current.state, err: (error as Error).message },
        "the outcome of a delivered write could not be recorded; it will be resent with the same key",
      );
      this.intents.set(current.id, current);
      this.tellDelivered(current);
      return current;
    }
    if (settled) {
      this.intents.set(settled.id, settled);
      this.tellDelivered(settled);
      return settled;
    }
    // Our lease ran out and another process took the delivery over (same key): its outcome wins.
    this.options.logger.warn(
      { intent: intent.id },
      "a delivery outlived its lease; the process that took it over records the outcome",
    );
    return (await this.refresh(intent.id)) ?? current;
  }

  private leaseMs(): number {
    return this.options.deliveryLeaseMs ?? DELIVERY_LEASE_MS;
  }

  private stamped(intent: Intent): Intent {
    return { ...intent, updatedAt: new Date(this.clock()).toISOString() };
  }

  /**
   * The latest known state of an intent: the store's when another process wrote it since (a
   * higher revision), else what this process holds. Null when neither has it.
   */
  private async refresh(id: string): Promise<Intent | null> {
    const stored = await this.read(id);
    const known = this.intents.get(id);
    if (!stored) return known ?? null;
    if (known && (known.revision ?? 0) >= (stored.revision ?? 0)) return known;
    this.intents.set(id, stored);
    return stored;
  }

  /**
   * Where a confirmed write goes: the route recorded when it was drafted. The operation's
   * current entry only lends what does not change the request (how to read the answer).
   */
  private routeOf(intent: Intent): Operation {
    const current = this.options.api.has(intent.operation)
      ? this.options.api.operation(intent.operation)
      : null;
    const recorded = intent.route;
    if (current && !recorded) return current; // drafted before routes were recorded
    if (!recorded)
      throw new ApiError(
        `${intent.operation} is no longer offered and its route was not recorded.`,
        {
          code: "not_offered",
          operationId: intent.operation,
        },
      );
    return {
      id: intent.operation,
      scope: current?.scope ?? "",
      kind: "write",
      family: current?.family ?? "",
      summary: current?.summary ?? intent.preview.action,
      params: null,
      query: null,
      body: null,
      response: current?.response ?? "json",
      contract: current?.contract ?? null,
      curated: current?.curated ?? false,
      ...recorded,
    };
  }

  /**
   * The journal id inside a confirmation id, once the whole string is the one the draft
   * returned: what the client showed for approval must be the write that is sent.
   */
  private async exactId(confirmationId: string): Promise<string> {
    const id = idOf(confirmationId) ?? confirmationId;
    const intent = await this.find(id);
    if (!intent) {
      throw new GateRefusal(
        "unknown",
        `No drafted write has the confirmation id ${neutralise(confirmationId, 80)} (drafts are removed once they expire); this call sent nothing. Draft the write again if it is still wanted.`,
      );
    }
    if ((intent.confirmationId ?? intent.id) !== confirmationId) {
      throw new GateRefusal(
        "mismatch",
        "confirmation_id must be passed exactly as the draft returned it, the write spelled out and the id in brackets; this call sent nothing.",
      );
    }
    return id;
  }

  private owned(id: string, caller: Caller, delegatedUser: DelegatedUser | null): Intent {
    const intent = this.intents.get(id);
    if (!intent)
      throw new GateRefusal(
        "unknown",
        `No drafted write has the id ${id}; this call sent nothing.`,
      );
    if (
      intent.caller.client !== caller.client ||
      describeUser(intent.delegatedUser) !== describeUser(delegatedUser)
    ) {
      // Another client's or another user's write: refused, and not described.
      this.tell("decision", intent, "refused", "another client's or user's write");
      throw new GateRefusal(
        "foreign",
        `The write ${id} was drafted by another client or for another user, who alone can confirm or cancel it; this call sent nothing.`,
      );
    }
    return intent;
  }

  /**
   * A pending write is decided only by the channel it was drafted for: a card's draft by the
   * card's buttons, a form's by the form. Once decided, asking again only reports (or resends,
   * with the same key, what is uncertain): that is no new decision.
   */
  private checkChannel(intent: Intent, via: Channel): void {
    if (intent.channel === via) return;
    this.tell("decision", intent, "refused", `asked by ${via}, drafted for ${intent.channel}`);
    throw new GateRefusal(
      "channel",
      `The write ${intent.id} waits for the person's answer ${CHANNEL_WORDS[intent.channel]}, and only there can it be confirmed or cancelled; this call sent nothing.`,
    );
  }

  /**
   * Records the person's yes. When it cannot be recorded (the audit trail's disk is full, its
   * file unwritable), the write is not sent: a confirmation nobody could account for later is
   * not acted on.
   */
  private recordConfirmation(intent: Intent): void {
    try {
      this.options.observer?.write?.(writeEvent("decision", intent, "confirmed"));
    } catch (error) {
      this.options.logger.error(
        { intent: intent.id, err: (error as Error).message },
        "a confirmation could not be recorded; the write was not sent",
      );
      throw new GateRefusal(
        "audit",
        `This write was not sent: its confirmation could not be recorded (${(error as Error).message}), and this server acts on no confirmation it cannot account for. Nothing was sent; confirm again once the audit trail can be written.`,
      );
    }
  }

  /** What a delivery came to, as the records name it (a write finished for another is recovered). */
  private tellDelivered(intent: Intent): void {
    const outcome =
      intent.state === "succeeded"
        ? this.recovering.has(intent.id)
          ? "recovered"
          : "delivered"
        : intent.state === "failed"
          ? "refused"
          : "uncertain";
    this.tell("delivery", intent, outcome, intent.error?.message ?? null);
  }

  /** Tells the observers of a step; a record that cannot be made is logged (the sink counts it). */
  private tell(
    step: "draft" | "decision" | "delivery",
    intent: Intent,
    outcome: string,
    reason: string | null = null,
  ): void {
    try {
      this.options.observer?.write?.(writeEvent(step, intent, outcome, reason));
    } catch (error) {
      this.options.logger.error(
        { intent: intent.id, step, outcome, err: (error as Error).message },
        "a write's step could not be recorded",
      );
    }
  }

  /** Stores a change made from the revision this process last saw; refused if another came first. */
  private async persist(intent: Intent): Promise<Intent> {
    const saved = await this.options.store.replace(this.stamped(intent), intent.revision ?? 0);
    if (!saved) {
      await this.refresh(intent.id);
      throw new GateRefusal(
        "changed",
        `The write ${intent.id} was changed by another server process at the same moment; nothing was sent by this call. Look at it again (confirm or cancel once more).`,
      );
    }
    this.intents.set(saved.id, saved);
    return saved;
  }

  /** Runs one step per intent at a time: two confirmations of one write are one delivery. */
  private exclusive<T>(id: string, step: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(id) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(step);
    this.queues.set(id, next);
    void next
      .finally(() => {
        if (this.queues.get(id) === next) this.queues.delete(id);
      })
      .catch(() => {});
    return next;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An expiry another process already recorded (or overtook) is no reason to fail. */
function ignoreConflict(error: unknown): void {
  if (!(error instanceof GateRefusal && error.reason === "changed")) throw error;
}

export { describeUser };

const CHANNEL_WORDS: Record<Channel, string> = {
  form: "in the confirmation form the client showed",
  "input-required": "in the confirmation form the client showed",
  card: "in the confirmation card shown with the draft",
  "two-step": "in the chat (confirm_write or cancel_write)",
};

/** The draft's trace context, kept with the intent (and so covered by its MAC). */
function traceOf(traceparent: string | null): Pick<Intent, "trace"> {
  return traceparent ? { trace: traceparent } : {};
}

/** A draft that will never be sent: its body and field values go, its digest stays. */
function unsent(intent: Intent, state: "cancelled" | "expired"): Intent {
  return { ...intent, state, body: null, preview: { ...intent.preview, fields: {} } };
}

/**
 * The preview with every untrusted string neutralised; the one-line parts are capped here,
 * field values when they are shown (previewText), so the model still gets them whole.
 */
function displayed(preview: Preview): Preview {
  return {
    ...preview,
    // Tools quote the untrusted parts of these (quote()); here they are kept to one line.
    // Whole, as long as a person can read them (a name is shown whole, however long).
    action: capped(flatten(preview.action), SHOWN_VALUE_MAX),
    target: capped(flatten(preview.target), SHOWN_VALUE_MAX),
    recorded_as: capped(flatten(preview.recorded_as), SHOWN_VALUE_MAX),
    fields: Object.fromEntries(
      Object.entries(preview.fields).map(([name, value]) => [
        neutralise(name, 64),
        typeof value === "string" ? neutralise(value) : neutraliseDeep(value),
      ]),
    ),
    ...(preview.warnings ? { warnings: preview.warnings.map((w) => flatten(w)) } : {}),
  };
}
