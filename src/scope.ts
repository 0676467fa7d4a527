import { AsyncLocalStorage } from "node:async_hooks";

/**
 * What a piece of work runs for, carried through its awaits: whom its upstream requests count
 * against (src/http/principal.ts), its trace context (src/telemetry/sdk.ts). One
 * AsyncLocalStorage for the process, each module under a key of its own: on Node 22 every
 * instance is paid for by every asynchronous operation of the process (a second one, the
 * OpenTelemetry context manager's, added about 4% to a tool call).
 */
const storage = new AsyncLocalStorage<Readonly<Record<symbol, unknown>>>();

/** Runs `work` with `key` set to `value`, and everything else of the current scope kept. */
export function inScope<T>(key: symbol, value: unknown, work: () => T): T {
  return storage.run({ ...storage.getStore(), [key]: value }, work);
}

/** The value `key` has in the current scope, if any. */
export function fromScope<T>(key: symbol): T | undefined {
  return storage.getStore()?.[key] as T | undefined;
}
