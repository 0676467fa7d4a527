import { createHash, timingSafeEqual } from "node:crypto";
import { describeIssue, fieldPath } from "@portfolio-mcp/field-errors";
import { z } from "zod";
import { closest } from "../closest.js";
import type { DelegatedUser } from "../config.js";
import { ConfigError } from "../config.js";
import { readJsonFile } from "../json-file.js";

/** Who is calling over HTTP, fixed when their session starts. */
export interface Principal {
  /**
   * The client's name in the clients file ("default" for the single token); for a user signed
   * in with OAuth, `oauth:` and a hash of issuer and subject. Sessions, drafted writes, sealed
   * confirmations and rate limits are keyed by it.
   */
  id: string;
  delegatedUser: DelegatedUser | null;
  readOnly: boolean;
  /** Its allowlist: tool names, operation ids and families it may use; null for all. */
  tools: ReadonlySet<string> | null;
  /** The signed-in person's verified e-mail (OAuth, when users are named by it); for the audit. */
  email?: string;
  /** OAuth only: what the token grants and which OAuth client holds it (for logs). */
  oauth?: {
    scopes: readonly string[];
    clientId: string | null;
    /** Read-only for want of portfolio:write alone: a token with that scope would lift it. */
    lacksWriteScope: boolean;
  };
}

/**
 * `{ "email": … }` or `{ "id": … }`: the user the API is told each call acts for, in a header,
 * so one line (a CR, LF or NUL would end the header and start another).
 */
export const delegatedUserSchema = z
  .union(
    [z.strictObject({ email: z.string().min(3) }), z.strictObject({ id: z.string().min(1) })],
    {
      error: (issue) =>
        issue.input === undefined ? "is required" : 'must be { "email": … } or { "id": … }',
    },
  )
  .superRefine((user, ctx) => {
    const [key, value] = "email" in user ? ["email", user.email] : ["id", user.id];
    if (/[\r\n\0]/.test(value))
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: "must be one line, without CR, LF or NUL (it is sent in a header)",
      });
  });

const clientsFile = z.strictObject({
  clients: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "must be 1-64 of letters, digits, _ . -"),
        token_sha256: z
          .string()
          .regex(/^[0-9a-f]{64}$/, "must be the SHA-256 of the token, 64 lowercase hex"),
        delegated_user: delegatedUserSchema,
        read_only: z.boolean().optional(),
        tools: z.array(z.string()).optional(),
      }),
    )
    .min(1),
});

export const sha256Hex = (token: string) => createHash("sha256").update(token).digest("hex");

const EXPECTED_SHAPE =
  'expected { "clients": [ { "name": "…", "token_sha256": "<64 hex>", "delegated_user": { "email": "…" } or { "id": "…" }, "read_only": false, "tools": ["<tool, operation id or family>"] } ] } (read_only and tools optional)';
/**
 * A file entry's `tools`, checked against what the deployment can offer: an unknown entry is an
 * error naming the nearest real one; drafts that nothing could settle are a warning.
 */
export function checkAllowlist(
  who: string,
  entry: { tools?: string[] | undefined; read_only?: boolean | undefined },
  terms: AllowlistTerms,
  fail: (why: string) => Error,
  warn: (warning: string) => void,
): ReadonlySet<string> | null {
  const allowlist = entry.tools ? new Set(entry.tools) : null;
  const unknown = entry.tools?.filter((name) => !terms.names.has(name)) ?? [];
  if (unknown.length > 0) {
    const hints = unknown.map((name) => {
      const near = closest(name, terms.names);
      return near ? `${name} (did you mean ${near}?)` : name;
    });
    throw fail(
      `${who} lists unknown entries in tools: ${hints.join(", ")}; an entry is a tool name, or an operation id or a family of ${terms.source}`,
    );
  }
  const unsettled = allowlist && terms.unsettled(allowlist, entry.read_only ?? false);
  if (unsettled) {
    warn(
      `${who} may draft writes (${unsettled.drafts.join("; ")}) but its tools lack ${unsettled.missing.join(" and ")}: with a client that cannot show a confirmation form, its drafts can be neither confirmed nor cancelled`,
    );
  }
  return allowlist;
}

/** What the entries of an allowlist may name, and what drafting under one needs. */
export interface AllowlistTerms {
  /** Tool names, operation ids and families. */
  names: ReadonlySet<string>;
  /** Where the operation ids and families come from, for the refusal of an unknown entry. */
  source: string;
  /** What the client could draft with no tool to confirm or cancel it; null when nothing. */
  unsettled(
    allowlist: ReadonlySet<string>,
    readOnly: boolean,
  ): { drafts: string[]; missing: string[] } | null;
}

/**
 * The bearer tokens HTTP clients present, stored as SHA-256 only. A presented token is hashed
 * and compared with every entry in constant time, so neither the match nor its position shows
 * in the timing, and no token is ever held in clear.
 */
export class ClientRegistry {
  private constructor(
    private readonly entries: Array<{ hash: Buffer; principal: Principal }>,
    /** Entries that work but probably not as meant; logged at startup. */
    readonly warnings: string[] = [],
  ) {}

  /** The single-token mode: one client, the server's own delegated user. */
  static single(token: string, delegatedUser: DelegatedUser | null): ClientRegistry {
    return new ClientRegistry([
      {
        hash: Buffer.from(sha256Hex(token), "hex"),
        principal: { id: "default", delegatedUser, readOnly: false, tools: null },
      },
    ]);
  }

  /** No static token at all: with sign-in on and no clients file, OAuth is the only way in. */
  static none(): ClientRegistry {
    return new ClientRegistry([]);
  }

  /** PORTFOLIO_MCP_CLIENTS_FILE; a wrong file is a startup error naming the entry and rule. */
  static fromFile(path: string, terms: AllowlistTerms): ClientRegistry {
    const fail = (why: string) => new ConfigError(`PORTFOLIO_MCP_CLIENTS_FILE (${path}): ${why}`);
    const raw = readJsonFile(path, fail);
    const parsed = clientsFile.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? fieldPath(issue.path) : "the file";
      throw fail(
        `${where} ${issue ? describeIssue(issue).message : "is invalid"}; ${EXPECTED_SHAPE}`,
      );
    }
    const warnings: string[] = [];
    const names = new Set<string>();
    const hashes = new Set<string>();
    const entries = parsed.data.clients.map((client) => {
      if (names.has(client.name)) throw fail(`client name ${client.name} appears twice`);
      if (hashes.has(client.token_sha256))
        throw fail(`client ${client.name} reuses another client's token`);
      names.add(client.name);
      hashes.add(client.token_sha256);
      const allowlist = checkAllowlist(`client ${client.name}`, client, terms, fail, (warning) =>
        warnings.push(`PORTFOLIO_MCP_CLIENTS_FILE: ${warning}`),
      );
      return {
        hash: Buffer.from(client.token_sha256, "hex"),
        principal: {
          id: client.name,
          delegatedUser: client.delegated_user,
          readOnly: client.read_only ?? false,
          tools: allowlist,
        },
      };
    });
    return new ClientRegistry(entries, warnings);
  }

  /** The client behind an `Authorization: Bearer` header, or null. */
  authenticate(header: string | undefined): Principal | null {
    const presented = /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1];
    const digest = Buffer.from(sha256Hex(presented ?? ""), "hex");
    let found: Principal | null = null;
    for (const entry of this.entries) {
      if (timingSafeEqual(digest, entry.hash) && presented) found = entry.principal;
    }
    return found;
  }
}
