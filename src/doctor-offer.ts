import type { Operation } from "./api/catalogue.js";
import type { Contract } from "./api/contract/types.js";
import { type HidingRule, type Offer, offerFor } from "./api/offer.js";
import { type FamilySummary, summariseByFamily } from "./api/offer-summary.js";
import type { Config } from "./config.js";

/** doctor's output stays readable in a 100-column terminal. */
const WIDTH = 100;

/**
 * The offer the server makes its own caller (stdio, or `serve --http` with one token): the
 * rules createMcpServer applies to that caller, built from the same configuration.
 */
export function deploymentOffer(config: Config, routes: ReadonlyMap<string, Operation>): Offer {
  return offerFor(routes, {
    readOnly: config.writes.readOnly,
    delegatedUser: config.api.delegatedUser !== null,
    allowSensitive: new Set(config.writes.allowSensitive),
    allowlist: null,
  });
}

/**
 * What `doctor` prints after its checks: each family's offered and hidden operations, the
 * hidden ones grouped by reason, then what would change each reason. Information only: the
 * exit code stays the checks' own.
 */
export function formatOffer(offer: Offer, contract: Contract | null, config: Config): string {
  const families = summariseByFamily(offer);
  const source = contract
    ? `from ${contract.source}: ${offer.routes.size} operations`
    : `no contract: the ${offer.routes.size} curated operations`;
  return [
    "Operations offered over stdio (or serve --http with one token), by family",
    ...wrap(source, WIDTH - 2, 2).map((line) => `  ${line}`),
    "",
    ...familyTable(families, offer),
    ...notes(families, offer, contract, config).flatMap((note) => ["", ...note]),
  ].join("\n");
}

function familyTable(families: FamilySummary[], offer: Offer): string[] {
  const width = Math.max("family".length, ...families.map((f) => f.family.length));
  const why = width + 2 + 7 + 2 + 6 + 2; // where "why hidden" starts
  const row = (family: string, offered: string, hidden: string, reason = "") =>
    `${family.padEnd(width)}  ${offered.padStart(7)}  ${hidden.padStart(6)}  ${reason}`.trimEnd();
  const lines = [
    row("family", "offered", "hidden", "why hidden"),
    row("-".repeat(width), "-------", "------", "-".repeat(WIDTH - why)),
  ];
  for (const f of families) {
    const count = f.hidden.reduce((n, g) => n + g.ids.length, 0);
    const reasons = f.hidden.flatMap((g) =>
      // Sensitive operations are offered one by one, so they are named; the other rules
      // apply to every operation alike, so a count says enough.
      wrap(
        g.rule === "sensitive" ? `${g.reason}: ${g.ids.join(", ")}` : `${g.ids.length} ${g.reason}`,
        WIDTH - why,
        2,
      ),
    );
    lines.push(row(f.family, String(f.offered), String(count), reasons[0]));
    for (const more of reasons.slice(1)) lines.push(`${" ".repeat(why)}${more}`);
  }
  lines.push(
    row("-".repeat(width), "-------", "------"),
    row("total", String(offer.offered.size), String(offer.hidden.size)),
  );
  return lines;
}

/** One paragraph for each reason something is hidden, saying what would offer it. */
function notes(
  families: FamilySummary[],
  offer: Offer,
  contract: Contract | null,
  config: Config,
): string[][] {
  const groups = families.flatMap((f) => f.hidden.map((g) => ({ ...g, family: f.family })));
  const has = (rule: HidingRule) => groups.some((g) => g.rule === rule);
  const notes: string[][] = [];
  const note = (text: string, ...commands: string[]) =>
    notes.push([...wrap(text, WIDTH), ...commands.map((c) => `  ${c}`)]);
  if (has("read-only"))
    note("Writes are offered once PORTFOLIO_READ_ONLY is removed (or set to false).");
  if (has("delegated user"))
    note(
      "Operations that act as a user (/users/me*) are offered once PORTFOLIO_DELEGATED_USER_EMAIL or PORTFOLIO_DELEGATED_USER_ID names one.",
    );
  const sensitive = groups.filter((g) => g.rule === "sensitive");
  if (sensitive.length > 0) {
    // The example names the first hidden family and one operation of another, as an operator would.
    const first = sensitive[0]!;
    const other = sensitive.find((g) => g.family !== first.family);
    const example = [first.family, ...(other ? [other.ids[0]] : [])].join(",");
    note(
      `Sensitive operations are offered when PORTFOLIO_ALLOW_SENSITIVE lists their family or their id, comma-separated (for example PORTFOLIO_ALLOW_SENSITIVE=${example}).`,
    );
  }
  if (!contract)
    note(
      `Only these ${offer.routes.size} curated operations are reachable, each through its own tool. To offer the rest of what the API key may call (through find_api_operations, call_api_read and draft_api_write), set PORTFOLIO_CONTRACT_FILE to the key's contract export, which the API's administrator provides. With the sandbox:`,
      "npx portfolio-mcp sandbox contract --key sandboxdemo > contract.json",
    );
  if (config.server.clientsFile)
    note(
      "Each client of PORTFOLIO_MCP_CLIENTS_FILE acts for its own user, and is offered this narrowed by its read_only and tools.",
    );
  return notes;
}

/** Words to lines of at most `width` characters; lines after the first indented by `indent`. */
export function wrap(text: string, width: number, indent = 0): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const candidate = line === "" ? word : `${line} ${word}`;
    const room = lines.length === 0 ? width : width - indent;
    if (candidate.length <= room || line === "") line = candidate;
    else {
      lines.push(line);
      line = word;
    }
  }
  lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : `${" ".repeat(indent)}${l}`));
}
