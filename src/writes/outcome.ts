import { z } from "zod";
import { record } from "../api/response.js";
import { sentence, UserFacingError } from "../errors.js";
import type { Intent } from "./intent.js";

/**
 * What every write call answers, from the state its intent is in. Kept loose in the listing
 * (the write tools share the context budget): the status values and fields are told by the
 * descriptions and the message.
 */
export const outcomeSchema = z.object({
  status: z.string().describe("awaiting_confirmation, succeeded, uncertain or cancelled"),
  confirmation_id: z.string(),
  preview: z.record(z.string(), z.unknown()),
  expires_at: z.string().optional(),
  result: z.record(z.string(), z.unknown()).optional(),
  message: z.string(),
});

export type Outcome = z.output<typeof outcomeSchema> & {
  status: "awaiting_confirmation" | "succeeded" | "uncertain" | "cancelled";
};

/** How an uncertain write is asked for again, by the channel it was confirmed in. */
const ASK_AGAIN: Record<Intent["channel"], string> = {
  "two-step": "Call confirm_write again with this confirmation_id:",
  card: "The person can press Confirm in the card again:",
  "input-required":
    "Send the same confirmation again (or call confirm_write with this confirmation_id where it is offered):",
  form: "Call confirm_write with this confirmation_id where it is offered (otherwise the server sends it again when it restarts):",
};

const TWO_STEP_NOTE =
  "Nothing has been written. Show the user this preview; call confirm_write with this confirmation_id, exactly as given, only once they have agreed to it, or cancel_write.";

export function outcomeOf(intent: Intent): Outcome {
  const base = {
    confirmation_id: intent.confirmationId ?? intent.id,
    preview: { ...intent.preview },
  };
  switch (intent.state) {
    case "pending":
      return {
        ...base,
        status: "awaiting_confirmation",
        expires_at: intent.expiresAt,
        message: TWO_STEP_NOTE,
      };
    case "succeeded":
      return {
        ...base,
        status: "succeeded",
        result: record(intent.result),
        message: replayedReceipt(intent.result)
          ? "Already created: the API had this creation's client_request_id on record and returned the stored record; nothing new was written."
          : unreadAnswer(intent.result)
            ? "Written, once: the API applied it, but its answer was too large to read (PORTFOLIO_MAX_RESPONSE_BYTES); read the record back to see it. Confirming again sends nothing."
            : "Written, once. Confirming again returns this same result and sends nothing.",
      };
    case "uncertain":
    case "sending":
      return {
        ...base,
        status: "uncertain",
        message:
          intent.error?.code === "store_unanswered"
            ? intent.error.message
            : `The API did not confirm the write (${intent.error?.code ?? "no answer"}); it may or may not be applied. ${ASK_AGAIN[intent.channel]} it resends the same request with the same Idempotency-Key, so it cannot be applied twice.`,
      };
    case "cancelled":
    case "expired":
      return { ...base, status: "cancelled", message: "Nothing was written." };
    case "failed":
      throw new UserFacingError(
        `${sentence(intent.error?.message ?? "The Partner API refused the write")} Nothing was written.`,
      );
  }
}

/** A write the API applied whose answer was too large to read (src/writes/attempt.ts). */
const unreadAnswer = (result: unknown) =>
  typeof (result as { answer_not_read?: unknown } | null)?.answer_not_read === "string";

/**
 * A creation that carries its own durable identity (spec part 2's ManualCreationIdempotencyReceipt)
 * answers `replayed: true` when the API had already made it: the user must not think it is new.
 */
function replayedReceipt(result: unknown): boolean {
  const receipt = (result as { idempotency_receipt?: { replayed?: unknown } } | null)
    ?.idempotency_receipt;
  return receipt?.replayed === true;
}
