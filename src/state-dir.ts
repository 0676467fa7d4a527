import { homedir } from "node:os";
import { join } from "node:path";

/** The per-user data directory each platform expects. */
export function defaultStateDir(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
  home: string,
): string {
  if (platform === "win32")
    return join(env.LOCALAPPDATA ?? join(home, "AppData", "Local"), "portfolio-mcp");
  if (platform === "darwin") return join(home, "Library", "Application Support", "portfolio-mcp");
  return join(env.XDG_DATA_HOME || join(home, ".local", "share"), "portfolio-mcp");
}

/**
 * The state directory as the configuration will name it (--state-dir, then PORTFOLIO_STATE_DIR,
 * then the platform's default), read from the raw command line before anything else loads:
 * the module compile cache lives under it.
 */
export function stateDirOf(argv: readonly string[], env: NodeJS.ProcessEnv): string {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg.startsWith("--state-dir=")) return arg.slice("--state-dir=".length);
    if (arg === "--state-dir" && argv[i + 1] !== undefined) return argv[i + 1] as string;
  }
  return env.PORTFOLIO_STATE_DIR ?? defaultStateDir(env, process.platform, homedir());
}
