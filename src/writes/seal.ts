import * as aead from "../aead.js";
import { StateKeys } from "../state/keys.js";

/**
 * The request state of an input-required round trip (MCP 2026-07-28): the client keeps it and
 * sends it back with the person's answer, so it must be opaque and unforgeable. AES-256-GCM,
 * authenticated, with its binding inside: the intent, the tool, a digest of the arguments, the
 * user and client it was drafted for, and an expiry. Whoever shares the key (every replica of a
 * deployment with the same state directory or PORTFOLIO_STATE_SECRET) can open it; nobody can
 * read or change it without the key.
 */

export interface SealedState {
  /** The intent to deliver once the person accepts. */
  intent: string;
  tool: string;
  /** sha256 of the canonical arguments of the call that drafted it. */
  args: string;
  user: string | null;
  client: string;
  /** Milliseconds since the epoch. */
  expires: number;
}

const VERSION = "s1";
const AAD = Buffer.from("portfolio-mcp/request-state/v1");

export class SealError extends Error {
  override name = "SealError";
}

export class Sealer {
  private constructor(
    private readonly key: Buffer,
    private readonly clock: () => number,
  ) {}

  /**
   * The key from PORTFOLIO_STATE_SECRET (any length; hashed to 32 bytes), else from
   * `<state dir>/state-secret`, created once with 32 random bytes, owner-only.
   */
  static async open(
    stateDir: string,
    secret: string | null,
    clock: () => number = Date.now,
  ): Promise<Sealer> {
    return Sealer.from(await StateKeys.open(stateDir, secret), clock);
  }

  static from(keys: StateKeys, clock: () => number = Date.now): Sealer {
    return new Sealer(keys.sealing, clock);
  }

  seal(state: SealedState): string {
    return `${VERSION}.${aead.seal(this.key, JSON.stringify(state), AAD)}`;
  }

  /** The state inside, or a SealError saying in a few words why it cannot be trusted. */
  open(sealed: string): SealedState {
    // One spelling only: the version, one dot, canonical base64url, nothing after.
    const [version, payload, ...rest] = sealed.split(".");
    if (version !== VERSION || !payload || rest.length > 0)
      throw new SealError("it is not a request state of this server");
    const raw = aead.canonicalBase64url(payload);
    if (!raw) throw new SealError("it was altered, or sealed with another key");
    if (raw.length < 12 + 16 + 2) throw new SealError("it is truncated");
    const text = aead.open(this.key, payload, AAD);
    if (text === null) throw new SealError("it was altered, or sealed with another key");
    const state = JSON.parse(text) as SealedState;
    if (this.clock() > state.expires) throw new SealError("it has expired");
    return state;
  }
}
