import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { Logger } from "../log.js";
import { StateKeys } from "../state/keys.js";
import type { Intent } from "./intent.js";
import { IntentMac } from "./intent-mac.js";

/** Who delivers a confirmed intent, and for how long before another process may take over. */
export interface DeliveryLease {
  owner: string;
  ms: number;
}

/** How long a delivered or refused write is kept, to answer a repeat. */
export const FINISHED_RETENTION_MS = 7 * 86_400_000;
/**
 * How long a draft nobody sent (cancelled, expired) is kept, without its body: a late
 * confirmation hears "cancelled" or "expired", not "unknown"; it counts against the drafts a
 * user may hold until it is gone, so draft-and-cancel loops cannot fill the store.
 */
export const UNSENT_DRAFT_GRACE_MS = 60_000;

/**
 * A stored intent that failed its checks (its MAC, its shape): moved to quarantine, never
 * delivered. Its message says what was wrong, never what it held.
 */
export class DamagedIntent extends Error {
  override name = "DamagedIntent";
  constructor(
    readonly id: string,
    readonly problem: string,
    /** false: left where it is (this replica cannot judge it: its secret is not the fleet's). */
    readonly setAside = true,
  ) {
    super(`the stored write ${id} is damaged (${problem})`);
  }
}

/** What a look at a quarantined intent says of it. */
export const SET_ASIDE = "it was set aside in quarantine when it failed its checks";

/** Told of each intent a store moves to quarantine (a metric, an audit record). */
export type OnQuarantine = (where: "file" | "redis", problem: string) => void;

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
  /**
   * Gives up the owner's lease, if it holds one, leaving the write due for whoever looks next:
   * after a claim whose answer never came, this process cannot tell whether it holds it.
   */
  relinquish(id: string, owner: string): Promise<void>;
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
  // Checked by the MAC itself (a record without one fails like one with a wrong one).
  mac: z.string().optional(),
  channel: z.enum(["form", "input-required", "card", "two-step"]),
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
  /** Files moved to quarantine since this journal was opened. */
  quarantined = 0;
  private readonly mac: Promise<IntentMac>;
  private readonly logger?: Logger;
  private readonly onQuarantine?: OnQuarantine;

  /**
   * `mac`: the intents' MAC key; without one, a key derived from the secret this process keeps
   * in the state directory (created on first use).
   */
  constructor(
    stateDir: string,
    options: { logger?: Logger; mac?: IntentMac; onQuarantine?: OnQuarantine } = {},
  ) {
    this.dir = join(stateDir, "intents");
    this.logger = options.logger;
    this.onQuarantine = options.onQuarantine;
    this.mac = options.mac
      ? Promise.resolve(options.mac)
      : StateKeys.open(stateDir, null).then((keys) => new IntentMac(keys.derive("intent-mac")));
    this.mac.catch(() => {}); // reported by the first use
  }

  async load(): Promise<Intent[]> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const mac = await this.mac;
    const intents: Intent[] = [];
    for (const name of await readdir(this.dir)) {
      if (name.endsWith(".tmp")) {
        // An interrupted save: the intent's previous state is still in its .json file.
        await rm(join(this.dir, name), { force: true });
        this.logger?.info({ file: name }, "removed a temporary file left by an interrupted save");
        continue;
      }
      if (!name.endsWith(".json")) continue;
      const text = await readFile(join(this.dir, name), "utf8").catch(() => null);
      const problem = text === null ? "it cannot be read" : trust(text, name, mac);
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

  /** The intent, null when there is none; a damaged one is quarantined and thrown. */
  async read(id: string): Promise<Intent | null> {
    if (!ID_PATTERN.test(id)) return null;
    const name = `${id}.json`;
    const text = await readFile(join(this.dir, name), "utf8").catch(() => null);
    if (text === null) {
      // Set aside earlier (at a start, or by another look): damaged, not unknown.
      const aside = await readdir(join(this.dir, QUARANTINE_DIR)).catch(() => []);
      if (aside.some((n) => n.startsWith(`${id}.`))) throw new DamagedIntent(id, SET_ASIDE);
      return null;
    }
    const intent = trust(text, name, await this.mac);
    if (typeof intent !== "string") return intent;
    await this.quarantine(name, intent, text);
    throw new DamagedIntent(id, intent);
  }

  async save(intent: Intent): Promise<void> {
    if (!ID_PATTERN.test(intent.id)) throw new Error(`refusing to store intent id ${intent.id}`);
    const { revision: _revision, ...stored } = (await this.mac).signed(intent);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const target = join(this.dir, `${intent.id}.json`);
    const temporary = join(this.dir, `.${intent.id}.${randomBytes(4).toString("hex")}.tmp`);
    const file = await open(temporary, "w", 0o600);
    try {
      await file.writeFile(JSON.stringify({ ...stored, revision: intent.revision }));
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

  /** One process owns the directory: a claim's outcome is never unknown here. */
  async relinquish(): Promise<void> {}

  async remove(id: string): Promise<void> {
    if (!ID_PATTERN.test(id)) return;
    await rm(join(this.dir, `${id}.json`), { force: true });
  }

  /** Moves a damaged file aside (its mode kept by rename) and says what it seemed to hold. */
  private async quarantine(name: string, problem: string, text: string): Promise<void> {
    const aside = join(this.dir, QUARANTINE_DIR);
    await mkdir(aside, { recursive: true, mode: 0o700 });
    const target = join(aside, `${name.replace(/\.json$/, "")}.${Date.now()}.json`);
    try {
      await rename(join(this.dir, name), target);
    } catch (error) {
      // Another look moved it first: one quarantine, one line.
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    this.quarantined++;
    this.onQuarantine?.("file", problem);
    const seen = recoverable(text);
    this.logger?.error(
      { file: name, quarantinedAs: target, problem, ...seen },
      seen.state === "sending" || seen.state === "uncertain"
        ? "quarantined a damaged intent file of a confirmed write that may not have been delivered: check it by hand"
        : "quarantined a damaged intent file",
    );
  }
}

/** The intent a stored text holds, or why it cannot be trusted (its shape, its MAC). */
export function trust(text: string, name: string, mac: IntentMac): Intent | string {
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
  const intent = checked.data as unknown as Intent;
  // Whoever wrote it without the key: a forgery, a change, or a record of another deployment.
  if (!mac.verifies(intent)) return "its MAC does not verify (written without this server's key)";
  return intent;
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
export async function damagedFiles(stateDir: string, mac: IntentMac): Promise<number> {
  const dir = join(stateDir, "intents");
  const aside = await readdir(join(dir, QUARANTINE_DIR)).catch(() => []);
  let damaged = aside.filter((n) => n.endsWith(".json")).length;
  for (const name of await readdir(dir).catch(() => [])) {
    if (!name.endsWith(".json")) continue;
    const text = await readFile(join(dir, name), "utf8").catch(() => null);
    if (text === null || typeof trust(text, name, mac) === "string") damaged++;
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
