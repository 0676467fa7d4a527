import type { Observer } from "../events.js";
import type { Logger } from "../log.js";
import { writeEvent } from "./events.js";
import type { Intent } from "./intent.js";
import { GateRefusal } from "./refusal.js";

/**
 * Tells the observers (the audit trail, telemetry) of every step of a write: its draft, the
 * decisions about it, its delivery. Only the person's yes must be on record before anything
 * is sent; any other record that cannot be made is logged.
 */
export class Recorder {
  constructor(
    private readonly observer: Observer | undefined,
    private readonly logger: Logger,
  ) {}

  /** Tells the observers of a step; a record that cannot be made is logged (the sink counts it). */
  tell(
    step: "draft" | "decision" | "delivery",
    intent: Intent,
    outcome: string,
    reason: string | null = null,
  ): void {
    try {
      this.observer?.write?.(writeEvent(step, intent, outcome, reason));
    } catch (error) {
      this.logger.error(
        { intent: intent.id, step, outcome, err: (error as Error).message },
        "a write's step could not be recorded",
      );
    }
  }

  /**
   * Records the person's yes. When it cannot be recorded (the audit trail's disk is full, its
   * file unwritable), the write is not sent: a confirmation nobody could account for later is
   * not acted on.
   */
  confirmation(intent: Intent): void {
    try {
      this.observer?.write?.(writeEvent("decision", intent, "confirmed"));
    } catch (error) {
      this.logger.error(
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
  delivered(intent: Intent, recovery: boolean): void {
    const outcome =
      intent.state === "succeeded"
        ? recovery
          ? "recovered"
          : "delivered"
        : intent.state === "failed"
          ? "refused"
          : "uncertain";
    this.tell("delivery", intent, outcome, intent.error?.message ?? null);
  }
}
