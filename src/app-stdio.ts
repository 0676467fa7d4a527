import type { AppOptions } from "./app.js";
import { lateServer } from "./server-shell.js";
import { serveStdio } from "./transport/stdio.js";

/**
 * The stdio server, started in the order a client needs it: the transport and the server's
 * identity first, so that `initialize` and `server/discover` are answered within a few hundred
 * milliseconds of the spawn (clients probing the protocol era wait about a second); then, behind
 * them, the configuration, the embedded sandbox, the contract and the API client. Requests that
 * need those wait for them. A start that fails (a configuration error) ends the process with
 * one line on stderr, as before.
 */
export function startStdio(options: AppOptions): () => Promise<void> {
  const prepared = import("./app.js").then((app) => app.prepareStdio(options));
  const stop = async () => {
    await (await prepared.catch(() => null))?.close();
    process.exit(0);
  };
  prepared.catch((error: unknown) => {
    process.stderr.write(
      `portfolio-mcp: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
  serveStdio(
    () =>
      lateServer(async (server) => {
        const [{ installMcp }, ready] = await Promise.all([import("./server.js"), prepared]);
        installMcp(server, ready.deps, ready.caller);
      }),
    prepared,
    stop,
  );
  return stop;
}
