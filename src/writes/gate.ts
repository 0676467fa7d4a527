import { randomBytes, randomUUID } from "node:crypto";
import type { OperationId } from "../api/catalogue.js";
import type { ApiClient } from "../api/client.js";
import { ApiError } from "../api/errors.js";
import type { DelegatedUser } from "../config.js";
import type { Logger } from "../log.js";
import { UserFacingError } from "../tools/errors.js";
import { withoutShareTokens } from "../tools/present.js";
import { type Caller, type Intent, intentDigest, type Preview } from "./intent.js";
import type { IntentStore } from "./journal.js";

/** A write as a tool drafts it: the exact request and how to show it. */
export interface WriteDraft {
  operation: OperationId;
  path: Record<string, unknown>;
  body: unknown;
  preview: Omit<Preview, "acting_for">;
}

export type RefusalReason = "unknown" | "foreign" | "expired" | "cancelled";

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

const FINISHED_RETENTION_MS = 7 * 86_400_000;
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
  clock?: () => number;
}

/**
 * The confirmation gate and the exactly-once delivery behind it. An intent is stored before
 * anyone is asked; a confirmed intent is sent with its own Idempotency-Key on every attempt,
 * after a restart included; a succeeded intent is never sent again.
 */
export class WriteGate {
  private readonly intents = new Map<string, Intent>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly clock: () => number;

  private constructor(private readonly options: GateOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /** Loads the journal, expires stale drafts and forgets old finished intents. */
  static async open(options: GateOptions): Promise<WriteGate> {
    const gate = new WriteGate(options);
    const now = gate.clock();
    for (const intent of await options.store.load()) {
      const finished = ["succeeded", "failed", "cancelled", "expired"].includes(intent.state);
      if (finished && now - Date.parse(intent.updatedAt) > FINISHED_RETENTION_MS) {
        await options.store.remove(intent.id);
        continue;
      }
      gate.intents.set(intent.id, intent);
    }
    return gate;
  }

  get(id: string): Intent | undefined {
    return this.intents.get(id);
  }

  /** Stores a new pending intent with a fresh key and confirmation id. Nothing is sent. */
  async propose(
    draft: WriteDraft,
    caller: Caller,
    delegatedUser: DelegatedUser | null,
  ): Promise<Intent> {
    const now = this.clock();
    const settings = this.options.api.settings;
    const base = {
      operation: draft.operation,
      path: draft.path,
      body: draft.body,
      delegatedUser,
      caller,
      upstream: { baseUrl: settings.baseUrl, keyId: settings.keyId },
      idempotencyKey: `pmcp-${randomUUID()}`,
    };
    const intent: Intent = {
      ...base,
      id: `cf_${randomBytes(12).toString("base64url")}`,
      digest: intentDigest(base),
      preview: { ...draft.preview, acting_for: describeUser(delegatedUser) },
      state: "pending",
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.options.ttlMs).toISOString(),
      confirmedAt: null,
      updatedAt: new Date(now).toISOString(),
      attempts: 0,
      result: null,
      error: null,
    };
    await this.persist(intent);
    return intent;
  }

  /**
   * Delivers the stored request once the human said yes. A succeeded or failed intent gives its
   * recorded outcome and sends nothing; an uncertain one is sent again with the same key.
   */
  confirm(id: string, caller: Caller, delegatedUser: DelegatedUser | null): Promise<Intent> {
    return this.exclusive(id, async () => {
      const intent = this.owned(id, caller, delegatedUser);
      if (intent.state === "pending" && this.clock() > Date.parse(intent.expiresAt)) {
        await this.persist({ ...intent, state: "expired" });
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
          return this.deliver(
            current.state === "pending"
              ? { ...current, confirmedAt: new Date(this.clock()).toISOString() }
              : current,
          );
      }
    });
  }

  /** Drops a pending intent. A write already confirmed cannot be taken back here. */
  cancel(id: string, caller: Caller, delegatedUser: DelegatedUser | null): Promise<Intent> {
    return this.exclusive(id, async () => {
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
    const { baseUrl, keyId } = this.options.api.settings;
    const unfinished = [...this.intents.values()].filter(
      (i) =>
        (i.state === "sending" || i.state === "uncertain") &&
        i.confirmedAt !== null &&
        i.upstream.baseUrl === baseUrl &&
        i.upstream.keyId === keyId,
    );
    if (unfinished.length > 0)
      this.options.logger.info({ intents: unfinished.length }, "finishing confirmed writes");
    return Promise.all(
      unfinished.map((i) =>
        this.exclusive(i.id, () => this.deliver(this.intents.get(i.id) as Intent)),
      ),
    );
  }

  /** Pending or unfinished intents, for metrics and tests. */
  count(state: Intent["state"]): number {
    return [...this.intents.values()].filter((i) => i.state === state).length;
  }

  private async deliver(intent: Intent): Promise<Intent> {
    if (intentDigest(intent) !== intent.digest) {
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
    let current = await this.persist({
      ...intent,
      state: "sending",
      attempts: intent.attempts + 1,
    });
    try {
      const result = await this.options.api.call(
        intent.operation,
        { path: intent.path, body: intent.body } as never,
        { idempotencyKey: intent.idempotencyKey, delegatedUser: intent.delegatedUser },
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
      const uncertain = !e || UNCERTAIN_CODES.has(e.code) || e.status === 408 || bearerRefused;
      current = {
        ...current,
        state: uncertain ? "uncertain" : "failed",
        error: {
          code: e?.code ?? "internal_error",
          message: e?.message ?? String(error),
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
    }
    return this.persist(current);
  }

  private owned(id: string, caller: Caller, delegatedUser: DelegatedUser | null): Intent {
    const intent = this.intents.get(id);
    if (!intent)
      throw new GateRefusal("unknown", `No write awaits confirmation ${id}; nothing was sent.`);
    if (
      intent.caller.sessionId !== caller.sessionId ||
      describeUser(intent.delegatedUser) !== describeUser(delegatedUser)
    ) {
      // Another session's or another user's write: refused, and not described.
      throw new GateRefusal(
        "foreign",
        `Confirmation ${id} belongs to another session or user; nothing was sent.`,
      );
    }
    return intent;
  }

  private async persist(intent: Intent): Promise<Intent> {
    const saved = { ...intent, updatedAt: new Date(this.clock()).toISOString() };
    await this.options.store.save(saved);
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

export function describeUser(user: DelegatedUser | null): string | null {
  if (!user) return null;
  return "email" in user ? user.email : `user id ${user.id}`;
}
