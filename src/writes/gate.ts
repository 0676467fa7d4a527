import type { ApiClient } from "../api/client.js";
import type { Observer } from "../events.js";
import type { Logger } from "../log.js";
import { IntentBook } from "./book.js";
import { idOf } from "./confirmation-id.js";
import { Deciding } from "./deciding.js";
import { Delivery } from "./delivery.js";
import { describeUser } from "./describe-user.js";
import { Drafting, type WriteDraft } from "./drafting.js";
import type { Grants, Intent } from "./intent.js";
import type { IntentStore } from "./journal.js";
import { DeliveryLeases } from "./lease.js";
import { Recorder } from "./recorder.js";
import { Recovery } from "./recovery.js";
import { Sender } from "./sending.js";
import { Upkeep } from "./upkeep.js";

export { GateRefusal, type RefusalReason } from "./refusal.js";
export type { WriteDraft };
export { describeUser };

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

/**
 * The confirmation gate and the exactly-once delivery behind it. An intent is stored before
 * anyone is asked (drafting.ts); the person's answer comes by the channel it was drafted for
 * (deciding.ts); a confirmed intent is sent with its own Idempotency-Key on every attempt
 * (delivery.ts, sending.ts), after a restart or a replica's death included (recovery.ts); a
 * succeeded intent is never sent again; what nobody will send leaves the journal (upkeep.ts).
 */
export class WriteGate {
  private constructor(
    private readonly book: IntentBook,
    private readonly drafting: Drafting,
    private readonly deciding: Deciding,
    private readonly recovery: Recovery,
    private readonly upkeep: Upkeep,
  ) {}

  /** Loads the journal, drops expired drafts and forgets old finished intents. */
  static async open(options: GateOptions): Promise<WriteGate> {
    const { store, api, logger } = options;
    const book = new IntentBook(store, options.clock ?? Date.now);
    const recorder = new Recorder(options.observer, logger);
    const leaseMs = options.deliveryLeaseMs ?? DELIVERY_LEASE_MS;
    const leases = new DeliveryLeases(store, logger, book.clock, leaseMs);
    const delivery = new Delivery({
      book,
      leases,
      sender: new Sender({ book, leases, api, recorder, logger }),
      recorder,
      logger,
      api,
      waitForOtherMs: options.waitForOtherDeliveryMs ?? leaseMs * 2,
      undeliverable: options.undeliverable,
    });
    const { ttlMs, maxPendingPerUser } = options;
    const gate = new WriteGate(
      book,
      new Drafting({ book, api, recorder, ttlMs, maxPendingPerUser }),
      new Deciding({ book, recorder, delivery }),
      new Recovery({ book, store, leases, delivery, api, logger }),
      new Upkeep(book, logger),
    );
    await book.load();
    await gate.sweep();
    gate.upkeep.start(() => gate.recoverAbandoned(), options.recoverAbandonedEveryMs);
    return gate;
  }

  /** Stops the periodic sweep. */
  close(): void {
    this.upkeep.stop();
  }

  /** Removes what nobody will send again (upkeep.ts); how many were removed. */
  sweep(): Promise<number> {
    return this.upkeep.sweep();
  }

  get(id: string): Intent | undefined {
    return this.book.get(idOf(id) ?? id);
  }

  /** An intent by id or confirmation id, from memory or else from the store. */
  find(id: string): Promise<Intent | undefined> {
    return this.book.find(id);
  }

  /** Stores a new pending intent with a fresh key and confirmation id. Nothing is sent. */
  propose(...draft: Parameters<Drafting["propose"]>): Promise<Intent> {
    return this.drafting.propose(...draft);
  }

  /**
   * Delivers the stored request once the human said yes. A succeeded or failed intent gives its
   * recorded outcome and sends nothing; an uncertain one is sent again with the same key.
   */
  confirm(...answer: Parameters<Deciding["confirm"]>): Promise<Intent> {
    return this.deciding.confirm(...answer);
  }

  /** Drops a pending intent. A write already confirmed cannot be taken back here. */
  cancel(...answer: Parameters<Deciding["cancel"]>): Promise<Intent> {
    return this.deciding.cancel(...answer);
  }

  /** Finishes what a previous run left confirmed but unfinished, with the same keys. */
  recover(): Promise<Intent[]> {
    return this.recovery.recover();
  }

  /** With a shared store: finishes the writes a dead replica was sending, with the same keys. */
  recoverAbandoned(): Promise<Intent[]> {
    return this.recovery.recoverAbandoned();
  }

  /** Pending or unfinished intents, for metrics and tests. */
  count(state: Intent["state"]): number {
    return this.book.count(state);
  }
}
