import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { Logger } from "../log.js";
import type { Intent } from "./intent.js";

/** Who delivers a confirmed intent, and for how long before another process may take over. */
export interface DeliveryLease {
  owner: string;
  ms: number;
}

/** How long a finished intent (succeeded, failed, cancelled) is kept, to answer a repeat. */
export const FINISHED_RETENTION_MS = 7 * 86_400_000;
/** How long an expired draft is kept, so a late confirmation hears "expired", not "unknown". */
export const EXPIRED_DRAFT_GRACE_MS = 60_000;

/**
 * Where intents live: files in the state directory (one process), or Redis (several replicas).
 * Every change the gate makes goes through `replace`, a compare-and-set on the intent's
 * revision, so two processes can never both move one intent on from the same state.
 */
export interface IntentStore {
  /**
   * What a start needs: every intent (file store), or the confirmed, unfinished ones (Redis,
   * where drafts and finished writes are read by id and expire on their own).
   */
  load(): Promise<Intent[]>;
  /** Confirmed writes being sent whose delivery lease has run out: their process died. */
  abandoned(): Promise<Intent[]>;
  /** One intent, or null when there is none (or it cannot be trusted). */
  read(id: string): Promise<Intent | null>;
  /** Writes the intent as it is, whatever is stored (tests and tools; the gate uses replace). */
  save(intent: Intent): Promise<void>;
  remove(id: string): Promise<void>;
  /**
   * Stores `next` only if the stored revision is still `expected` (0: none stored yet) and, with
   * a lease, no other owner holds a live delivery lease on it, which this call then takes.
   * Returns what was stored (its revision one higher), or null when another change came first.
   */
  replace(next: Intent, expected: number, lease?: DeliveryLease): Promise<Intent | null>;
  /**
   * Records a delivery's outcome only while `owner` still holds the lease (a fencing check: a
   * process whose lease ran out and was taken over must not overwrite the new deliverer's
   * state), then releases it. Null when the lease was lost.
   */
  settle(next: Intent, owner: string): Promise<Intent | null>;
  /** Extends the owner's lease while the request is on the wire; false when it was lost. */
  renew(id: string, lease: DeliveryLease): Promise<boolean>;
}

const ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;
export const QUARANTINE_DIR = "quarantine";

/** What an intent file must hold to be trusted with a delivery; extra fields are kept. */
const storedIntent = z.looseObject({
  id: z.string().regex(ID_PATTERN),
  operation: z.string().min(1),
  path: z.record(z.string(), z.unknown()),
  caller: z.looseObject({ sessionId: z.string(), client: z.string().nullable() }),
  upstream: z.looseObject({ baseUrl: z.string(), keyId: z.string() }),
  idempotencyKey: z.string().min(1),
  digest: z.string().min(1),
  preview: z.looseObject({ action: z.string(), target: z.string() }),
  state: z.enum(["pending", "sending", "succeeded", "failed", "uncertain", "cancelled", "expired"]),
  createdAt: z.string(),
  expiresAt: z.string(),
  confirmedAt: z.string().nullable(),
  updatedAt: z.string(),
  attempts: z.number(),
  revision: z.number().int().nonnegative().optional(),
});

/**
 * One JSON file per intent under `<state dir>/intents`, owner-only (0700 / 0600). A save is
 * atomic and durable: write a temporary file, fsync it, rename it over the old one, fsync the
 * directory. A crash leaves either the old state or the new one, never half of either; a file
 * damaged some other way is moved to `intents/quarantine/` with one log line, never trusted,
 * never silently dropped.
 */
export class FileJournal implements IntentStore {
  readonly dir: string;
  /** Files moved to quarantine by the last load. */
  quarantined = 0;

  constructor(
    stateDir: string,
    private readonly logger?: Logger,
  ) {
    this.dir = join(stateDir, "intents");
  }

  async load(): Promise<Intent[]> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const intents: Intent[] = [];
    this.quarantined = 0;
    for (const name of await readdir(this.dir)) {
      if (name.endsWith(".tmp")) {
        // An interrupted save: the intent's previous state is still in its .json file.
        await rm(join(this.dir, name), { force: true });
        this.logger?.info({ file: name }, "removed a temporary file left by an interrupted save");
        continue;
      }
      if (!name.endsWith(".json")) continue;
      const text = await readFile(join(this.dir, name), "utf8").catch(() => null);
      const problem = text === null ? "it cannot be read" : trust(text, name);
      if (typeof problem !== "string") {
        intents.push(problem);
        continue;
      }
      await this.quarantine(name, problem, text ?? "");
    }
    return intents;
  }

  /** One process owns a state directory: a lease is never left by another. */
  async abandoned(): Promise<Intent[]> {
    return (await this.load()).filter((i) => i.state === "sending");
  }

  async read(id: string): Promise<Intent | null> {
    if (!ID_PATTERN.test(id)) return null;
    const name = `${id}.json`;
    const text = await readFile(join(this.dir, name), "utf8").catch(() => null);
    if (text === null) return null;
    const intent = trust(text, name);
    if (typeof intent !== "string") return intent;
    this.logger?.warn(
      { file: name, problem: intent },
      "an intent file cannot be trusted; it is left for the next start to quarantine",
    );
    return null;
  }

  async save(intent: Intent): Promise<void> {
    if (!ID_PATTERN.test(intent.id)) throw new Error(`refusing to store intent id ${intent.id}`);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const target = join(this.dir, `${intent.id}.json`);
    const temporary = join(this.dir, `.${intent.id}.${randomBytes(4).toString("hex")}.tmp`);
    const file = await open(temporary, "w", 0o600);
    try {
      await file.writeFile(JSON.stringify(intent));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, target);
    await syncDirectory(this.dir);
  }

  /** One process owns a state directory, and the gate runs one step per intent at a time. */
  async replace(next: Intent, expected: number): Promise<Intent | null> {
    const current = await this.read(next.id);
    if ((current?.revision ?? 0) !== expected) return null;
    const saved = { ...next, revision: expected + 1 };
    await this.save(saved);
    return saved;
  }

  async settle(next: Intent): Promise<Intent | null> {
    const current = await this.read(next.id);
    const saved = { ...next, revision: (current?.revision ?? 0) + 1 };
    await this.save(saved);
    return saved;
  }

  async renew(): Promise<boolean> {
    return true;
  }

  async remove(id: string): Promise<void> {
    if (!ID_PATTERN.test(id)) return;
    await rm(join(this.dir, `${id}.json`), { force: true });
  }

  /** Moves a damaged file aside (its mode kept by rename) and says what it seemed to hold. */
  private async quarantine(name: string, problem: string, text: string): Promise<void> {
    const aside = join(this.dir, QUARANTINE_DIR);
    await mkdir(aside, { recursive: true, mode: 0o700 });
    const target = join(aside, `${name.replace(/\.json$/, "")}.${Date.now()}.json`);
    await rename(join(this.dir, name), target);
    this.quarantined++;
    const seen = recoverable(text);
    this.logger?.error(
      { file: name, quarantinedAs: target, problem, ...seen },
      seen.state === "sending" || seen.state === "uncertain"
        ? "quarantined a damaged intent file of a confirmed write that may not have been delivered: check it by hand"
        : "quarantined a damaged intent file",
    );
  }
}

/** The intent a file holds, or why it cannot be trusted. */
export function trust(text: string, name: string): Intent | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text.trim() === "" ? "it is empty" : "it is not complete JSON (truncated?)";
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    return `it holds ${parsed === null ? "null" : Array.isArray(parsed) ? "an array" : typeof parsed}, not an intent`;
  const checked = storedIntent.safeParse(parsed);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    return `it is not an intent (${issue?.path.join(".") || "the object"}: ${issue?.message ?? "invalid"})`;
  }
  if (`${checked.data.id}.json` !== name) return "its id does not match its file name";
  return checked.data as unknown as Intent;
}

/** What a damaged file still shows of the intent, read field by field from the raw text. */
export function recoverable(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of ["id", "state", "operation", "idempotencyKey", "confirmedAt"]) {
    const match = new RegExp(`"${field}"\\s*:\\s*"([^"\\\\]{1,200})"`).exec(text);
    if (match?.[1]) out[field] = match[1];
  }
  return out;
}

/**
 * Damaged intent files under a state directory, for doctor: those already in quarantine and
 * those the next start will move there. Reads only; moves nothing.
 */
export async function damagedFiles(stateDir: string): Promise<number> {
  const dir = join(stateDir, "intents");
  const aside = await readdir(join(dir, QUARANTINE_DIR)).catch(() => []);
  let damaged = aside.filter((n) => n.endsWith(".json")).length;
  for (const name of await readdir(dir).catch(() => [])) {
    if (!name.endsWith(".json")) continue;
    const text = await readFile(join(dir, name), "utf8").catch(() => null);
    if (text === null || typeof trust(text, name) === "string") damaged++;
  }
  return damaged;
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } catch {
    // Some platforms (Windows) cannot fsync a directory; the rename is still atomic there.
  } finally {
    await handle.close();
  }
}
