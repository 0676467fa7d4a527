import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Intent } from "./intent.js";

/** Where intents live. A file store here; a shared store (Redis) can take its place later. */
export interface IntentStore {
  load(): Promise<Intent[]>;
  save(intent: Intent): Promise<void>;
  remove(id: string): Promise<void>;
}

const ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

/**
 * One JSON file per intent under `<state dir>/intents`, owner-only (0700 / 0600). A save is
 * atomic and durable: write a temporary file, fsync it, rename it over the old one, fsync the
 * directory. A crash leaves either the old state or the new one, never half of either.
 */
export class FileJournal implements IntentStore {
  readonly dir: string;

  constructor(stateDir: string) {
    this.dir = join(stateDir, "intents");
  }

  async load(): Promise<Intent[]> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const intents: Intent[] = [];
    for (const name of await readdir(this.dir)) {
      if (!name.endsWith(".json")) continue;
      try {
        intents.push(JSON.parse(await readFile(join(this.dir, name), "utf8")) as Intent);
      } catch {
        // A torn temporary file from a crash is never named *.json; an unreadable intent is skipped.
      }
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
