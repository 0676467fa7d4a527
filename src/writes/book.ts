import { idOf } from "./confirmation-id.js";
import type { Intent } from "./intent.js";
import { DamagedIntent, type IntentStore } from "./journal.js";
import { GateRefusal } from "./refusal.js";

/**
 * What this process knows of the intents, and the store they are kept in: every step of the
 * gate reads and changes an intent here. Another process sharing the store (a replica, a
 * restarted server) may have drafted or moved one on: a change is stored only from the revision
 * this process last saw, and a newer stored revision wins over what is held in memory.
 */
export class IntentBook {
  private readonly intents = new Map<string, Intent>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: IntentStore,
    readonly clock: () => number,
  ) {}

  /** Takes in what the store holds at start. */
  async load(): Promise<void> {
    for (const intent of await this.store.load()) this.intents.set(intent.id, intent);
  }

  get(id: string): Intent | undefined {
    return this.intents.get(id);
  }

  /** Every intent held, in the order they came. */
  all(): Intent[] {
    return [...this.intents.values()];
  }

  count(state: Intent["state"]): number {
    return this.all().filter((i) => i.state === state).length;
  }

  /** Holds what the store just returned for an intent. */
  hold(intent: Intent): void {
    this.intents.set(intent.id, intent);
  }

  /** Holds a stored intent unless what is held is as new or newer. */
  adopt(stored: Intent): void {
    const known = this.intents.get(stored.id);
    if (!known || (known.revision ?? 0) < (stored.revision ?? 0))
      this.intents.set(stored.id, stored);
  }

  /** Removes an intent from the store, then from memory. */
  async forget(id: string): Promise<void> {
    await this.store.remove(id);
    this.intents.delete(id);
  }

  /**
   * An intent by id or confirmation id, from memory or else from the store: another process
   * sharing the state directory (a replica, a restarted server) may have drafted it.
   */
  async find(id: string): Promise<Intent | undefined> {
    const key = idOf(id) ?? id;
    const known = this.intents.get(key);
    if (known) return known;
    const stored = await this.read(key);
    if (stored) this.intents.set(key, stored);
    return stored ?? undefined;
  }

  /**
   * The latest known state of an intent: the store's when another process wrote it since (a
   * higher revision), else what this process holds. Null when neither has it.
   */
  async refresh(id: string): Promise<Intent | null> {
    const stored = await this.read(id);
    const known = this.intents.get(id);
    if (!stored) return known ?? null;
    if (known && (known.revision ?? 0) >= (stored.revision ?? 0)) return known;
    this.intents.set(id, stored);
    return stored;
  }

  /** Stores a change made from the revision this process last saw; refused if another came first. */
  async persist(intent: Intent): Promise<Intent> {
    const saved = await this.store.replace(this.stamped(intent), intent.revision ?? 0);
    if (!saved) {
      await this.refresh(intent.id);
      throw new GateRefusal(
        "changed",
        `The write ${intent.id} was changed by another server process at the same moment; nothing was sent by this call. Look at it again (confirm or cancel once more).`,
      );
    }
    this.intents.set(saved.id, saved);
    return saved;
  }

  /** The intent as changed now. */
  stamped(intent: Intent): Intent {
    return { ...intent, updatedAt: new Date(this.clock()).toISOString() };
  }

  /** Runs one step per intent at a time: two confirmations of one write are one delivery. */
  exclusive<T>(id: string, step: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(id) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(step);
    this.queues.set(id, next);
    void next
      .finally(() => {
        if (this.queues.get(id) === next) this.queues.delete(id);
      })
      .catch(() => {});
    return next;
  }

  /** Whether a step on this intent is under way (being confirmed right now). */
  busy(id: string): boolean {
    return this.queues.has(id);
  }

  /** The stored intent; a damaged one (quarantined by the store) is refused in one sentence. */
  private async read(id: string): Promise<Intent | null> {
    try {
      return await this.store.read(id);
    } catch (error) {
      if (!(error instanceof DamagedIntent)) throw error;
      this.intents.delete(id);
      throw new GateRefusal(
        "damaged",
        error.setAside
          ? `The stored write ${id} is damaged (${error.problem}): it was set aside for a person to check and will not be sent; this call sent nothing. Draft the write again if it is still wanted.`
          : `This server cannot verify the stored write ${id}: ${error.problem}; this call sent nothing.`,
      );
    }
  }
}
