import type { Logger } from "../log.js";
import type { IntentBook } from "./book.js";
import { FINISHED_RETENTION_MS, UNSENT_DRAFT_GRACE_MS } from "./journal.js";

const SWEEP_INTERVAL_MS = 60_000;

/**
 * The gate's upkeep: what nobody will send again leaves the journal and memory (every minute),
 * and, with a shared store, writes a dead replica left mid-delivery are looked for.
 */
export class Upkeep {
  private sweeper: NodeJS.Timeout | null = null;
  private recoverer: NodeJS.Timeout | null = null;

  constructor(
    private readonly book: IntentBook,
    private readonly logger: Logger,
  ) {}

  /** Sweeps every minute; looks for abandoned deliveries every `recoverEveryMs`, if given. */
  start(recoverAbandoned: () => Promise<unknown>, recoverEveryMs: number | undefined): void {
    this.sweeper = setInterval(() => {
      this.sweep().catch((error: unknown) =>
        this.logger.warn({ err: error }, "could not remove expired drafts"),
      );
    }, SWEEP_INTERVAL_MS);
    this.sweeper.unref();
    if (!recoverEveryMs) return;
    this.recoverer = setInterval(() => {
      recoverAbandoned().catch((error: unknown) =>
        this.logger.warn({ err: error }, "could not look for abandoned deliveries"),
      );
    }, recoverEveryMs);
    this.recoverer.unref();
  }

  /** Stops the periodic sweep and look. */
  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.recoverer) clearInterval(this.recoverer);
  }

  /**
   * Removes drafts nobody confirmed within their TTL, unsent ones (cancelled, expired) a minute
   * after (journal and memory: an abandoned draft costs nothing after it expires), and delivered
   * or refused writes past their retention.
   */
  async sweep(): Promise<number> {
    const now = this.book.clock();
    let removed = 0;
    for (const intent of this.book.all()) {
      const expiredDraft = intent.state === "pending" && now > Date.parse(intent.expiresAt);
      const unsentGone =
        (intent.state === "cancelled" || intent.state === "expired") &&
        now - Date.parse(intent.updatedAt) > UNSENT_DRAFT_GRACE_MS;
      const finished = intent.state === "succeeded" || intent.state === "failed";
      const stale = finished && now - Date.parse(intent.updatedAt) > FINISHED_RETENTION_MS;
      if (!expiredDraft && !unsentGone && !stale) continue;
      if (this.book.busy(intent.id)) continue; // being confirmed right now
      await this.book.forget(intent.id);
      removed++;
    }
    return removed;
  }
}
