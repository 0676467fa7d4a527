import { staysUnderBase } from "../api/base-path.js";
import type { ApiClient } from "../api/client.js";
import type { Logger } from "../log.js";
import { StoreUnavailable } from "../state/unavailable.js";
import type { IntentBook } from "./book.js";
import { neutralise } from "./display.js";
import type { Grants, Intent } from "./intent.js";
import type { DeliveryLeases } from "./lease.js";
import type { Recorder } from "./recorder.js";
import type { Sender } from "./sending.js";

const POLL_MS = 50;
/** The states in which a write may still go out. */
const DELIVERABLE: readonly Intent["state"][] = ["pending", "sending", "uncertain"];

export interface DeliveryParts {
  book: IntentBook;
  leases: DeliveryLeases;
  sender: Sender;
  recorder: Recorder;
  logger: Logger;
  /** The API client: a route must stay under its base address. */
  api: ApiClient;
  /** How long a confirmation waits for another process's delivery of the same intent. */
  waitForOtherMs: number;
  /** This server's own rules: why it would not offer the intent's operation now, or null. */
  undeliverable?: (intent: Intent, grants: Grants | null) => string | null;
}

/**
 * Exactly-once delivery of a confirmed write: the lease is taken and the request sent, or else
 * whoever holds it is waited for. However many processes confirm one intent at once, one
 * request is on the wire at a time, and a lease left by a dead process is taken over after it
 * runs out (same Idempotency-Key). Before every attempt, whoever asks, the write is checked
 * against what this server offers now.
 */
export class Delivery {
  constructor(private readonly parts: DeliveryParts) {}

  /**
   * Takes the delivery lease and sends, or else waits for whoever holds it (`waitMs`, by
   * default long enough for another's attempt). A recovery finishes a write for another.
   */
  async deliver(
    seen: Intent,
    grants: Grants | null,
    how: { waitMs?: number; recovery?: boolean } = {},
  ): Promise<Intent> {
    const { book, leases } = this.parts;
    const deadline = book.clock() + (how.waitMs ?? this.parts.waitForOtherMs);
    let intent = seen;
    for (;;) {
      if (!DELIVERABLE.includes(intent.state)) return intent;
      if (intent.state === "pending" && book.clock() > Date.parse(intent.expiresAt)) return intent;
      const refused = this.undeliverable(intent, grants);
      if (refused) return this.refuse(intent, refused);
      let claimed: Intent | null;
      try {
        claimed = await leases.claim(
          book.stamped({
            ...intent,
            state: "sending",
            confirmedAt: intent.confirmedAt ?? new Date(book.clock()).toISOString(),
            attempts: intent.attempts + 1,
          }),
          intent.revision ?? 0,
        );
      } catch (error) {
        if (error instanceof StoreUnavailable && error.outcomeUnknown)
          return this.claimUnknown(intent, error);
        throw error;
      }
      if (claimed) {
        book.hold(claimed);
        return this.parts.sender.send(claimed, how.recovery ?? false);
      }
      // Another process changed it or is delivering it: look again shortly.
      if (book.clock() > deadline) return (await book.refresh(intent.id)) ?? intent;
      await sleep(POLL_MS);
      intent = (await book.refresh(intent.id)) ?? intent;
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
    if (route !== undefined && !staysUnderBase(this.parts.api.settings.baseUrl, route))
      return `its route ${neutralise(route, 200)} leaves the API's base address`;
    return this.parts.undeliverable?.(intent, grants ?? intent.caller.grants ?? null) ?? null;
  }

  /** Records that a write will not be sent, and why: the person is told nothing went out. */
  private async refuse(intent: Intent, why: string): Promise<Intent> {
    this.parts.logger.warn(
      { intent: intent.id, op: intent.operation, why },
      "a confirmed write was not delivered: this server does not offer it",
    );
    const refused = await this.parts.book.persist({
      ...intent,
      state: "failed",
      error: {
        code: "not_offered",
        message: `This server does not send ${intent.operation} for this caller now: ${why}; it was not sent.`,
      },
    });
    this.parts.recorder.tell("delivery", refused, "refused", why);
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
    this.parts.leases.giveUp(intent.id);
    this.parts.logger.warn(
      { intent: intent.id, err: error.message },
      "the store did not answer a delivery claim; the write may go out once the lease is given up",
    );
    this.parts.recorder.tell("delivery", intent, "uncertain", error.message);
    return {
      ...intent,
      state: "uncertain",
      error: {
        code: "store_unanswered",
        message: `${error.message} in time after this write was claimed for sending: it may have been sent, or may still be sent shortly (never twice: it keeps its one Idempotency-Key). Ask again with the same confirmation id to learn what became of it.`,
      },
    };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
