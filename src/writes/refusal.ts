import { UserFacingError } from "../errors.js";
import { StoreUnavailable } from "../state/unavailable.js";

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

/** An expiry another process already recorded (or overtook) is no reason to fail. */
export function ignoreConflict(error: unknown): void {
  if (!(error instanceof GateRefusal && error.reason === "changed")) throw error;
}

/**
 * A store failure during a confirmation, as one true sentence: this call sent nothing, and
 * what became of the write is not known until the store answers (an earlier confirmation may
 * have sent it).
 */
export function unknownOutcome(error: unknown): unknown {
  if (!(error instanceof StoreUnavailable)) return error;
  return new GateRefusal(
    "store",
    `${error.message}: this confirmation sent nothing, and what became of the write is not known until the store answers; ask again with the same confirmation id once it is back (the write can never be sent twice).`,
  );
}
