import type { ApiClient } from "../api/client.js";
import { withoutShareTokens } from "../api/response.js";
import type { Logger } from "../log.js";
import { activeTraceparent, traced } from "../telemetry/tracing.js";
import { afterFailedAttempt } from "./attempt.js";
import type { IntentBook } from "./book.js";
import type { Intent } from "./intent.js";
import type { DeliveryLeases } from "./lease.js";
import type { Recorder } from "./recorder.js";
import { routeOf } from "./route.js";

/**
 * One attempt of a claimed write: the request on the wire with its own Idempotency-Key, its
 * lease kept alive meanwhile, then the outcome recorded under that lease.
 */
export class Sender {
  constructor(
    private readonly parts: {
      book: IntentBook;
      leases: DeliveryLeases;
      api: ApiClient;
      recorder: Recorder;
      logger: Logger;
    },
  ) {}

  /** Sends a claimed intent, keeping its lease alive meanwhile, and records the outcome. */
  async send(intent: Intent, recovery: boolean): Promise<Intent> {
    const { api, leases } = this.parts;
    let current = intent;
    const stop = leases.keepAlive(intent.id);
    try {
      const result = await traced("write delivery", spanOf(intent, recovery), () =>
        api.send(
          routeOf(api, intent),
          { path: intent.path, query: intent.query, body: intent.body },
          {
            idempotencyKey: intent.idempotencyKey,
            delegatedUser: intent.delegatedUser,
            // Checked when it was drafted; what the person approved is sent as it is.
            prevalidated: true,
          },
        ),
      );
      current = {
        ...current,
        state: "succeeded",
        result: withoutShareTokens(result.data),
        error: null,
      };
    } catch (error) {
      current = { ...current, ...afterFailedAttempt(intent, error, this.parts.logger) };
    } finally {
      stop();
    }
    return this.record(intent, current, recovery);
  }

  /** Records a delivery's outcome under this process's lease; the outcome is the truth to tell. */
  private async record(intent: Intent, current: Intent, recovery: boolean): Promise<Intent> {
    const { book, leases, recorder, logger } = this.parts;
    let settled: Intent | null;
    try {
      settled = await leases.settle(book.stamped(current));
    } catch (error) {
      // The request went out and the API answered: that outcome is the truth to tell. The
      // journal still says "sending" under this lease; once it lapses another process sends it
      // again with the same key, and the API replays its first answer.
      logger.warn(
        { intent: intent.id, state: current.state, err: (error as Error).message },
        "the outcome of a delivered write could not be recorded; it will be resent with the same key",
      );
      book.hold(current);
      recorder.delivered(current, recovery);
      return current;
    }
    if (settled) {
      book.hold(settled);
      recorder.delivered(settled, recovery);
      return settled;
    }
    // Our lease ran out and another process took the delivery over (same key): its outcome wins.
    logger.warn(
      { intent: intent.id },
      "a delivery outlived its lease; the process that took it over records the outcome",
    );
    return (await book.refresh(intent.id)) ?? current;
  }
}

/**
 * The delivery's span: in the draft's trace, on whichever replica (or run) sends it; linked to
 * the request that confirmed it, when that is another request.
 */
function spanOf(intent: Intent, recovery: boolean) {
  const confirming = activeTraceparent();
  return {
    parent: intent.trace,
    links: confirming !== intent.trace ? [confirming] : [],
    attributes: {
      "portfolio.intent.id": intent.id,
      "portfolio.operation.id": intent.operation,
      "portfolio.delivery.attempt": intent.attempts,
      "portfolio.recovery": recovery,
    },
  };
}
