import { readFileSync } from "node:fs";

/**
 * A settings file (routes, clients, sign-in users) read as JSON. `fail` makes the error that
 * names the setting; the reason the file cannot be read is appended to it.
 */
export function readJsonFile(file: string, fail: (why: string) => Error): unknown {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw fail(`cannot be read as JSON (${(error as Error).message})`);
  }
}
