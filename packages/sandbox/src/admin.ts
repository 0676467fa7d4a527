import type { ContractOptions } from "./contract/openapi.js";
import { buildContract } from "./contract/openapi.js";
import type { SandboxKey } from "./keys.js";
import { Problem } from "./problem.js";
import type { OperationMeta, RouteResult } from "./routing.js";
import type { AdminRequest } from "./server.js";

const CONTRACT_PATH = /^\/_admin\/keys\/([^/]+)\/contract\.json$/;
const LOOPBACK = new Set(["127.0.0.1", "::1"]);

export interface AdminDeps {
  keys: ReadonlyMap<string, SandboxKey>;
  /** What the sandbox serves, the token exchange included, at the paths it serves them. */
  operations: readonly OperationMeta[];
  /** The export's options for a request that arrived with this Host header. */
  contractOptions(host: string | undefined): ContractOptions;
}

/**
 * The administrator's side of the sandbox, outside /v1 and without a bearer: for now the
 * per-key export, `GET /_admin/keys/{key_id}/contract.json`. Only from the loopback address,
 * as an administration console would be.
 */
export function createAdmin(deps: AdminDeps) {
  return ({ method, path, address, host }: AdminRequest): RouteResult => {
    if (!LOOPBACK.has(address)) {
      throw new Problem(403, "Administration routes answer the loopback address only.", {
        reasonCode: "admin_loopback_only",
      });
    }
    const keyId = CONTRACT_PATH.exec(path)?.[1];
    if (keyId === undefined)
      throw new Problem(404, `No route ${path}.`, { reasonCode: "route_not_found" });
    if (method !== "GET") {
      throw new Problem(405, "Use GET on this path.", {
        reasonCode: "method_not_allowed",
        headers: { Allow: "GET" },
      });
    }
    const key = deps.keys.get(keyId);
    if (!key) throw new Problem(404, `No key ${keyId}.`, { reasonCode: "key_not_found" });
    return { status: 200, json: buildContract(deps.operations, key, deps.contractOptions(host)) };
  };
}
