import { createHmac, randomBytes } from "node:crypto";
import type { Sandbox } from "../../src/index.js";

/**
 * A deliberately small client for testing the sandbox: it signs and calls exactly as spec
 * part 5 reads, independently of src/auth and src/api.
 */

export interface KeyCredentials {
  keyId: string;
  secret: string;
}

export interface ExchangeFields {
  key_id: string;
  timestamp: number;
  nonce: string;
  signature: string;
}

export function signedExchange(
  key: KeyCredentials,
  options: { timestamp?: number; nonce?: string; prefix?: string } = {},
): ExchangeFields {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const nonce = options.nonce ?? randomBytes(16).toString("hex");
  const message = [
    options.prefix ?? "SERVICE-EXTERNAL-API-TOKEN-V1",
    key.keyId,
    timestamp,
    nonce,
  ].join("\n");
  const signature = createHmac("sha256", key.secret).update(message).digest("hex");
  return { key_id: key.keyId, timestamp, nonce, signature };
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CallOptions {
  query?: Record<string, string | number | boolean>;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  /** A bearer to send; defaults to the client's own, `null` sends none. */
  bearer?: string | null;
  idempotencyKey?: string;
  /** Delegation header to send: the client's user by email (default on /users/me*), or none. */
  delegate?: "email" | "id" | "none";
}

export class PartnerTestClient {
  private bearer: string | null = null;

  constructor(
    readonly baseUrl: string,
    readonly key: KeyCredentials,
    readonly user: { email: string; id: string } | null = null,
    readonly options: { prefix?: string; delegationPrefix?: string } = {},
  ) {}

  static for(sandbox: Sandbox, key: KeyCredentials = sandbox.credentials): PartnerTestClient {
    const c = sandbox.credentials;
    return new PartnerTestClient(
      sandbox.baseUrl,
      key,
      { email: c.delegatedUserEmail, id: c.delegatedUserId },
      {
        prefix: c.tokenPrefix,
        delegationPrefix: c.delegationHeaderPrefix,
      },
    );
  }

  async exchange(
    fields: unknown = signedExchange(this.key, { prefix: this.options.prefix }),
  ): Promise<Reply> {
    const res = await fetch(`${this.baseUrl}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(fields),
    });
    return { status: res.status, headers: res.headers, body: await res.json() };
  }

  async token(): Promise<string> {
    if (this.bearer) return this.bearer;
    const reply = await this.exchange();
    if (reply.status !== 200)
      throw new Error(`exchange failed: ${reply.status} ${JSON.stringify(reply.body)}`);
    this.bearer = reply.body.access_token as string;
    return this.bearer;
  }

  forgetToken(): void {
    this.bearer = null;
  }

  async call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<Reply<T>> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {}))
      url.searchParams.append(name, String(value));
    const headers: Record<string, string> = { ...options.headers };
    const bearer = options.bearer === undefined ? await this.token() : options.bearer;
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey;
    const delegate = options.delegate ?? (path.startsWith("/users/me") ? "email" : "none");
    const prefix = this.options.delegationPrefix ?? "X-Service-Delegated-User";
    if (delegate === "email" && this.user) headers[`${prefix}-Email`] = this.user.email;
    if (delegate === "id" && this.user) headers[`${prefix}-Id`] = this.user.id;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(url, { method, headers, body });
    const type = res.headers.get("content-type") ?? "";
    const parsed = type.includes("json") ? await res.json() : Buffer.from(await res.arrayBuffer());
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  get<T = any>(path: string, options?: CallOptions) {
    return this.call<T>("GET", path, options);
  }

  /** A write with a fresh Idempotency-Key unless one is given. */
  write<T = any>(method: "POST" | "PATCH", path: string, body: unknown, options: CallOptions = {}) {
    return this.call<T>(method, path, {
      idempotencyKey: `test-${randomBytes(8).toString("hex")}`,
      ...options,
      body,
    });
  }
}

export function asUser(
  client: PartnerTestClient,
  user: { email: string; id: string },
): PartnerTestClient {
  return new PartnerTestClient(client.baseUrl, client.key, user, client.options);
}

/** A request whose path goes on the wire byte for byte (fetch would normalise `..` away). */
export async function rawRequest(
  baseUrl: string,
  method: string,
  rawPath: string,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const { request } = await import("node:http");
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method, path: `${url.pathname}${rawPath}`, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({
            status: res.statusCode ?? 0,
            headers: new Headers(res.headers as Record<string, string>),
            body: text ? JSON.parse(text) : null,
          });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}
