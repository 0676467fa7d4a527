import { readFileSync } from "node:fs";
import type { SearchableOperation } from "../../src/longtail/search.js";

const CONTRACT = new URL("../snapshots/contract-full.json", import.meta.url);
/** Headers every operation has or that only say who acts: not what the operation is about. */
const HEADERS = new Set([
  "X-Request-ID",
  "Idempotency-Key",
  "X-Service-Delegated-User-Email",
  "X-Service-Delegated-User-Id",
]);
const METHODS = ["get", "put", "post", "patch", "delete"];

/** The operations of an OpenAPI export, as `find_api_operations` searches them. */
export function searchableOperations(contract: any = loadContract()): SearchableOperation[] {
  const deref = (node: any): any => {
    const ref: unknown = node?.$ref;
    if (typeof ref !== "string") return node;
    const [, , section, name] = ref.split("/"); // #/components/<section>/<name>
    return contract.components?.[section ?? ""]?.[name ?? ""];
  };
  const operations: SearchableOperation[] = [];
  for (const item of Object.values<any>(contract.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op?.operationId) continue;
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])]
        .map(deref)
        .filter((p: any) => p && p.in !== "header" && !HEADERS.has(p.name))
        .map((p: any) => String(p.name));
      const json = op.requestBody?.content?.["application/json"]?.schema;
      const body = deref(json ?? op.requestBody?.content?.["multipart/form-data"]?.schema);
      operations.push({
        id: op.operationId,
        family: op.tags?.[0] ?? "",
        kind: String(op["x-scope"] ?? "").endsWith(":read") ? "read" : "write",
        summary: op.summary ?? "",
        description: op.description ?? "",
        parameters: [...new Set([...parameters, ...Object.keys(body?.properties ?? {})])],
      });
    }
  }
  return operations;
}

export const loadContract = (): any => JSON.parse(readFileSync(CONTRACT, "utf8"));
