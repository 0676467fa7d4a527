import type { ApiClient } from "../api/client.js";
import { asPrincipal } from "../http/principal.js";
import type { Logger } from "../log.js";
import { StoreUnavailable } from "../state/unavailable.js";
import type { IntentBook } from "./book.js";
import type { Delivery } from "./delivery.js";
import type { Intent } from "./intent.js";
import type { IntentStore } from "./journal.js";
import type { DeliveryLeases } from "./lease.js";

/**
 * Finishing confirmed writes nobody is finishing: those a previous run left sending or
 * uncertain, and those a dead replica was sending when its lease ran out. Each with its own
 * key, against the API and key it was drafted for, as a delivery for the client that drafted it.
 */
export class Recovery {
  constructor(
    private readonly parts: {
      book: IntentBook;
      store: IntentStore;
      leases: DeliveryLeases;
      delivery: Delivery;
      api: ApiClient;
      logger: Logger;
    },
  ) {}

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
    const { book, store, leases } = this.parts;
    // A replica whose link to the store is too slow to claim anything leaves it to the others.
    if (leases.storeInTrouble) return [];
    // Only the intents whose lease has lapsed are read: the look costs the same with five or
    // five thousand stored.
    const lapsed = new Set<string>();
    let abandoned: Intent[];
    try {
      abandoned = await store.abandoned();
    } catch (error) {
      if (error instanceof StoreUnavailable) leases.troubled();
      throw error;
    }
    for (const stored of abandoned) {
      lapsed.add(stored.id);
      book.adopt(stored);
    }
    return this.finish((i) => lapsed.has(i.id) && i.state === "sending" && !book.busy(i.id));
  }

  private async finish(which: (intent: Intent) => boolean): Promise<Intent[]> {
    const { book, delivery, logger } = this.parts;
    const { baseUrl, keyId } = this.parts.api.settings;
    const unfinished = book
      .all()
      .filter(
        (i) =>
          which(i) &&
          i.confirmedAt !== null &&
          i.upstream.baseUrl === baseUrl &&
          i.upstream.keyId === keyId,
      );
    if (unfinished.length > 0)
      logger.info({ intents: unfinished.length }, "finishing confirmed writes");
    // Each on its own: one that cannot be finished never holds the others back.
    const settled = await Promise.allSettled(
      unfinished.map((i) =>
        // One another live process is delivering is left to it: no waiting here.
        // Counted against the share of the client that drafted it, as its own call would be.
        asPrincipal(i.caller.client, () =>
          book.exclusive(i.id, () =>
            delivery.deliver(book.get(i.id) as Intent, null, { waitMs: 0, recovery: true }),
          ),
        ),
      ),
    );
    return settled.flatMap((outcome, n) => {
      if (outcome.status === "fulfilled") return [outcome.value];
      logger.error(
        { intent: unfinished[n]?.id, err: outcome.reason },
        "could not finish a confirmed write",
      );
      return [];
    });
  }
}
