import { createHash } from "node:crypto";
import { validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ROUTES } from "../src/routes.js";
import { defineRoute, type Method, Router } from "../src/routing.js";
import { uuid } from "../src/validation.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

const route = (id: string, method: Method, path: string) =>
  defineRoute({
    id,
    family: "tasks",
    method,
    path,
    scope: "tasks:read",
    kind: "read",
    summary: id,
    response: { status: 204 },
    handle: () => ({ status: 204 }),
  });

describe("the router", () => {
  const pairs = [
    [route("me_get", "GET", "/users/me"), route("user_get", "GET", "/users/{user_id}")],
    [
      route("operation_imports_list", "GET", "/operations/imports"),
      route("operation_get", "GET", "/operations/{operation_id}"),
    ],
    [route("tasks_board", "GET", "/tasks/board"), route("task_get", "GET", "/tasks/{task_id}")],
  ] as const;

  it("lets literal segments win over parameters, in either declaration order", () => {
    for (const [literal, param] of pairs) {
      for (const routes of [
        [literal, param],
        [param, literal],
      ]) {
        const router = new Router(routes);
        const path = literal.path;
        expect(router.match("GET", path).match?.route.id, path).toBe(literal.id);
        const other = path.replace(/[^/]+$/, "0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40");
        expect(router.match("GET", other).match?.route.id, other).toBe(param.id);
      }
    }
  });

  it("decides at the first segment that differs, from the left", () => {
    const routes = [
      route("a", "GET", "/spvs/{spv_id}/attachments"),
      route("b", "GET", "/spvs/external/{external_id}"),
    ];
    for (const order of [routes, [...routes].reverse()]) {
      const router = new Router(order);
      expect(router.match("GET", "/spvs/external/attachments").match?.route.id).toBe("b");
      expect(router.match("GET", "/spvs/123/attachments").match?.route.id).toBe("a");
    }
  });

  it("answers a method it lacks with the methods it has, and nothing for unknown paths", () => {
    const router = new Router([
      route("tasks_board", "GET", "/tasks/board"),
      route("task_update", "PATCH", "/tasks/{task_id}"),
      route("task_delete", "DELETE", "/tasks/{task_id}"),
    ]);
    // PATCH finds the parameter route: `board` then fails the id's validation, as it should.
    expect(router.match("PATCH", "/tasks/board").match?.route.id).toBe("task_update");
    expect(router.match("PUT", "/tasks/board")).toEqual({
      match: null,
      allowed: ["GET", "PATCH", "DELETE"],
    });
    expect(router.match("GET", "/tasks")).toEqual({ match: null, allowed: [] });
  });

  it("refuses two routes that answer the same method and path shape", () => {
    expect(() => new Router([route("a", "GET", "/x/{a}"), route("b", "GET", "/x/{b}")])).toThrow(
      /routes a and b both answer GET x\/\{\}/,
    );
  });
});

// Routes only these tests serve: an upload, a file download, and PUT / DELETE.
const received: Array<{ title: string; bytes: Buffer }> = [];
const testRoutes = [
  defineRoute({
    id: "test_upload",
    family: "documents",
    method: "POST",
    path: "/test/uploads",
    scope: "documents:write",
    kind: "write",
    summary: "Upload a test file",
    upload: { file: "file", maxBytes: 4096 },
    body: z.strictObject({ title: z.string().min(1).max(200), operation_id: uuid.optional() }),
    response: {
      status: 201,
      schema: z.object({
        title: z.string(),
        filename: z.string(),
        content_type: z.string(),
        size: z.int(),
        sha256: z.string(),
      }),
    },
    handle({ body, file }) {
      if (!file) throw new Error("the pipeline guarantees a file");
      received.push({ title: body.title, bytes: file.bytes });
      return {
        status: 201,
        json: {
          title: body.title,
          filename: file.filename,
          content_type: file.contentType,
          size: file.bytes.length,
          sha256: createHash("sha256").update(file.bytes).digest("hex"),
        },
      };
    },
  }),
  defineRoute({
    id: "test_download",
    family: "documents",
    method: "GET",
    path: "/test/files/{name}",
    scope: "documents:read",
    kind: "read",
    summary: "Download a test file",
    params: z.strictObject({ name: z.string().max(40) }),
    response: { status: 200, binary: "application/pdf" },
    handle: ({ params }) => ({
      status: 200,
      bytes: Buffer.from(`%PDF-1.4\n% ${params.name}\n%%EOF\n`),
      contentType: "application/pdf",
    }),
  }),
  defineRoute({
    id: "test_put",
    family: "tasks",
    method: "PUT",
    path: "/test/things/{id}",
    scope: "tasks:write",
    kind: "write",
    summary: "Replace a test thing",
    params: z.strictObject({ id: z.string().max(10) }),
    body: z.strictObject({ value: z.int() }),
    response: { status: 200, schema: z.object({ id: z.string(), value: z.int() }) },
    handle: ({ params, body }) => ({ status: 200, json: { id: params.id, value: body.value } }),
  }),
  defineRoute({
    id: "test_delete",
    family: "tasks",
    method: "DELETE",
    path: "/test/things/{id}",
    scope: "tasks:write",
    kind: "write",
    summary: "Delete a test thing",
    params: z.strictObject({ id: z.string().max(10) }),
    response: { status: 204 },
    handle: () => ({ status: 204 }),
  }),
];

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false, routes: [...ROUTES, ...testRoutes] });

/** Sends a FormData body as fetch encodes it: multipart/form-data with a fresh boundary. */
async function upload(form: FormData | string, idempotencyKey: string, contentType?: string) {
  const res = await fetch(`${env.sandbox.baseUrl}/test/uploads`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${await env.client.token()}`,
      "idempotency-key": idempotencyKey,
      ...(contentType ? { "content-type": contentType } : {}),
    },
    body: form,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

function pdfForm(bytes: Buffer, fields: Record<string, string> = { title: "Rapport T3" }) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append("file", new Blob([bytes], { type: "application/pdf" }), "rapport-t3.pdf");
  return form;
}

describe("multipart uploads", () => {
  const bytes = Buffer.concat([Buffer.from("%PDF-1.4\n"), Buffer.from([0, 0xff, 0xfe, 13, 10])]);

  it("parses the fields and the file, byte for byte", async () => {
    const reply = await upload(pdfForm(bytes), "upload-1");
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      title: "Rapport T3",
      filename: "rapport-t3.pdf",
      content_type: "application/pdf",
      size: bytes.length,
      sha256: createHash("sha256").update(bytes).digest("hex"),
    });
    expect(received.at(-1)?.bytes.equals(bytes)).toBe(true);
    const logged = env.sandbox.control.requests({ routeId: "test_upload" }).at(-1);
    expect(logged?.body).toMatch(/^<multipart body, \d+ bytes>$/);
  });

  it("replays the same file under the same key, and refuses another file under it", async () => {
    const before = received.length;
    const replay = await upload(pdfForm(bytes), "upload-1");
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(received).toHaveLength(before);
    const other = await upload(pdfForm(Buffer.from("%PDF-1.4\nautre")), "upload-1");
    expect(other.status).toBe(409);
    expect(other.body.reason_code).toBe("idempotency_key_reused");
  });

  it("refuses a body over the route's cap with 413 before anything is applied", async () => {
    const before = received.length;
    const reply = await upload(pdfForm(Buffer.alloc(5000, 1)), "upload-big");
    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({ reason_code: "payload_too_large", route_id: "test_upload" });
    expect(received).toHaveLength(before);
  });

  it("refuses what is not one multipart file with its fields, naming the field", async () => {
    const json = await upload(JSON.stringify({ title: "x" }), "upload-json", "application/json");
    expect(json.status).toBe(415);
    expect(json.body.reason_code).toBe("unsupported_media_type");

    const noFile = new FormData();
    noFile.append("title", "Sans fichier");
    const missing = await upload(noFile, "upload-nofile");
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([
      { field: "file", rule: "required", message: "must carry the file" },
    ]);

    const twice = pdfForm(bytes);
    twice.append("title", "Encore");
    expect((await upload(twice, "upload-twice")).body.errors[0]).toMatchObject({
      field: "title",
      rule: "single value",
    });

    const stray = pdfForm(bytes);
    stray.append("annexe", new Blob([bytes]), "annexe.pdf");
    expect((await upload(stray, "upload-stray")).body.errors[0]).toMatchObject({
      field: "annexe",
    });

    const untitled = await upload(pdfForm(bytes, {}), "upload-untitled");
    expect(untitled.status).toBe(422);
    expect(untitled.body.errors[0].field).toBe("title");

    const broken = await upload(
      "--x\r\nnot a part",
      "upload-broken",
      "multipart/form-data; boundary=x",
    );
    expect(broken.status).toBe(422);
    expect(broken.body.reason_code).toBe("invalid_multipart");
  });
});

describe("methods and binary answers", () => {
  it("routes PUT and DELETE, and answers 204 without a body", async () => {
    const put = await env.client.call("PUT", "/test/things/a1", {
      body: { value: 3 },
      idempotencyKey: "put-1",
    });
    expect(put).toMatchObject({ status: 200, body: { id: "a1", value: 3 } });
    const res = await fetch(`${env.sandbox.baseUrl}/test/things/a1`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${await env.client.token()}`, "idempotency-key": "del-1" },
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    const wrong = await env.client.call("POST", "/test/things/a1", { idempotencyKey: "post-1" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("PUT, DELETE");
  });

  it("answers a file with its content type", async () => {
    const reply = await env.client.get("/test/files/rapport");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("application/pdf");
    expect((reply.body as Buffer).subarray(0, 5).toString()).toBe("%PDF-");
  });

  it("describes both in the export: multipart with its file, the file's content type", async () => {
    const res = await fetch(
      `${env.sandbox.baseUrl.replace(/\/v1$/, "")}/_admin/keys/${env.sandbox.credentials.keyId}/contract.json`,
    );
    const contract = (await res.json()) as any;
    const uploadBody = contract.paths["/test/uploads"].post.requestBody;
    expect(uploadBody.content["multipart/form-data"].schema).toMatchObject({
      properties: {
        title: { type: "string", maxLength: 200 },
        file: { type: "string", contentMediaType: "application/octet-stream" },
      },
      required: ["file", "title"],
    });
    const download = contract.paths["/test/files/{name}"].get.responses["200"];
    expect(download.content["application/pdf"].schema.contentMediaType).toBe("application/pdf");
    expect(contract.paths["/test/things/{id}"].delete.responses["204"]).toBeDefined();
    expect((await validate(contract)).valid).toBe(true);
  });
});
