import { type ParseArgsConfig, parseArgs } from "node:util";
import { closest } from "./closest.js";

/** A command line we cannot run: one sentence, printed with usage hints by the CLI. */
export class UsageError extends Error {
  override name = "UsageError";
}

/**
 * node:util's parseArgs, with refusals a person can act on: "unknown option --sanbox; did
 * you mean --sandbox? (see --help)" rather than Node's advice about positional arguments.
 */
export function parseFlags<T extends ParseArgsConfig>(config: T) {
  try {
    return parseArgs(config);
  } catch (error) {
    const e = error as { code?: string; message?: string };
    const option = /'(-{1,2}[^']+)'/.exec(e.message ?? "")?.[1] ?? "";
    if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
      const known = Object.keys(config.options ?? {}).map((name) => `--${name}`);
      const near = closest(option.split("=")[0] ?? option, known);
      throw new UsageError(
        `unknown option ${option}${near ? `; did you mean ${near}?` : ""} (see --help)`,
      );
    }
    if (e.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE")
      throw new UsageError(`${clean(e.message)} (see --help)`);
    throw error;
  }
}

const clean = (message: string | undefined) => (message ?? "invalid option").replace(/\.$/, "");
