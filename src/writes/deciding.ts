import type { DelegatedUser } from "../config.js";
import type { IntentBook } from "./book.js";
import { idOf } from "./confirmation-id.js";
import type { Delivery } from "./delivery.js";
import { describeUser } from "./describe-user.js";
import { neutralise } from "./display.js";
import type { Caller, Channel, Intent } from "./intent.js";
import type { Recorder } from "./recorder.js";
import { GateRefusal, ignoreConflict, unknownOutcome } from "./refusal.js";

const CHANNEL_WORDS: Record<Channel, string> = {
  form: "in the confirmation form the client showed",
  "input-required": "in the confirmation form the client showed",
  card: "in the confirmation card shown with the draft",
  "two-step": "in the chat (confirm_write or cancel_write)",
};

/**
 * The person's answer to a draft: yes (then it is delivered) or no. Only the client and user it
 * was drafted for may give it, only by the channel it was drafted for, and only with the whole
 * confirmation id the draft returned. Asking again after a decision only reports it (or
 * resends, with the same key, what is uncertain).
 */
export class Deciding {
  constructor(
    private readonly parts: { book: IntentBook; recorder: Recorder; delivery: Delivery },
  ) {}

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
    const { book, recorder, delivery } = this.parts;
    return book
      .exclusive(idOf(confirmationId) ?? confirmationId, async () => {
        const id = await this.exactId(confirmationId);
        // Another replica may have moved it on since this one last looked.
        await book.refresh(id);
        const intent = this.owned(id, caller, delegatedUser);
        if (intent.state === "pending") this.checkChannel(intent, via);
        if (intent.state === "pending" && book.clock() > Date.parse(intent.expiresAt)) {
          await book.persist(unsent(intent, "expired")).catch(ignoreConflict);
          await book.refresh(id);
          recorder.tell("decision", intent, "expired");
        }
        const current = book.get(id) as Intent;
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
            throw new GateRefusal(
              "cancelled",
              `Confirmation ${id} was cancelled; nothing was sent.`,
            );
          default:
            // The person's yes is on record before anything is sent, or nothing is sent.
            if (current.state === "pending") recorder.confirmation(current);
            return delivery.deliver(current, caller.grants ?? null);
        }
      })
      .catch((error: unknown) => {
        throw unknownOutcome(error);
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
    const { book, recorder } = this.parts;
    return book.exclusive(idOf(confirmationId) ?? confirmationId, async () => {
      const id = await this.exactId(confirmationId);
      await book.refresh(id);
      const intent = this.owned(id, caller, delegatedUser);
      if (intent.state === "cancelled") return intent;
      if (intent.state !== "pending") {
        throw new GateRefusal(
          "unknown",
          `Confirmation ${id} is ${intent.state}; only a pending write can be cancelled.`,
        );
      }
      this.checkChannel(intent, via);
      const cancelled = await book.persist(unsent(intent, "cancelled"));
      recorder.tell("decision", cancelled, how);
      return cancelled;
    });
  }

  /**
   * The journal id inside a confirmation id, once the whole string is the one the draft
   * returned: what the client showed for approval must be the write that is sent.
   */
  private async exactId(confirmationId: string): Promise<string> {
    const id = idOf(confirmationId) ?? confirmationId;
    const intent = await this.parts.book.find(id);
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
    const intent = this.parts.book.get(id);
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
      this.parts.recorder.tell("decision", intent, "refused", "another client's or user's write");
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
    this.parts.recorder.tell(
      "decision",
      intent,
      "refused",
      `asked by ${via}, drafted for ${intent.channel}`,
    );
    throw new GateRefusal(
      "channel",
      `The write ${intent.id} waits for the person's answer ${CHANNEL_WORDS[intent.channel]}, and only there can it be confirmed or cancelled; this call sent nothing.`,
    );
  }
}

/** A draft that will never be sent: its body and field values go, its digest stays. */
function unsent(intent: Intent, state: "cancelled" | "expired"): Intent {
  return { ...intent, state, body: null, preview: { ...intent.preview, fields: {} } };
}
