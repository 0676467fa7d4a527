import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { type Sandbox, type SandboxOptions, startSandbox } from "../../src/index.js";
import { PartnerTestClient } from "./partner-client.js";

/**
 * The vitest hooks that start a real sandbox on loopback for a test file, and stop it.
 * Read `sandbox`, `client` and `data` inside tests and hooks: they follow the running sandbox.
 */
export interface SandboxUnderTest {
  readonly sandbox: Sandbox;
  /** A client on the sandbox's default key (the full demo key), made once per sandbox. */
  readonly client: PartnerTestClient;
  /** The sandbox's live data: what a test set up, or what its requests changed. */
  readonly data: Sandbox["control"]["state"]["data"];
}

/** A fresh sandbox for each test, so that each test starts from the seeded data. */
export function sandboxPerTest(options: SandboxOptions = {}): SandboxUnderTest {
  const running = runningSandbox();
  beforeEach(() => running.start(options));
  afterEach(() => running.stop());
  return running.view;
}

/** One sandbox for a whole file or describe block, whose tests leave each other's data alone. */
export function sharedSandbox(options: SandboxOptions = {}): SandboxUnderTest {
  const running = runningSandbox();
  beforeAll(() => running.start(options));
  afterAll(() => running.stop());
  return running.view;
}

function runningSandbox() {
  let sandbox: Sandbox | null = null;
  let client: PartnerTestClient | null = null;
  const current = (): Sandbox => {
    if (!sandbox) throw new Error("no sandbox is running: read it inside a test or a hook");
    return sandbox;
  };
  const view: SandboxUnderTest = {
    get sandbox() {
      return current();
    },
    get client() {
      client ??= PartnerTestClient.for(current());
      return client;
    },
    get data() {
      return current().control.state.data;
    },
  };
  return {
    view,
    async start(options: SandboxOptions) {
      sandbox = await startSandbox(options);
      client = null;
    },
    async stop() {
      const stopping = sandbox;
      sandbox = null;
      client = null;
      await stopping?.close();
    },
  };
}
