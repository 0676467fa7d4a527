import { randomBytes } from "node:crypto";
import type { Logger } from "../log.js";
import type { Intent } from "./intent.js";
import type { IntentStore } from "./journal.js";

/** How long a replica whose store did not answer a claim leaves abandoned writes to others. */
const STORE_TROUBLE_PAUSE_MS = 30_000;

/**
 * This process's delivery leases: one request of a confirmed write is on the wire at a time,
 * sent by whoever holds its lease, and a lease left by a dead process runs out for another to
 * take. A store too slow to answer a claim makes this process leave abandoned writes to the
 * others for a while.
 */
export class DeliveryLeases {
  /** This process, as the owner of the delivery leases it takes. */
  readonly owner = `gate-${randomBytes(9).toString("base64url")}`;
  /** Until then the store was too slow to answer a claim: abandoned deliveries are left alone. */
  private storeTroubleUntil = 0;

  constructor(
    private readonly store: IntentStore,
    private readonly logger: Logger,
    private readonly clock: () => number,
    /** How long a lease lasts without renewal; renewed every third of it while sending. */
    readonly ms: number,
  ) {}

  /** Stores the claimed intent with this process's lease, if nobody changed or holds it. */
  claim(next: Intent, expected: number): Promise<Intent | null> {
    return this.store.replace(next, expected, { owner: this.owner, ms: this.ms });
  }

  /** Renews the lease while a request is on the wire; the returned function stops it. */
  keepAlive(id: string): () => void {
    const lease = { owner: this.owner, ms: this.ms };
    const heartbeat = setInterval(
      () => {
        this.store.renew(id, lease).then(
          (held) => {
            if (!held) this.logger.warn({ intent: id }, "lost the delivery lease mid-send");
          },
          (error: unknown) =>
            this.logger.warn({ intent: id, err: error }, "could not renew a lease"),
        );
      },
      Math.max(100, Math.floor(lease.ms / 3)),
    );
    heartbeat.unref();
    return () => clearInterval(heartbeat);
  }

  /** Records an outcome while the lease is still this process's, and gives it up; else null. */
  settle(next: Intent): Promise<Intent | null> {
    return this.store.settle(next, this.owner);
  }

  /**
   * The store did not answer a claim: the lease is given up at once (it may have been taken),
   * so that a slow link never keeps the others from finishing the write, and this process
   * stops looking for abandoned deliveries for a while.
   */
  giveUp(id: string): void {
    this.troubled();
    this.store
      .relinquish(id, this.owner)
      .catch((failure: unknown) =>
        this.logger.warn(
          { intent: id, err: (failure as Error).message },
          "could not give up a delivery lease; it lapses on its own",
        ),
      );
  }

  /** Notes that the store did not answer in time: abandoned deliveries are left to others. */
  troubled(): void {
    this.storeTroubleUntil = this.clock() + STORE_TROUBLE_PAUSE_MS;
  }

  /** Whether the store lately failed to answer (abandoned deliveries are then left alone). */
  get storeInTrouble(): boolean {
    return this.clock() < this.storeTroubleUntil;
  }
}
