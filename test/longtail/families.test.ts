import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { RequestLogEntry } from "@portfolio-mcp/sandbox";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { sharedSandbox } from "../../packages/sandbox/test/helpers/sandbox-per-test.js";
import type { Operation } from "../../src/api/catalogue.js";
import { DIRECTORY_REQUEST_PREFIX } from "../../src/api/directory.js";
import { contractRoutes } from "../helpers/api.js";
import { connectInMemory, type InMemoryOptions } from "../helpers/mcp.js";

/**
 * Every family of the full key's contract, end to end through a real client: one read, and one
 * confirmed write where the family has writes, each reaching its route exactly once (the
 * sandbox's request log is the witness). Ids come from the sandbox's own lists, read through
 * call_api_read first, as a model would. Then the refusals that must send nothing at all.
 */
const running = sharedSandbox({ rateLimit: false });
const sandbox = () => running.sandbox;

const sessions: Array<{ close(): Promise<void> }> = [];
const open = async (options: InMemoryOptions = {}) => {
  const session = await connectInMemory(sandbox(), {
    contract: true,
    writes: { mode: "two-step" },
    ...options,
  });
  sessions.push(session);
  return session;
};
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});
type Session = Awaited<ReturnType<typeof open>>;
type Reply = { structuredContent?: any; content: any[]; isError?: boolean };
const call = async (s: Session, name: string, args: Record<string, unknown>) =>
  (await s.client.callTool({ name, arguments: args })) as Reply;
const ok = async (s: Session, name: string, args: Record<string, unknown>) => {
  const reply = await call(s, name, args);
  expect(reply.isError, JSON.stringify(reply.content)).toBeFalsy();
  return reply.structuredContent;
};
const refusal = async (s: Session, name: string, args: Record<string, unknown>) => {
  const reply = await call(s, name, args);
  expect(reply.isError, JSON.stringify(reply.structuredContent)).toBe(true);
  return String(reply.content[0].text);
};

const today = () => new Date().toISOString().slice(0, 10);
const daysAhead = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

/** Records the cases act on, found through the API's own lists (see `discover`). */
interface Ids {
  deal: string;
  fund: string;
  operator: { id: string; siren: string };
  operation: { id: string; version: number };
  importJob: string;
  dimension: string;
  document: string;
  user: string;
  alert: string;
  unreadNotification: string;
  event: string;
  template: string;
  workflow: string;
  queuedJob: string;
  task: { id: string; operation_id: string };
}

interface Input {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: Record<string, unknown>;
}

interface Step {
  op: string;
  /** The generic tool's input; a curated tool takes the same values as flat arguments. */
  input: (ids: Ids) => Input;
  /** The curated tool when the operation has one (find_api_operations must name the same). */
  tool?: string;
}

interface FamilyCase {
  read: Step;
  /** null only when the family has no write at all (checked against the contract). */
  write: (Step & { confirm?: "form"; sent?: (entry: RequestLogEntry) => void }) | null;
  /** PORTFOLIO_ALLOW_SENSITIVE for this case: the family's writes are all sensitive. */
  allowSensitive?: string[];
}

const CASES: Record<string, FamilyCase> = {
  entity: { read: { op: "context_get", input: () => ({}) }, write: null },
  deals: {
    read: { op: "deal_notes_list", input: (ids) => ({ path: { deal_id: ids.deal } }) },
    write: {
      op: "deal_note_create",
      input: (ids) => ({
        path: { deal_id: ids.deal },
        body: { content: "Comité : dossier complet, à présenter le mois prochain." },
      }),
    },
  },
  funds: {
    read: { op: "fund_get", input: (ids) => ({ path: { fond_id: ids.fund } }) },
    write: {
      op: "fund_update",
      input: (ids) => ({
        path: { fond_id: ids.fund },
        body: { strategy: "Dette senior promotion résidentielle" },
      }),
    },
  },
  operators: {
    read: {
      op: "operator_risks_list",
      input: (ids) => ({ path: { operateur_id: ids.operator.id }, query: { open_only: true } }),
    },
    write: {
      op: "operator_risk_create",
      input: (ids) => ({
        path: { operateur_id: ids.operator.id },
        body: { category: "financier", level: "modere", title: "Trésorerie tendue en fin d'année" },
      }),
    },
  },
  operations: {
    read: { op: "operation_import_get", input: (ids) => ({ path: { import_id: ids.importJob } }) },
    write: {
      op: "operation_update",
      input: (ids) => ({
        path: { operation_id: ids.operation.id },
        body: { version: ids.operation.version, description: "Suivi renforcé après le comité." },
      }),
    },
  },
  taxonomies: {
    read: { op: "taxonomy_get", input: (ids) => ({ path: { dimension: ids.dimension } }) },
    write: null,
  },
  timeline: {
    read: {
      op: "operation_narrative",
      input: (ids) => ({ path: { operation_id: ids.operation.id }, query: { days: 90 } }),
    },
    write: null,
  },
  documents: {
    read: { op: "document_get", input: (ids) => ({ path: { document_id: ids.document } }) },
    write: {
      op: "document_update",
      input: (ids) => ({
        path: { document_id: ids.document },
        body: { description: "Version signée par les deux parties." },
      }),
    },
  },
  users: {
    read: { op: "user_get", input: (ids) => ({ path: { user_id: ids.user } }) },
    write: {
      op: "user_update",
      input: (ids) => ({
        path: { user_id: ids.user },
        body: { job_title: "Analyste crédit senior" },
      }),
    },
    allowSensitive: ["users"],
  },
  delegated: {
    read: { op: "me_preferences_get", input: () => ({}) },
    write: {
      op: "me_preferences_update",
      input: () => ({ body: { density: "compact" } }),
      confirm: "form",
    },
  },
  settings: {
    read: { op: "settings_reporting_get", input: () => ({}) },
    write: {
      op: "settings_reporting_update",
      input: () => ({ body: { reminder_days_before: 15 } }),
    },
    allowSensitive: ["settings"],
  },
  search: {
    read: { op: "search_documents", input: () => ({ body: { query: "reporting trimestriel" } }) },
    write: null,
  },
  alerts: {
    read: { op: "alert_get", input: (ids) => ({ path: { alert_id: ids.alert } }) },
    write: {
      op: "notification_mark_read",
      input: (ids) => ({ path: { notification_id: ids.unreadNotification } }),
    },
  },
  calendar: {
    read: { op: "calendar_event_get", input: (ids) => ({ path: { event_id: ids.event } }) },
    write: {
      op: "calendar_event_create",
      input: (ids) => ({
        body: {
          title: "Visite de chantier avec l'opérateur",
          event_date: daysAhead(14),
          event_type: "visite_chantier",
          operation_id: ids.operation.id,
        },
      }),
      confirm: "form",
      // Its durable identity, made once by draft_api_write since the model gave none.
      sent: (entry) =>
        expect((entry.body as { client_request_id: string }).client_request_id).toMatch(
          /^pmcp-[0-9a-f-]{36}$/,
        ),
    },
  },
  // Every operation of this family that is not sensitive has its own tool.
  siren: {
    read: {
      op: "siren_get",
      tool: "lookup_siren",
      input: (ids) => ({ path: { siren: ids.operator.siren } }),
    },
    write: {
      op: "siren_resolve",
      tool: "resolve_siren",
      input: (ids) => ({ path: { siren: ids.operator.siren } }),
    },
  },
  repayments: {
    read: {
      op: "repayment_schedule_get",
      input: (ids) => ({ path: { operation_id: ids.operation.id } }),
    },
    write: {
      op: "repayment_create",
      input: (ids) => ({
        path: { operation_id: ids.operation.id },
        body: { amount: "1500.00", value_date: today(), reference: "VIR-2026-0412" },
      }),
    },
  },
  reporting: {
    read: { op: "report_template_get", input: (ids) => ({ path: { template_id: ids.template } }) },
    write: {
      op: "report_template_update",
      input: (ids) => ({
        path: { template_id: ids.template },
        body: { description: "Revu pour le comité trimestriel." },
      }),
    },
  },
  workflows: {
    read: {
      op: "workflow_definition_get",
      input: (ids) => ({ path: { workflow_key: ids.workflow } }),
    },
    write: {
      op: "workflow_definition_toggle",
      input: (ids) => ({ path: { workflow_key: ids.workflow }, body: { enabled: true } }),
    },
  },
  ai_extraction: {
    read: { op: "extraction_job_get", input: (ids) => ({ path: { job_id: ids.queuedJob } }) },
    write: { op: "extraction_job_cancel", input: (ids) => ({ path: { job_id: ids.queuedJob } }) },
  },
  tasks: {
    read: {
      op: "operation_tasks_list",
      input: (ids) => ({ path: { operation_id: ids.task.operation_id } }),
    },
    write: {
      op: "task_update",
      input: (ids) => ({ path: { task_id: ids.task.id }, body: { priority: "urgent" } }),
    },
  },
};

/** Families the server owns and offers to no one: the token exchange, made once per bearer. */
const SERVER_OWNED: Record<string, string> = { auth: "auth_token" };

let contract: any;
let routes: ReadonlyMap<string, Operation>;
let ids: Ids;
let basePath: string;

beforeAll(async () => {
  const s = sandbox();
  const url = new URL(`/_admin/keys/${s.credentials.keyId}/contract.json`, s.baseUrl);
  contract = await (await fetch(url)).json();
  routes = await contractRoutes(s);
  basePath = new URL(s.baseUrl).pathname.replace(/\/$/, "");
  ids = await discover();
});

/** The records the cases act on, read through call_api_read as a model would find them. */
async function discover(): Promise<Ids> {
  const s = await connectInMemory(sandbox(), { contract: true });
  try {
    const read = async (operation: string, query: Record<string, unknown> = {}) =>
      (await ok(s, "call_api_read", { operation, query })) as { items?: any[]; result?: any };
    const first = async (
      operation: string,
      query = {},
      where: (item: any) => boolean = () => true,
    ) => {
      const item = (await read(operation, query)).items?.find(where);
      if (!item) throw new Error(`${operation} lists nothing usable`);
      return item;
    };
    const operation = await first("operations_list", { status: "active" });
    const operator = await first("operators_list", {}, (o) => typeof o.siren === "string");
    const board = (await read("tasks_board")).result;
    return {
      deal: (await first("deals_list")).id,
      fund: (await first("funds_list", { status: "investing" })).id,
      operator: { id: operator.id, siren: operator.siren },
      operation: { id: operation.id, version: operation.version },
      importJob: (await first("operation_imports_list")).id,
      dimension: (await read("taxonomies_get")).result.dimensions[0].dimension,
      document: (await first("documents_list")).id,
      user: (await first("users_list", { status: "approved" })).id,
      alert: (await first("alerts_list")).id,
      unreadNotification: (await first("notifications_list", { unread_only: true })).id,
      event: (await first("calendar_list")).id,
      template: (await first("report_templates_list", {}, (t) => t.is_system === false)).id,
      workflow: (
        await first("workflow_definitions_list", { state: "inactive" }, (w) => w.can_toggle)
      ).key,
      queuedJob: (await first("extraction_jobs_list", { status: "queued" })).id,
      task: board.columns.flatMap((c: { items: any[] }) => c.items)[0],
    };
  } finally {
    await s.close();
  }
}

/** The families (first tag) of every operation of the export, auth included. */
const contractFamilies = (): string[] =>
  [
    ...new Set(
      Object.values<any>(contract.paths).flatMap((item) =>
        Object.values<any>(item).map((op) => op?.tags?.[0]),
      ),
    ),
  ]
    .filter((family) => typeof family === "string")
    .sort();

const expectedPath = (op: Operation, path: Record<string, unknown> = {}) =>
  basePath + op.path.replace(/\{([^{}]+)\}/g, (_, name) => encodeURIComponent(String(path[name])));
const asQuery = (query: Record<string, unknown> = {}) =>
  Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]));
/**
 * What a step asked of the API: neither the token exchange nor the directory's walks (the names
 * lists show beside ids, read once a minute for every client, toolkit/names.ts).
 */
const business = (entries: RequestLogEntry[]) =>
  entries.filter(
    (e) =>
      e.routeId !== "auth_token" &&
      !e.headers["x-request-id"]?.startsWith(DIRECTORY_REQUEST_PREFIX),
  );

/** The one request a step sent to its route: right method and path, answered 2xx. */
function theOneRequest(op: Operation, input: Input, since: number): RequestLogEntry {
  const hits = sandbox().control.requests({ since, routeId: op.id });
  expect(hits, `${op.id}: requests to its route`).toHaveLength(1);
  const entry = hits[0]!;
  expect(entry.method).toBe(op.method);
  expect(entry.path).toBe(expectedPath(op, input.path));
  expect(entry.status).toBeGreaterThanOrEqual(200);
  expect(entry.status).toBeLessThan(300);
  if (op.path.startsWith("/users/me")) {
    const delegation = Object.keys(entry.headers).filter((h) =>
      h.startsWith("x-service-delegated-user-"),
    );
    expect(delegation).toHaveLength(1);
  }
  return entry;
}

/** find_api_operations names the operation first, with the curated tool the case uses. */
async function expectDiscoverable(s: Session, step: Step, family: string) {
  const op = routes.get(step.op)!;
  const found = await ok(s, "find_api_operations", { query: step.op, family, kind: op.kind });
  expect(found.operations[0]).toMatchObject({ id: step.op, kind: op.kind, family });
  expect(found.operations[0].tool).toBe(step.tool);
}

describe("the table covers the contract", () => {
  it("has one case for every family of the full key's export, and no other", () => {
    expect([...Object.keys(CASES), ...Object.keys(SERVER_OWNED)].sort()).toEqual(
      contractFamilies(),
    );
  });

  it.each(Object.entries(CASES))(
    "%s: its read and its write belong to it, of the right kind",
    (family, c) => {
      const read = routes.get(c.read.op);
      expect(read).toMatchObject({ family, kind: "read" });
      const writes = [...routes.values()].filter(
        (op) => op.family === family && op.kind === "write",
      );
      if (c.write === null) expect(writes.map((op) => op.id)).toEqual([]);
      else expect(routes.get(c.write.op)).toMatchObject({ family, kind: "write" });
    },
  );
});

/** [family, operation, case]: the first two name the test. */
const READS = Object.entries(CASES).map(([family, c]) => [family, c.read.op, c] as const);
const WRITES = Object.entries(CASES).flatMap(([family, c]) =>
  c.write ? [[family, c.write.op, c] as const] : [],
);

describe("one read per family", () => {
  it.each(READS)("%s: %s reaches its route once", async (family, _, c) => {
    const step = c.read;
    const s = await open({ allowSensitive: c.allowSensitive ?? [] });
    const op = routes.get(step.op)!;
    await expectDiscoverable(s, step, family);
    const input = step.input(ids);
    const mark = sandbox().control.mark();
    const answer = step.tool
      ? await ok(s, step.tool, { ...input.path, ...input.query, ...input.body })
      : await ok(s, "call_api_read", { operation: step.op, ...input });
    if (!step.tool) expect(answer).toMatchObject({ operation: step.op, status: 200 });
    const entry = theOneRequest(op, input, mark);
    // What was given is sent as given: no default of the contract joins it.
    expect(entry.query).toEqual(asQuery(input.query));
    if (input.body) expect(entry.body).toEqual(input.body);
    expect(business(sandbox().control.requests({ since: mark }))).toHaveLength(1);
  });
});

describe("one confirmed write per family that has writes", () => {
  it.each(WRITES)("%s: %s reaches its route once", async (family, _, c) => {
    const step = c.write!;
    const asked: string[] = [];
    const s = await open({
      allowSensitive: c.allowSensitive ?? [],
      ...(step.confirm === "form"
        ? {
            writes: { mode: "elicitation" },
            elicit: (params): ElicitResult => {
              asked.push((params as { message: string }).message);
              return { action: "accept", content: { confirm: true } };
            },
          }
        : { writes: { mode: "two-step" } }),
    });
    const op = routes.get(step.op)!;
    await expectDiscoverable(s, step, family);
    const input = step.input(ids);
    const before = sandbox().control.mark();
    const drafted = step.tool
      ? await ok(s, step.tool, { ...input.path, ...input.query, ...input.body })
      : await ok(s, "draft_api_write", { operation: step.op, ...input });

    let mark = before;
    let outcome = drafted;
    if (step.confirm === "form") expect(asked).toHaveLength(1);
    else {
      expect(drafted.status).toBe("awaiting_confirmation");
      expect(sandbox().control.requests({ since: before, routeId: op.id })).toHaveLength(0);
      mark = sandbox().control.mark();
      outcome = await ok(s, "confirm_write", { confirmation_id: drafted.confirmation_id });
      // Only the write itself: the draft already looked up what the preview names.
      expect(business(sandbox().control.requests({ since: mark }))).toHaveLength(1);
    }
    expect(outcome.status).toBe("succeeded");
    const entry = theOneRequest(op, input, mark);
    // One value: a repeated header would arrive joined by ", ", which the pattern refuses.
    expect(entry.headers["idempotency-key"]).toMatch(/^[!-~]{1,255}$/);
    if (input.body) expect(entry.body).toMatchObject(input.body);
    step.sent?.(entry);
  });
});

describe("auth (server-owned)", () => {
  it("exchanges a token once for a session's calls, and is offered to no tool", async () => {
    const s = await open();
    const mark = sandbox().control.mark();
    await ok(s, "call_api_read", { operation: "context_get" });
    await ok(s, "call_api_read", { operation: "taxonomies_get" });
    const exchanges = sandbox().control.requests({ since: mark, routeId: SERVER_OWNED.auth });
    expect(exchanges).toHaveLength(1);
    expect(exchanges[0]).toMatchObject({
      method: "POST",
      path: `${basePath}/auth/token`,
      status: 200,
    });

    const quiet = sandbox().control.mark();
    expect(await refusal(s, "call_api_read", { operation: "auth_token" })).toBe(
      "auth_token is the token exchange: the server signs in by itself when a call needs it, and no tool calls it (nothing was sent).",
    );
    expect(await refusal(s, "draft_api_write", { operation: "auth_token" })).toMatch(
      /^auth_token is the token exchange: .* \(nothing was drafted\)\.$/,
    );
    expect(sandbox().control.requests({ since: quiet })).toHaveLength(0);
  });
});

describe("refused before anything is sent", () => {
  /** Runs a refused call and checks that the sandbox saw nothing at all meanwhile. */
  async function refusedQuietly(s: Session, name: string, args: Record<string, unknown>) {
    const mark = sandbox().control.mark();
    const text = await refusal(s, name, args);
    expect(sandbox().control.requests({ since: mark })).toEqual([]);
    return text;
  }

  it("a write passed to call_api_read", async () => {
    const s = await open();
    expect(
      await refusedQuietly(s, "call_api_read", {
        operation: "fund_update",
        path: { fond_id: ids.fund },
        body: { strategy: "x" },
      }),
    ).toBe("fund_update is a write: draft it with draft_api_write (nothing was sent).");
  });

  it("a read passed to draft_api_write", async () => {
    const s = await open();
    expect(
      await refusedQuietly(s, "draft_api_write", {
        operation: "fund_get",
        path: { fond_id: ids.fund },
      }),
    ).toBe("fund_get is a read: call it with call_api_read (nothing was drafted).");
  });

  it("an unknown id, with the near one", async () => {
    const s = await open();
    expect(await refusedQuietly(s, "call_api_read", { operation: "fund_gte" })).toBe(
      "The API key's contract has no operation fund_gte; did you mean fund_get? (nothing was sent).",
    );
    expect(
      await refusedQuietly(s, "draft_api_write", { operation: "operator_risk_creat", body: {} }),
    ).toContain("did you mean operator_risk_create?");
  });

  it("a body failing the schema, naming the field and the rule", async () => {
    const s = await open();
    const text = await refusedQuietly(s, "draft_api_write", {
      operation: "operator_risk_create",
      path: { operateur_id: ids.operator.id },
      body: { category: "climat", level: "modere" },
    });
    expect(text).toMatch(/^operator_risk_create was not called: /);
    expect(text).toContain(
      "body.category must be one of financier, juridique, reputation, conformite, sanctions, execution",
    );
    expect(text).toContain("body.title is required");
    expect(text).toContain("(nothing was sent)");

    const path = await refusedQuietly(s, "call_api_read", {
      operation: "fund_get",
      path: { fond_id: "not-a-uuid" },
    });
    expect(path).toMatch(/path\.fond_id must be a valid uuid/);
  });

  it("a sensitive write without PORTFOLIO_ALLOW_SENSITIVE", async () => {
    const s = await open();
    expect(
      await refusedQuietly(s, "draft_api_write", {
        operation: "settings_reporting_update",
        body: { reminder_days_before: 15 },
      }),
    ).toBe(
      "settings_reporting_update is not offered here: a change of the entity's settings: offered only when PORTFOLIO_ALLOW_SENSITIVE lists settings_reporting_update or settings (nothing was drafted).",
    );
    expect(
      await refusedQuietly(s, "draft_api_write", {
        operation: "task_delete",
        path: { task_id: ids.task.id },
      }),
    ).toMatch(/^task_delete is not offered here: a deletion: /);
  });

  it("a delegated operation when no delegated user is configured", async () => {
    const s = await open({ settings: { delegatedUser: null } });
    const why =
      "is not offered here: it acts as a user, and none is configured (PORTFOLIO_DELEGATED_USER_EMAIL or _ID)";
    expect(await refusedQuietly(s, "call_api_read", { operation: "me_preferences_get" })).toBe(
      `me_preferences_get ${why} (nothing was sent).`,
    );
    expect(
      await refusedQuietly(s, "draft_api_write", {
        operation: "me_preferences_update",
        body: { density: "compact" },
      }),
    ).toBe(`me_preferences_update ${why} (nothing was drafted).`);
  });

  it("an operation with its own tool, given to draft_api_write", async () => {
    const s = await open();
    expect(
      await refusedQuietly(s, "draft_api_write", {
        operation: "operation_note_create",
        path: { operation_id: ids.operation.id },
        body: { content: "Point d'étape." },
      }),
    ).toBe(
      "operation_note_create has its own tool: use create_operation_note, which checks and previews it in full (nothing was drafted).",
    );
  });

  it("a cancelled draft sends nothing, and cannot be confirmed afterwards", async () => {
    const s = await open();
    const before = sandbox().control.mark();
    const draft = await ok(s, "draft_api_write", {
      operation: "task_label_create",
      body: { name: "Annulé", color: "slate" },
    });
    expect(draft.status).toBe("awaiting_confirmation");
    const mark = sandbox().control.mark();
    expect(await ok(s, "cancel_write", { confirmation_id: draft.confirmation_id })).toMatchObject({
      status: "cancelled",
    });
    expect(await refusal(s, "confirm_write", { confirmation_id: draft.confirmation_id })).toContain(
      "was cancelled; nothing was sent",
    );
    expect(sandbox().control.requests({ since: mark })).toEqual([]);
    expect(sandbox().control.requests({ since: before, routeId: "task_label_create" })).toEqual([]);
  });
});
