import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OperationIndex, type SearchableOperation } from "../../src/longtail/search.js";
import { searchableOperations } from "../helpers/contract-operations.js";

interface Case {
  query: string;
  lang: "fr" | "en";
  expected: string;
  also_ok?: string[];
  /** 0: written before the ranker; n: written after n rounds of tuning (see the file's comment) */
  round: number;
}

const { cases } = JSON.parse(
  readFileSync(new URL("./retrieval-cases.json", import.meta.url), "utf8"),
) as { cases: Case[] };
const operations = searchableOperations().filter((op) => op.id !== "auth_token");
const index = new OperationIndex(operations);

/** Rank of the first good answer in the top 3, or -1. */
function rankOf(c: Case): { rank: number; ranked: string[] } {
  const ranked = index.search(c.query, { limit: 3 }).map((h) => h.id);
  const good = new Set([c.expected, ...(c.also_ok ?? [])]);
  return { rank: ranked.findIndex((id) => good.has(id)), ranked };
}

const share = (n: number, of: number) => `${n}/${of} (${((100 * n) / of).toFixed(1)}%)`;

describe("find_api_operations retrieval", () => {
  it("holds cases that name operations of the contract, for every family but auth", () => {
    const ids = new Set(operations.map((op) => op.id));
    const named = cases.flatMap((c) => [c.expected, ...(c.also_ok ?? [])]);
    expect(named.filter((id) => !ids.has(id))).toEqual([]);
    const covered = new Set(
      cases.map((c) => operations.find((op) => op.id === c.expected)?.family),
    );
    const families = new Set(operations.map((op) => op.family));
    expect([...families].filter((f) => !covered.has(f))).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(70);
    expect(new Set(cases.map((c) => c.query)).size).toBe(cases.length);
  });

  it("finds the operation a portfolio manager asks for: top-1 >= 80%, top-3 >= 95%", () => {
    const results = cases.map((c) => ({ c, ...rankOf(c) }));
    const top1 = results.filter((r) => r.rank === 0);
    const top3 = results.filter((r) => r.rank >= 0);

    // Time: every query again, many times over, after the pass above warmed the code up.
    const rounds = 20;
    const start = performance.now();
    for (let r = 0; r < rounds; r++) for (const c of cases) index.search(c.query);
    const perSearch = (performance.now() - start) / (rounds * cases.length);

    const breakdown = (label: string, pick: (c: Case) => boolean) => {
      const all = results.filter((r) => pick(r.c));
      const first = all.filter((r) => r.rank === 0).length;
      return `${label} ${first}/${all.length}`;
    };
    const lines = [
      `find_api_operations retrieval: ${cases.length} cases, top-1 ${share(top1.length, cases.length)}, ` +
        `top-3 ${share(top3.length, cases.length)}, mean ${perSearch.toFixed(3)} ms per search`,
      `  top-1 by set: ${[0, 1, 2, 3].map((n) => breakdown(`round ${n}`, (c) => c.round === n)).join(", ")}; ` +
        `${breakdown("French", (c) => c.lang === "fr")}, ${breakdown("English", (c) => c.lang === "en")}`,
      ...results
        .filter((r) => r.rank !== 0)
        .map(
          (r) =>
            `  ${r.rank < 0 ? "MISS" : `#${r.rank + 1}  `} ${r.c.query}  → want ${r.c.expected}, got ${r.ranked.join(", ") || "nothing"}`,
        ),
    ];
    process.stderr.write(`${lines.join("\n")}\n`);

    expect(top1.length / cases.length).toBeGreaterThanOrEqual(0.8);
    expect(top3.length / cases.length).toBeGreaterThanOrEqual(0.95);
    expect(perSearch).toBeLessThan(1);
  });
});

describe("OperationIndex", () => {
  const op = (id: string, family: string, kind: "read" | "write", summary: string) => ({
    id,
    family,
    kind,
    summary,
    description: "",
    parameters: [],
  });
  const small: SearchableOperation[] = [
    op("alerts_list", "alerts", "read", "List alerts, critical first"),
    op("alert_acknowledge", "alerts", "write", "Acknowledge an alert"),
    op("alert_resolve", "alerts", "write", "Resolve an alert"),
    op("calendar_list", "calendar", "read", "List calendar events by date"),
    op("calendar_event_accept", "calendar", "write", "Accept a proposed event"),
    op("repayment_schedule_get", "repayments", "read", "Get an operation's repayment schedule"),
  ];
  const tiny = new OperationIndex(small);

  it("ranks an exact id first", () => {
    expect(index.search("alert_acknowledge")[0]?.id).toBe("alert_acknowledge");
    expect(index.search("search")[0]?.id).toBe("search");
    expect(index.search("please call `deal_update` on it")[0]?.id).toBe("deal_update");
  });

  it("takes a quarterly report to download for a document, not a reporting template", () => {
    // Seen in a session after the rounds above: kept as a regression case, outside the figures.
    const french = index.search("télécharge le dernier rapport trimestriel").map((hit) => hit.id);
    expect(french.slice(0, 2)).toEqual(["document_download", "documents_list"]);
    const english = index.search("download the latest quarterly report").map((hit) => hit.id);
    expect(english[0]).toBe("document_download");
  });

  it("ranks an id typed with a slip first", () => {
    expect(index.search("alert_acknowlege")[0]?.id).toBe("alert_acknowledge");
    expect(index.search("repayment_shedule_get")[0]?.id).toBe("repayment_schedule_get");
    expect(index.search("calender_event_accept")[0]?.id).toBe("calendar_event_accept");
  });

  it("filters by family and by kind", () => {
    const alerts = tiny.search("alert event", { family: "calendar" });
    expect(alerts.map((h) => h.id).sort()).toEqual(["calendar_event_accept", "calendar_list"]);
    expect(
      tiny
        .search("alert", { kind: "write" })
        .map((h) => h.id)
        .sort(),
    ).toEqual(["alert_acknowledge", "alert_resolve"]);
    expect(tiny.search("alerte", { kind: "read" }).map((h) => h.id)).toEqual(["alerts_list"]);
    expect(tiny.search("alert", { family: "nope" })).toEqual([]);
    expect(tiny.search("alert_acknowledge", { kind: "read" })[0]?.id).not.toBe("alert_acknowledge");
  });

  it("answers nothing when nothing matches", () => {
    expect(tiny.search("xyzzy plugh")).toEqual([]);
    expect(tiny.search("")).toEqual([]);
    expect(tiny.search("le la les the of")).toEqual([]);
    expect(index.search("zorglub quux")).toEqual([]);
  });

  it("ignores accents and case", () => {
    const plain = tiny.search("echeancier");
    expect(plain[0]?.id).toBe("repayment_schedule_get");
    expect(tiny.search("ÉCHÉANCIER")).toEqual(plain);
    expect(tiny.search("Échéancier")).toEqual(plain);
  });

  it("ranks by what is asked, not by the names of records in the request", () => {
    for (const [named, plain] of [
      ["acquitte l'alerte LTV sur Les Terrasses Saint-Exupéry", "acquitte l'alerte LTV"],
      [
        "what's late in the repayment schedule of Le Clos Confluence?",
        "what's late in the repayment schedule?",
      ],
      ["déplace la tâche relance notaire de Sophie en cours", "déplace la tâche en cours"],
    ] as const) {
      expect(index.search(named)[0]?.id).toBe(index.search(plain)[0]?.id);
    }
  });

  it("honours the limit, best first", () => {
    const hits = index.search("alert", { limit: 2 });
    expect(hits).toHaveLength(2);
    expect(hits[0]!.score).toBeGreaterThanOrEqual(hits[1]!.score);
    expect(index.search("alert", { limit: 50 }).length).toBeGreaterThan(5);
  });
});
