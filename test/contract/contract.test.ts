import {
  DEMO_KEYS,
  type OpenApiDocument,
  ROUTES,
  type Sandbox,
  startSandbox,
} from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PartnerTestClient } from "../../packages/sandbox/test/helpers/partner-client.js";
import {
  ContractValidator,
  generate,
  operationsInWalkOrder,
  successOf,
  type WalkedOperation,
} from "./walker.js";

/**
 * The contract test: for each demo key, it fetches the key's export over loopback and walks
 * it. Every operation is called over real HTTP after a real token exchange, with a request
 * built from the export's schemas and the seeded data, and must answer the status and the
 * body the export describes; every write must refuse a missing Idempotency-Key; every
 * operation outside the export must be refused with 403 and its route_id. Nothing here lists
 * operations by hand: a route the sandbox adds is walked the day it is served.
 */

const KEYS = [
  DEMO_KEYS.full,
  DEMO_KEYS.readOnly,
  DEMO_KEYS.limited,
  DEMO_KEYS.portfolioManager,
] as const;
const NO_SUCH_ID = "0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40";
const SMALL_PDF =
  "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

async function exportOf(sandbox: Sandbox, keyId: string): Promise<OpenApiDocument> {
  const admin = sandbox.baseUrl.replace(/\/v1$/, "/_admin");
  const res = await fetch(`${admin}/keys/${keyId}/contract.json`);
  if (res.status !== 200) throw new Error(`export of ${keyId}: ${res.status}`);
  return (await res.json()) as OpenApiDocument;
}

const fill = (template: string, params: Record<string, string>) =>
  template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
const paramNames = (template: string) => [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
const lower = (method: string) => method.toLowerCase();

describe.each(KEYS)("the contract of $keyId", (key) => {
  let sandbox: Sandbox;
  let client: PartnerTestClient;
  let contract: OpenApiDocument;
  let validator: ContractValidator;
  let delegationHeader: string;
  let delegatedEmail: string;
  const today = () => new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    // A sandbox of its own: the walk changes state, and must find the seeded data as seeded.
    sandbox = await startSandbox({ rateLimit: false });
    client = PartnerTestClient.for(sandbox, key);
    contract = await exportOf(sandbox, key.keyId);
    validator = new ContractValidator(contract);
    const components = contract.components as any;
    delegationHeader = components.parameters.DelegatedUserEmail.name;
    const user = sandbox.control.state.data.users.find((u) => u.id === key.delegatedUsers[0]);
    delegatedEmail = user?.email ?? "";
  });
  afterAll(() => sandbox.close());

  async function send(
    o: { method: string; delegated: boolean; id: string },
    path: string,
    options: {
      query?: Record<string, string>;
      body?: unknown;
      form?: FormData;
      idempotencyKey?: string;
    },
  ): Promise<Reply> {
    const url = new URL(`${sandbox.baseUrl}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {}))
      url.searchParams.set(name, value);
    const headers: Record<string, string> = {
      authorization: `Bearer ${await client.token()}`,
      "x-request-id": `contract-${o.id}`,
    };
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
    if (o.delegated) headers[delegationHeader.toLowerCase()] = delegatedEmail;
    let body: string | FormData | undefined = options.form;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
    const res = await fetch(url, { method: o.method, headers, body });
    const type = res.headers.get("content-type") ?? "";
    const bytes = Buffer.from(await res.arrayBuffer());
    return {
      status: res.status,
      headers: res.headers,
      body: type.includes("json") ? JSON.parse(bytes.toString("utf8")) : bytes,
    };
  }

  /** A path id from a seeded record: the first item of the list route above it in the path. */
  const listed = new Map<string, Record<string, unknown>>();
  async function idFromList(o: WalkedOperation, name: string, params: Record<string, string>) {
    const segments = o.path.split("/");
    const prefix = segments.slice(0, segments.indexOf(`{${name}}`));
    for (; prefix.length > 1; prefix.pop()) {
      const template = prefix.join("/");
      const list = contract.paths[template]?.get;
      if (!list) continue;
      const path = fill(template, params);
      if (!listed.has(path)) {
        const reply = await send(
          { method: "GET", delegated: o.delegated, id: list.operationId },
          path,
          {},
        );
        const items = Array.isArray(reply.body?.items)
          ? reply.body.items
          : (Object.values(reply.body ?? {}).find(Array.isArray) as unknown[] | undefined);
        if (!items?.[0]) throw new Error(`${template} lists nothing to take ${name} from`);
        listed.set(path, items[0] as Record<string, unknown>);
      }
      const item = listed.get(path)!;
      const value = item[name] ?? item.id ?? item.key ?? item[name.split("_").at(-1)!];
      return String(value);
    }
    throw new Error(
      `no list route in the export leads to ${name}: declare an example on the route`,
    );
  }

  /** The request an operation needs to succeed, from its schemas, seeded data and example. */
  async function buildRequest(o: WalkedOperation) {
    const route = ROUTES.find((r) => r.id === o.id);
    const example = route?.example?.({ state: sandbox.control.state, today: today() }) ?? {};
    const params: Record<string, string> = {};
    for (const name of paramNames(o.path))
      params[name] = example.params?.[name] ?? (await idFromList(o, name, params));
    const query: Record<string, string> = { ...example.query };
    for (const p of (o.op.parameters as any[]).filter((p) => p.in === "query" && p.required))
      query[p.name] ??= String(generate(p.schema, validator, today()));

    const content = o.op.requestBody?.content ?? {};
    const pointer = ["paths", o.path, lower(o.method), "requestBody", "content"];
    let body: unknown;
    let form: FormData | undefined;
    if (content["application/json"] && (o.op.requestBody.required || example.body !== undefined)) {
      const generated = generate(content["application/json"].schema, validator, today());
      body = { ...(generated as object), ...(example.body as object) };
      const invalid = validator.check([...pointer, "application/json", "schema"], body);
      if (invalid) throw new Error(`cannot build a valid body (${invalid}): declare an example`);
    }
    if (content["multipart/form-data"]) {
      const schema = validator.resolve(content["multipart/form-data"].schema);
      const fields = {
        ...(generate(schema, validator, today()) as object),
        ...(example.body as object),
      };
      form = new FormData();
      for (const [name, value] of Object.entries(fields)) {
        if (schema.properties?.[name]?.contentMediaType)
          form.append(name, new Blob([SMALL_PDF], { type: "application/pdf" }), "contrat.pdf");
        else form.append(name, String(value));
      }
    }
    return { path: fill(o.path, params), query, body, form };
  }

  function checkSuccess(o: WalkedOperation, reply: Reply): string | null {
    const success = successOf(o.op);
    if (reply.status !== success.status)
      return `answered ${reply.status} instead of ${success.status}: ${JSON.stringify(reply.body).slice(0, 300)}`;
    if (reply.headers.get("x-request-id") !== `contract-${o.id}` && o.kind !== "exchange")
      return "did not echo X-Request-ID";
    if (success.mediaType === null)
      return reply.body.length === 0 ? null : "answered a body where none is described";
    if (success.mediaType === "application/json") {
      const where = ["paths", o.path, lower(o.method), ...success.pointer!];
      const invalid = validator.check(where, reply.body);
      return invalid && `body does not match the export's schema: ${invalid}`;
    }
    const type = reply.headers.get("content-type") ?? "";
    if (!success.mediaTypes.some((mediaType) => type.startsWith(mediaType)))
      return `content type ${type} instead of ${success.mediaTypes.join(" or ")}`;
    return Buffer.isBuffer(reply.body) && reply.body.length > 0 ? null : "an empty file";
  }

  it("answers every operation of its export as the export describes it", async () => {
    const failures: string[] = [];
    const walked = operationsInWalkOrder(contract);
    expect(walked.length).toBeGreaterThan(0);
    for (const o of walked) {
      try {
        if (o.kind === "exchange") {
          const reply = await client.exchange();
          const failure = checkSuccess(o, reply);
          if (failure) failures.push(`${o.id}: ${failure}`);
          continue;
        }
        const request = await buildRequest(o);
        if (o.kind === "write") {
          // Nothing is applied without the key: the same request is then sent with one.
          const refused = await send(o, request.path, request);
          if (refused.status !== 422 || refused.body?.reason_code !== "idempotency_key_missing")
            failures.push(`${o.id}: without Idempotency-Key answered ${refused.status}`);
          else if (validator.check(["components", "schemas", "Problem"], refused.body))
            failures.push(`${o.id}: the refusal is not a Problem`);
        }
        const reply = await send(o, request.path, {
          ...request,
          idempotencyKey: o.kind === "write" ? `contract-${o.id}` : undefined,
        });
        const failure = checkSuccess(o, reply);
        if (failure) failures.push(`${o.id}: ${failure}`);
      } catch (error) {
        failures.push(`${o.id}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("refuses every operation outside its export with 403 and its route_id", async () => {
    const full = await exportOf(sandbox, DEMO_KEYS.full.keyId);
    const own = new Set(operationsInWalkOrder(contract).map((o) => o.id));
    const outside = operationsInWalkOrder(full).filter((o) => !own.has(o.id));
    expect(outside.length === 0).toBe(key.keyId === DEMO_KEYS.full.keyId);
    const failures: string[] = [];
    for (const o of outside) {
      const params = Object.fromEntries(paramNames(o.path).map((n) => [n, NO_SUCH_ID]));
      const reply = await send(o, fill(o.path, params), {
        idempotencyKey: o.kind === "write" ? `outside-${o.id}` : undefined,
      });
      if (reply.status !== 403 || reply.body?.route_id !== o.id)
        failures.push(`${o.id}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);
      else if (validator.check(["components", "schemas", "Problem"], reply.body))
        failures.push(`${o.id}: the refusal is not a Problem`);
    }
    expect(failures).toEqual([]);
  });
});
