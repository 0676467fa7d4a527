import { z } from "zod";
import { readJsonFile } from "../json-file.js";
import { hasDotSegment } from "./base-path.js";
import {
  CATALOGUE,
  type HttpMethod,
  isCurated,
  type Operation,
  type OperationId,
  type OperationSpec,
  placeholders,
} from "./catalogue.js";
import type { Contract, ContractOperation } from "./contract/types.js";
import { validatorsOf } from "./contract/validators.js";

const overrideFile = z.record(
  z.string(),
  z.strictObject({
    method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    path: z.string(),
  }),
);

export class RoutesFileError extends Error {
  override name = "RoutesFileError";
}

/**
 * The route table in force. Without a contract: the catalogue, with methods and paths replaced
 * by id from PORTFOLIO_ROUTES_FILE where a deployment differs from the sandbox's choices. With
 * the key's contract: exactly the operations it lists (the token exchange aside), curated ones
 * keeping their hand-made schemas but taking the contract's method and path.
 */
export function resolveRoutes(
  routesFile: string | null,
  contract: Contract | null = null,
): ReadonlyMap<string, Operation> {
  if (contract) return contractRoutes(contract);
  const overrides = routesFile ? readOverrides(routesFile) : {};
  const routes = new Map<string, Operation>();
  for (const [id, spec] of Object.entries(CATALOGUE) as Array<[OperationId, OperationSpec]>) {
    const override = overrides[id];
    routes.set(id, {
      ...curated(id, spec),
      ...(override ? { method: override.method, path: override.path } : {}),
    });
  }
  return routes;
}

function contractRoutes(contract: Contract): ReadonlyMap<string, Operation> {
  const routes = new Map<string, Operation>();
  for (const op of contract.operations.values()) {
    const place = { method: op.method, path: op.path, family: op.family, summary: op.summary };
    routes.set(
      op.id,
      isCurated(op.id)
        ? { ...curated(op.id, CATALOGUE[op.id]), ...place, contract: op }
        : fromContract(op),
    );
  }
  return routes;
}

function curated(id: OperationId, spec: OperationSpec): Operation {
  return {
    ...spec,
    id,
    // The contract's families, as near as the scope tells: /users/me* is the delegated family.
    family: spec.capability ? "delegated" : (spec.scope.split(":")[0] ?? "other"),
    summary: id.replace(/_/g, " "),
    bodyType: "json",
    contract: null,
    curated: true,
  };
}

/** An operation known only from the contract: its validators are built when first needed. */
function fromContract(op: ContractOperation): Operation {
  const json = op.responseTypes.every((t) => /\bjson\b/i.test(t));
  return {
    id: op.id,
    method: op.method,
    path: op.path,
    scope: op.scope,
    kind: op.kind,
    capability: op.capability,
    family: op.family,
    summary: op.summary,
    bodyType: op.body?.type ?? "json",
    response: json ? "json" : "binary",
    contract: op,
    curated: false,
    get params() {
      return validatorsOf(op).params;
    },
    get query() {
      return validatorsOf(op).query;
    },
    get body() {
      return validatorsOf(op).body;
    },
  };
}

function readOverrides(file: string): Record<string, { method: HttpMethod; path: string }> {
  const fail = (why: string) => new RoutesFileError(`PORTFOLIO_ROUTES_FILE (${file}): ${why}`);
  const raw = readJsonFile(file, fail);
  const parsed = overrideFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw fail(
      `${issue?.path.join(".") || "the file"}: ${issue?.message ?? "invalid"}; expected { "<operation id>": { "method": "GET", "path": "/..." } }`,
    );
  }
  for (const [id, { path }] of Object.entries(parsed.data)) {
    if (!(id in CATALOGUE))
      throw fail(`unknown operation id ${id} (known: ${Object.keys(CATALOGUE).join(", ")})`);
    const problem = pathProblem(path, placeholders(CATALOGUE[id as OperationId].path));
    if (problem) throw fail(`${id}: path ${JSON.stringify(path)} ${problem}`);
  }
  return parsed.data;
}

/** Why a path template is unusable, or null. Its placeholders must be the catalogue's. */
export function pathProblem(path: string, expected: string[]): string | null {
  if (!path.startsWith("/")) return "must start with / (it is relative to the base URL)";
  if (/[?#\s]/.test(path)) return "must not contain a query, a fragment or spaces";
  const segments = path.slice(1).split("/");
  if (segments.some((s) => s === "") || hasDotSegment(path))
    return "must not contain empty, . or .. segments (%2e included)";
  if (segments.some((s) => /[{}]/.test(s) && !/^\{[a-z_]+\}$/.test(s))) {
    return "must use whole-segment placeholders such as {deal_id}";
  }
  const found = placeholders(path);
  if ([...found].sort().join() !== [...expected].sort().join()) {
    return `must use the placeholders ${expected.map((p) => `{${p}}`).join(", ") || "(none)"}, found ${found.map((p) => `{${p}}`).join(", ") || "none"}`;
  }
  return null;
}
