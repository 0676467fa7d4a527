import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The keys this server derives from its one state secret: PORTFOLIO_STATE_SECRET, or else a
 * secret it creates once in the state directory (a single process owns that directory). Every
 * replica of a fleet must share the secret: the keys authenticate what they share on Redis.
 */
export type KeyPurpose =
  /** The MAC on every stored intent (src/writes/intent-mac.ts). */
  | "intent-mac"
  /** The value on Redis that tells a replica whether it holds the fleet's secret. */
  | "fleet-check"
  /** The HMAC of a request's arguments in the audit trail: equal arguments match, none is kept. */
  | "audit-arguments";

const SECRET_FILE = "state-secret";

export class StateKeys {
  private constructor(
    private readonly secret: Buffer,
    /** Where the secret came from, for messages (never the secret itself). */
    readonly source: "PORTFOLIO_STATE_SECRET" | string,
  ) {}

  /** From PORTFOLIO_STATE_SECRET when set, else `<state dir>/state-secret` (created once, 0600). */
  static async open(stateDir: string, secret: string | null): Promise<StateKeys> {
    if (secret) return new StateKeys(Buffer.from(secret, "utf8"), "PORTFOLIO_STATE_SECRET");
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const path = join(stateDir, SECRET_FILE);
    try {
      const file = await open(path, "wx", 0o600); // only the first process to get here writes
      try {
        await file.writeFile(randomBytes(32).toString("hex"));
        await file.sync();
      } finally {
        await file.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    return StateKeys.read(path);
  }

  /** Like `open`, but creates nothing: null when there is no secret yet (doctor's view). */
  static async existing(stateDir: string, secret: string | null): Promise<StateKeys | null> {
    if (secret) return new StateKeys(Buffer.from(secret, "utf8"), "PORTFOLIO_STATE_SECRET");
    const path = join(stateDir, SECRET_FILE);
    return StateKeys.read(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return null;
      throw error;
    });
  }

  private static async read(path: string): Promise<StateKeys> {
    const hex = (await readFile(path, "utf8")).trim();
    if (!/^[0-9a-f]{64}$/.test(hex))
      throw new Error(
        `${path} is not a state key (64 hexadecimal characters); remove it to make a new one`,
      );
    return new StateKeys(Buffer.from(hex, "hex"), path);
  }

  /** A fixed secret, for tests and tools that hold one. */
  static fromSecret(secret: string): StateKeys {
    return new StateKeys(Buffer.from(secret, "utf8"), "PORTFOLIO_STATE_SECRET");
  }

  /**
   * The key that seals request states and card tokens: sha256 of the secret, as it has been
   * since sealed states first shipped (a state sealed before an upgrade still opens).
   */
  get sealing(): Buffer {
    return this.source === "PORTFOLIO_STATE_SECRET"
      ? createHash("sha256").update(this.secret).digest()
      : this.secret;
  }

  /** A key of its own for each purpose (HKDF-SHA256): one leaked use never opens another. */
  derive(purpose: KeyPurpose): Buffer {
    return Buffer.from(hkdfSync("sha256", this.secret, "portfolio-mcp state v1", purpose, 32));
  }

  /**
   * What every replica with this secret writes on Redis and expects to read there: a value made
   * with the key, which says nothing of the key to whoever reads it.
   */
  fleetCheck(): string {
    return createHmac("sha256", this.derive("fleet-check")).update("fleet").digest("hex");
  }
}

/** Compares two hex MACs in constant time (a length mismatch is simply false). */
export function sameMac(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}
