import { randomBytes, randomUUID } from "node:crypto";
import type { Operation } from "../api/catalogue.js";
import type { ApiClient } from "../api/client.js";
import { withoutShareTokens } from "../api/response.js";
import type { DelegatedUser } from "../config.js";
import { UserFacingError, userMessage } from "../errors.js";
import { ApiError, isInProgressConflict } from "../http/errors.js";
import type { Logger } from "../log.js";
import { capped, firstWords, flatten, neutralise } from "./display.js";
import { type Caller, type Intent, intentDigest, type Preview } from "./intent.js";
import { FINISHED_RETENTION_MS, type IntentStore } from "./journal.js";

/** A write as a tool drafts it: the exact request and how to show it. */
export interface WriteDraft {
  operation: string;
  path: Record<string, unknown>;
  /** Rare for writes, but the contract may give one a query. */
  query?: Record<string, unknown>;
  body: unknown;
  /** Untrusted parts (names, values) are neutralised by the gate before anyone sees them. */
  preview: Omit<Preview, "recorded_as">;
  /** The main text's first words, for the spelled-out confirmation id (a note's content). */
  excerpt?: string;
}

export type RefusalReason =
  | "unknown"
  | "foreign"
  | "expired"
  | "cancelled"
  | "mismatch"
  | "full"
  | "changed";

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
const CONFIRMATION_ID_MAX = 240;
const ID_IN_BRACKETS = /\[(cf_[A-Za-z0-9_-]{8,64})\]$/;

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
}

const DELIVERY_LEASE_MS = 15_000;
const POLL_MS = 50;

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
   * Removes drafts nobody confirmed within their TTL (journal and memory: an abandoned draft
   * costs nothing after it expires) and finished intents past their retention.
   */
  async sweep(): Promise<number> {
    const now = this.clock();
    let removed = 0;
    for (const intent of [...this.intents.values()]) {
      const expiredDraft =
        (intent.state === "pending" && now > Date.parse(intent.expiresAt)) ||
        intent.state === "expired";
      const finished = ["succeeded", "failed", "cancelled"].includes(intent.state);
      const stale = finished && now - Date.parse(intent.updatedAt) > FINISHED_RETENTION_MS;
      if (!expiredDraft && !stale) continue;
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
    const stored = await this.options.store.read(key);
    if (stored) this.intents.set(key, stored);
    return stored ?? undefined;
  }

  /** Stores a new pending intent with a fresh key and confirmation id. Nothing is sent. */
  async propose(
    draft: WriteDraft,
    caller: Caller,
    delegatedUser: DelegatedUser | null,
  ): Promise<Intent> {
    const now = this.clock();
    const settings = this.options.api.settings;
    const user = describeUser(delegatedUser);
    const awaiting = () =>
      [...this.intents.values()].filter(
        (i) =>
          i.state === "pending" &&
          now <= Date.parse(i.expiresAt) &&
          i.caller.client === caller.client &&
          describeUser(i.delegatedUser) === user,
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
        `${pending} drafted writes already await confirmation for this user; confirm or cancel some (or let them expire) before drafting another. Nothing was drafted.`,
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
      delegatedUser,
      caller,
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
      confirmationId: spelledOut(preview, draft.excerpt, id),
      digest: intentDigest(base),
      preview,
      state: "pending",
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.options.ttlMs).toISOString(),
      confirmedAt: null,
      updatedAt: new Date(now).toISOString(),
      attempts: 0,
      result: null,
      error: null,
    };
    return this.persist(intent);
  }

  /**
   * Delivers the stored request once the human said yes. A succeeded or failed intent gives its
   * recorded outcome and sends nothing; an uncertain one is sent again with the same key.
   */
  confirm(
    confirmationId: string,
    caller: Caller,
    delegatedUser: DelegatedUser | null,
  ): Promise<Intent> {
    return this.exclusive(idOf(confirmationId) ?? confirmationId, async () => {
      const id = await this.exactId(confirmationId);
      // Another replica may have moved it on since this one last looked.
      await this.refresh(id);
      const intent = this.owned(id, caller, delegatedUser);
      if (intent.state === "pending" && this.clock() > Date.parse(intent.expiresAt)) {
        await this.persist({ ...intent, state: "expired" }).catch(ignoreConflict);
        await this.refresh(id);
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
          return this.deliver(current);
      }
    });
  }

  /** Drops a pending intent. A write already confirmed cannot be taken back here. */
  cancel(
    confirmationId: string,
    caller: Caller,
    delegatedUser: DelegatedUser | null,
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
      const cancelled: Intent = { ...intent, state: "cancelled" };
      await this.persist(cancelled);
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
    // Only the intents whose lease has lapsed are read: the look costs the same with five or
    // five thousand stored.
    const lapsed = new Set<string>();
    for (const stored of await this.options.store.abandoned()) {
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
        this.exclusive(i.id, () => this.deliver(this.intents.get(i.id) as Intent, 0)),
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
  private async deliver(seen: Intent, waitMs?: number): Promise<Intent> {
    const deadline =
      this.clock() + (waitMs ?? this.options.waitForOtherDeliveryMs ?? this.leaseMs() * 2);
    let intent = seen;
    for (;;) {
      if (!["pending", "sending", "uncertain"].includes(intent.state)) return intent;
      if (intent.state === "pending" && this.clock() > Date.parse(intent.expiresAt)) return intent;
      if (intentDigest(intent) !== intent.digest) return this.refuseTampered(intent);
      const claimed = await this.options.store.replace(
        this.stamped({
          ...intent,
          state: "sending",
          confirmedAt: intent.confirmedAt ?? new Date(this.clock()).toISOString(),
          attempts: intent.attempts + 1,
        }),
        intent.revision ?? 0,
        { owner: this.owner, ms: this.leaseMs() },
      );
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

  private async refuseTampered(intent: Intent): Promise<Intent> {
    // The stored request no longer matches what was confirmed: never send it.
    return this.persist({
      ...intent,
      state: "failed",
      error: {
        code: "tampered",
        message: "The stored write changed after it was drafted; it was not sent.",
      },
    });
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
    try {
      const result = await this.options.api.send(
        this.routeOf(intent),
        { path: intent.path, query: intent.query, body: intent.body },
        {
          idempotencyKey: intent.idempotencyKey,
          delegatedUser: intent.delegatedUser,
          // Checked when it was drafted; what the person approved is sent as it is.
          prevalidated: true,
        },
      );
      current = {
        ...current,
        state: "succeeded",
        result: withoutShareTokens(result.data),
        error: null,
      };
    } catch (error) {
      const e = error instanceof ApiError ? error : null;
      // A 401 here means the bearer was refused even after one renewal (it expired again on the
      // way): the API refused before doing anything, and the next confirmation may well pass.
      const bearerRefused = e?.status === 401 && e.operationId === intent.operation;
      // A 409 for the same key still in progress (a retry racing a slow first attempt) says
      // nothing of the outcome yet: the next confirmation resends with the same key.
      const uncertain =
        !e ||
        UNCERTAIN_CODES.has(e.code) ||
        e.status === 408 ||
        bearerRefused ||
        isInProgressConflict(e.status, e.reasonCode, e.retryAfterSeconds);
      current = {
        ...current,
        state: uncertain ? "uncertain" : "failed",
        error: {
          code: e?.code ?? "internal_error",
          message: userMessage(error, "the write"),
          ...(e?.status ? { status: e.status } : {}),
          ...(e?.reasonCode ? { reasonCode: e.reasonCode } : {}),
        },
      };
      this.options.logger.warn(
        {
          intent: intent.id,
          op: intent.operation,
          state: current.state,
          code: current.error?.code,
        },
        "write not confirmed by the API",
      );
    } finally {
      clearInterval(heartbeat);
    }
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
      return current;
    }
    if (settled) {
      this.intents.set(settled.id, settled);
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
    const stored = await this.options.store.read(id);
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
      throw new GateRefusal(
        "foreign",
        `The write ${id} was drafted by another client or for another user, who alone can confirm or cancel it; this call sent nothing.`,
      );
    }
    return intent;
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

export function describeUser(user: DelegatedUser | null): string | null {
  if (!user) return null;
  return "email" in user ? user.email : `user id ${user.id}`;
}

/** `cf_…` from a spelled-out confirmation id, or null. */
function idOf(confirmationId: string): string | null {
  return ID_IN_BRACKETS.exec(confirmationId)?.[1] ?? null;
}

/**
 * The preview with every untrusted string neutralised; the one-line parts are capped here,
 * field values when they are shown (previewText), so the model still gets them whole.
 */
function displayed(preview: Preview): Preview {
  return {
    ...preview,
    // Tools quote the untrusted parts of these (quote()); here they are kept to one line.
    action: capped(flatten(preview.action), 200),
    target: capped(flatten(preview.target), 400),
    recorded_as: capped(flatten(preview.recorded_as), 300),
    fields: Object.fromEntries(
      Object.entries(preview.fields).map(([name, value]) => [
        neutralise(name, 64),
        typeof value === "string" ? neutralise(value, Number.POSITIVE_INFINITY) : value,
      ]),
    ),
  };
}

/** "Create a follow-up note: operation «Les Terrasses» — «Le promoteur…» [cf_…]" */
function spelledOut(preview: Preview, excerpt: string | undefined, id: string): string {
  const words = excerpt ? ` — «${firstWords(excerpt)}»` : "";
  const text = `${preview.action}: ${preview.target}${words}`;
  const room = CONFIRMATION_ID_MAX - id.length - 3;
  const short = [...text].length > room ? `${[...text].slice(0, room - 1).join("")}…` : text;
  return `${short} [${id}]`;
}
