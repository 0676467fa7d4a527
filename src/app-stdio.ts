import { flushCompileCache } from "node:module";
import type { AppOptions } from "./app.js";
import type { Selection } from "./inventory/index.js";
import type { CallerSpec, ServerDeps } from "./server.js";
import { lateServer, newServer } from "./server-shell.js";
import { serveStdio } from "./transport/stdio.js";

/**
 * The stdio server, started in the order a client needs it: the transport and the server's
 * identity first, so that `initialize` and `server/discover` are answered as soon as the SDK has
 * loaded; then, once that first answer is out, the configuration, the embedded sandbox, the
 * contract and the API client. Loading them together with the SDK made the first answer wait
 * for all of them (about 1 MiB of code against 650 KiB). Requests that need them wait for them.
 * A start that fails (a configuration error) ends the process with one line on stderr, as before.
 */
export function startStdio(options: AppOptions): () => Promise<void> {
  const prepared = firstAnswerWritten().then(async () => {
    // What compiled before the first answer, kept now: a process killed while the rest loads
    // (see below) never reaches the write at exit. Nothing is written when all came from it.
    flushCompileCache();
    return (await import("./app.js")).prepareStdio(options);
  });
  const stop = async () => {
    await (await prepared.catch(() => null))?.close();
    process.exit(0);
  };
  // Until the rest has loaded, SIGINT and SIGTERM keep their default action, ending the process
  // at once: nothing past discovery has been served and nothing is open to close, a handler
  // would run only between modules' evaluations, and finishing the load only to close it kept
  // the CPU busy 240-375 ms more, slowing whatever started next. (stdin's end still waits, so
  // that a configuration error is reported.)
  prepared.then(
    () => {
      process.once("SIGINT", () => void stop());
      process.once("SIGTERM", () => void stop());
    },
    () => {},
  );
  prepared.catch((error: unknown) => {
    process.stderr.write(
      `portfolio-mcp: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
  serveStdio(
    () =>
      lateServer(async (server) => {
        // After `prepared`, not beside it: the inventory's modules would delay the first answer.
        const ready = await prepared;
        const { installMcp, selectionFor } = await import("./server.js");
        const selection = selectionFor(ready.deps, ready.caller);
        installMcp(server, ready.deps, ready.caller, selection);
        // The listing's schemas made now rather than by the first tools/list: 42 ms -> 2.5 ms
        // (a warm one takes 0.7 ms), then the request path rehearsed (firstListReady).
        setImmediate(
          () => void firstListReady(ready.deps, ready.caller, selection).catch(() => {}),
        );
      }),
    prepared,
    stop,
  );
  return stop;
}

/**
 * Makes the first tools/list cost what a warm one does: the listings' schemas made, then a
 * client's first exchange played through the stdio path on a server of its own, which observes
 * nothing, over in-memory pipes (src/transport/stdio-rehearsal.ts), so that V8 compiles that
 * path now. Callgrind, first tools/list 1.5 s after initialize: 5.9 M instructions to 3.0 M
 * (a warm one 2.3-2.9 M).
 */
async function firstListReady(deps: ServerDeps, caller: CallerSpec, selection: Selection) {
  const { installMcp } = await import("./server.js");
  const { warmToolListing } = await import("./mcp/tools.js");
  const { rehearseStdio } = await import("./transport/stdio-rehearsal.js");
  warmToolListing(selection);
  const unobserved = { ...deps, observer: undefined };
  await rehearseStdio(() => {
    const rehearsal = newServer();
    rehearsal.observe = false; // no span, audit line or metric for it
    installMcp(rehearsal, unobserved, caller, selection);
    return rehearsal;
  });
}

/**
 * Longest the rest of the server waits for its first answer before loading anyway: a client slow
 * to speak, or none (a configuration error is then reported this much later). Clients write
 * `initialize` as they spawn the server, so it is waiting in the pipe long before this; the
 * margin is for a starved CPU (with 20 ms, a loaded machine fired the timer first).
 */
const FIRST_MESSAGE_WAIT_MS = 250;

/**
 * Resolves once the first answer (to `initialize` or `server/discover`) has been written to
 * stdout, or after FIRST_MESSAGE_WAIT_MS without one. The write itself is the signal: the SDK's
 * answer can take more than the turn of the event loop that read the request, and anything
 * loaded meanwhile would delay it.
 */
function firstAnswerWritten(): Promise<void> {
  return new Promise((resolve) => {
    const stdout = process.stdout;
    const write = stdout.write;
    const done = () => {
      clearTimeout(timer);
      stdout.write = write;
      setImmediate(resolve);
    };
    const timer = setTimeout(done, FIRST_MESSAGE_WAIT_MS);
    stdout.write = function (this: typeof stdout, ...args: Parameters<typeof write>) {
      const written = write.apply(this, args);
      done();
      return written;
    } as typeof write;
  });
}
