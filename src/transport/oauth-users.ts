import { describeIssue, fieldPath } from "@portfolio-mcp/field-errors";
import { z } from "zod";
import { ConfigError, type DelegatedUser } from "../config.js";
import { readJsonFile } from "../json-file.js";
import { type AllowlistTerms, checkAllowlist, delegatedUserSchema } from "./clients.js";

/** What a signed-in user may do, from their entry in the users file. */
export interface OAuthUser {
  delegatedUser: DelegatedUser;
  readOnly: boolean;
  tools: ReadonlySet<string> | null;
}

/**
 * PORTFOLIO_OAUTH_USERS_FILE: who may sign in, keyed by the value of the configured claim
 * (`email` unless PORTFOLIO_OAUTH_USER_CLAIM says otherwise), and whom the server acts for
 * upstream on their behalf. Shaped like the clients file, with the claim where the token hash
 * was. E-mail addresses are compared without regard to case; any other claim exactly.
 */
export class OAuthUsers {
  private constructor(
    private readonly entries: ReadonlyMap<string, OAuthUser>,
    readonly claim: string,
    /** Entries that work but probably not as meant; logged at startup. */
    readonly warnings: string[],
  ) {}

  static fromFile(path: string, claim: string, terms: AllowlistTerms): OAuthUsers {
    const fail = (why: string) => new ConfigError(`PORTFOLIO_OAUTH_USERS_FILE (${path}): ${why}`);
    const shape = `expected { "users": [ { "${claim}": "<the token's ${claim} claim>", "delegated_user": { "email": "…" } or { "id": "…" }, "read_only": false, "tools": ["<tool, operation id or family>"] } ] } (read_only and tools optional; the key is the claim PORTFOLIO_OAUTH_USER_CLAIM names)`;
    const raw = readJsonFile(path, fail);
    const schema = z.strictObject({
      users: z
        .array(
          z.strictObject({
            [claim]: z.string().min(1, "must not be empty"),
            delegated_user: delegatedUserSchema,
            read_only: z.boolean().optional(),
            tools: z.array(z.string()).optional(),
          }),
        )
        .min(1),
    });
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? fieldPath(issue.path) : "the file";
      throw fail(`${where} ${issue ? describeIssue(issue).message : "is invalid"}; ${shape}`);
    }
    const warnings: string[] = [];
    const entries = new Map<string, OAuthUser>();
    for (const user of parsed.data.users) {
      const value = user[claim] as string;
      const key = normalise(claim, value);
      if (entries.has(key)) throw fail(`${claim} ${value} appears twice`);
      const entry = user as {
        delegated_user: DelegatedUser;
        read_only?: boolean;
        tools?: string[];
      };
      const tools = checkAllowlist(`user ${value}`, entry, terms, fail, (warning) =>
        warnings.push(`PORTFOLIO_OAUTH_USERS_FILE: ${warning}`),
      );
      entries.set(key, {
        delegatedUser: entry.delegated_user,
        readOnly: entry.read_only ?? false,
        tools,
      });
    }
    return new OAuthUsers(entries, claim, warnings);
  }

  /** The entry for this value of the claim, or null: not on the list. */
  find(value: string): OAuthUser | null {
    return this.entries.get(normalise(this.claim, value)) ?? null;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** E-mail addresses are case-insensitive in practice (identity providers differ in case). */
function normalise(claim: string, value: string): string {
  return claim === "email" ? value.toLowerCase() : value;
}
