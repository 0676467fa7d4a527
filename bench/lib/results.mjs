// Where a script's figures go. Fresh results land under build/ (or where --out says); the
// committed bench/*.json are the README's reference figures and change only on purpose, with
// --update-reference.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";

const root = new URL("../..", import.meta.url).pathname;

/** The command-line options every results-writing script takes (for node:util parseArgs). */
export const RESULT_OPTIONS = {
  out: { type: "string" },
  "update-reference": { type: "boolean", default: false },
};

/**
 * Writes `report` as JSON to --out (relative to where npm was run from), else to `fresh`
 * (relative to the project root); with --update-reference, to `reference` too. Prints where.
 */
export function writeResults(report, options, { fresh, reference }) {
  const here = process.env.INIT_CWD ?? process.cwd();
  const files = [options.out ? resolve(here, options.out) : resolve(root, fresh)];
  if (options["update-reference"]) files.push(resolve(root, reference));
  const json = `${JSON.stringify(report, null, 2)}\n`;
  for (const file of files) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, json);
  }
  const shown = files.map((f) => {
    const path = relative(here, f);
    return path.startsWith("..") || isAbsolute(path) ? f : path;
  });
  console.log(`results written to ${shown.join(" and ")}`);
}
