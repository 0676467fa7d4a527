import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { SCHEMA, serverJson } from "../../scripts/lib/server-json.mjs";
import { describeVariables } from "../../src/config.js";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const server = JSON.parse(read("server.json"));
const pkg = JSON.parse(read("package.json"));
const manifest = JSON.parse(read("manifest.json"));

/**
 * The rules of the MCP Registry's server.json schema 2025-12-11 that this file touches,
 * restated here (the schema itself is published without a licence, so it is not copied
 * into the repository). Stricter than the original where it helps: no property the schema
 * does not define.
 */
const input = {
  type: "object",
  additionalProperties: false,
  properties: {
    description: { type: "string" },
    isRequired: { type: "boolean" },
    isSecret: { type: "boolean" },
    format: { enum: ["string", "number", "boolean", "filepath"] },
    value: { type: "string" },
    default: { type: "string" },
    placeholder: { type: "string" },
    choices: { type: "array", items: { type: "string" } },
  },
};
const keyValue = {
  type: "object",
  additionalProperties: false,
  required: ["name"],
  properties: {
    ...input.properties,
    name: { type: "string" },
    variables: { type: "object", additionalProperties: input },
  },
};
const url = { type: "string", pattern: "^https?://[^\\s]+$" };
const notARange = { not: { pattern: "^[\\^~><=]|\\.x$|\\*" } };
const SERVER_2025_12_11 = {
  type: "object",
  additionalProperties: false,
  required: ["name", "description", "version"],
  properties: {
    $schema: { const: SCHEMA },
    name: {
      type: "string",
      minLength: 3,
      maxLength: 200,
      pattern: "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$",
    },
    title: { type: "string", minLength: 1, maxLength: 100 },
    description: { type: "string", minLength: 1, maxLength: 100 },
    version: { type: "string", maxLength: 255, ...notARange },
    packages: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["registryType", "identifier", "transport"],
        properties: {
          registryType: { type: "string" },
          identifier: { type: "string" },
          version: { type: "string", minLength: 1, not: { const: "latest" } },
          fileSha256: { type: "string", pattern: "^[a-f0-9]{64}$" },
          transport: {
            type: "object",
            required: ["type"],
            properties: { type: { enum: ["stdio", "streamable-http", "sse"] }, url },
          },
          environmentVariables: { type: "array", items: keyValue },
        },
      },
    },
    remotes: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["type", "url"],
        properties: {
          type: { enum: ["streamable-http", "sse"] },
          url,
          headers: { type: "array", items: keyValue },
          variables: { type: "object", additionalProperties: input },
        },
      },
    },
  },
};

describe("server.json", () => {
  it("is valid under the MCP Registry's schema 2025-12-11", () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(SERVER_2025_12_11);
    expect(validate(server), JSON.stringify(validate.errors)).toBe(true);
    // The restatement refuses what the schema refuses.
    expect(validate({ ...server, name: "no-slash" })).toBe(false);
    expect(
      validate({ ...server, remotes: [{ type: "streamable-http", url: "{baseUrl}/mcp" }] }),
    ).toBe(false);
  });

  it("is what npm run pack:mcpb writes from package.json, manifest.json and the server's variables", () => {
    const sha = server.packages[0].fileSha256;
    expect(server).toEqual(serverJson(pkg, manifest, sha, describeVariables()));
    expect(server.version).toBe(pkg.version);
    expect(server.title).toBe(manifest.display_name);
    expect(server.packages[0].identifier).toMatch(
      new RegExp(`/portfolio-mcp-${pkg.version}\\.mcpb$`),
    );
    // The bundle asks for the secret as a secret; so does the registry entry.
    const secrets = server.packages[0].environmentVariables
      .filter((v: { isSecret: boolean }) => v.isSecret)
      .map((v: { name: string }) => v.name);
    expect(secrets).toEqual(["PORTFOLIO_API_SECRET"]);
    // Once packed here, the SHA-256 is the bundle's.
    const bundle = new URL(`../../build/portfolio-mcp-${pkg.version}.mcpb`, import.meta.url);
    if (existsSync(bundle))
      expect(createHash("sha256").update(readFileSync(bundle)).digest("hex")).toBe(sha);
  });

  it("names the image's registry label, and the docs document its variables", () => {
    expect(read("Containerfile")).toContain(`io.modelcontextprotocol.server.name="${server.name}"`);
    expect(read("Containerfile")).toContain(`org.opencontainers.image.version="${pkg.version}"`);
    expect(read("README.md")).toContain("`server.json`");
    const configuration = read("docs/running.md");
    for (const { name } of server.packages[0].environmentVariables)
      expect(configuration, name).toContain(`\`${name}\``);
  });
});
