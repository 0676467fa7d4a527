import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { Logger } from "../log.js";
import type { Intent } from "./intent.js";

/** Where intents live. A file store here; a shared store (Redis) can take its place later. */
export interface IntentStore {
  load(): Promise<Intent[]>;
  save(intent: Intent): Promise<void>;
  remove(id: string): Promise<void>;
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
function trust(text: string, name: string): Intent | string {
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
function recoverable(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of ["id", "state", "operation", "idempotencyKey", "confirmedAt"]) {
    const match = new RegExp(`"${field}"\\s*:\\s*"([^"\\\\]{1,200})"`).exec(text);
    if (match?.[1]) out[field] = match[1];
  }
  return out;
}

/** How many damaged intent files wait in quarantine (for doctor and /metrics). */
export async function quarantinedFiles(stateDir: string): Promise<number> {
  const names = await readdir(join(stateDir, "intents", QUARANTINE_DIR)).catch(() => []);
  return names.filter((n) => n.endsWith(".json")).length;
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
