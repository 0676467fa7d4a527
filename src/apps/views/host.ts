/**
 * The view's side of the MCP Apps protocol (ext-apps, protocol 2026-01-26), as much of it as
 * the views use: JSON-RPC over postMessage with the host window. The official App class does the
 * same on the SDK's Protocol and zod's schemas, which made each view 402 KiB; this is the
 * handful of messages those views send and read (test/apps/browser.test.ts drives them through
 * the official AppBridge).
 */

export interface ContentBlock {
  type: string;
  text?: string;
  [key: string]: unknown;
}

export interface CallToolResult {
  content?: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

export interface HostContext {
  theme?: "light" | "dark";
  styles?: { variables?: Record<string, string | undefined> };
  [key: string]: unknown;
}

export interface HostCapabilities {
  updateModelContext?: Record<string, unknown>;
  message?: Record<string, unknown>;
  [key: string]: unknown;
}

interface Message {
  jsonrpc: "2.0";
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string };
}

/** The protocol version the official App announces (ext-apps LATEST_PROTOCOL_VERSION). */
const PROTOCOL_VERSION = "2026-01-26";
/** How long a request waits for its answer, as the SDK's default. */
const REQUEST_TIMEOUT_MS = 60_000;

export class App {
  ontoolresult: ((result: CallToolResult) => void) | null = null;
  onhostcontextchanged: ((context: HostContext) => void) | null = null;
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  private hostCapabilities: HostCapabilities | undefined;
  private hostContext: HostContext | undefined;

  constructor(private readonly info: { name: string; version: string }) {}

  /** The handshake: ui/initialize answered, then ui/notifications/initialized; then sizes. */
  async connect(): Promise<void> {
    window.addEventListener("message", (event) => {
      if (event.source !== window.parent) return;
      const message = event.data as Message;
      if (message?.jsonrpc === "2.0") this.receive(message);
    });
    const answer = (await this.request("ui/initialize", {
      appCapabilities: {},
      appInfo: this.info,
      protocolVersion: PROTOCOL_VERSION,
    })) as { hostCapabilities?: HostCapabilities; hostContext?: HostContext };
    this.hostCapabilities = answer.hostCapabilities;
    this.hostContext = answer.hostContext;
    this.post({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    this.reportSize();
  }

  getHostCapabilities(): HostCapabilities | undefined {
    return this.hostCapabilities;
  }

  getHostContext(): HostContext | undefined {
    return this.hostContext;
  }

  callServerTool(params: { name: string; arguments?: Record<string, unknown> }) {
    return this.request("tools/call", params) as Promise<CallToolResult>;
  }

  updateModelContext(params: { content: ContentBlock[] }): Promise<unknown> {
    return this.request("ui/update-model-context", params);
  }

  sendMessage(params: { role: "user"; content: ContentBlock[] }): Promise<unknown> {
    return this.request("ui/message", params);
  }

  private request(method: string, params: Record<string, unknown>): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer from the host`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.post({ jsonrpc: "2.0", id, method, params });
    });
  }

  private receive(message: Message): void {
    if (message.method === undefined) {
      const waiting = typeof message.id === "number" ? this.pending.get(message.id) : undefined;
      if (!waiting) return;
      this.pending.delete(message.id as number);
      if (message.error) waiting.reject(new Error(message.error.message));
      else waiting.resolve(message.result);
    } else if (message.id !== undefined) this.answer(message);
    else if (message.method === "ui/notifications/tool-result")
      this.ontoolresult?.((message.params ?? {}) as CallToolResult);
    else if (message.method === "ui/notifications/host-context-changed") {
      const change = (message.params ?? {}) as HostContext;
      this.hostContext = { ...this.hostContext, ...change };
      this.onhostcontextchanged?.(change);
    }
  }

  /** The host's requests: ping is answered; the views implement no other. */
  private answer(request: Message): void {
    const id = request.id as number | string;
    if (request.method === "ping") this.post({ jsonrpc: "2.0", id, result: {} });
    else this.post({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
  }

  private post(message: Message): void {
    window.parent.postMessage(message, "*");
  }

  /** The document's size whenever it changes (the official App's autoResize, the same way). */
  private reportSize(): void {
    let scheduled = false;
    let width = 0;
    let height = 0;
    const measure = () => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(() => {
        scheduled = false;
        const root = document.documentElement;
        const before = root.style.height;
        root.style.height = "max-content";
        const h = Math.ceil(root.getBoundingClientRect().height);
        root.style.height = before;
        const w = Math.ceil(window.innerWidth);
        if (w === width && h === height) return;
        width = w;
        height = h;
        this.post({
          jsonrpc: "2.0",
          method: "ui/notifications/size-changed",
          params: { width: w, height: h },
        });
      });
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(document.documentElement);
    observer.observe(document.body);
  }
}

/** The host's theme on the document (ext-apps applyDocumentTheme). */
export function applyDocumentTheme(theme: "light" | "dark"): void {
  const root = document.documentElement;
  root.setAttribute("data-theme", theme);
  root.style.colorScheme = theme;
}

/** The host's CSS variables on the document (ext-apps applyHostStyleVariables). */
export function applyHostStyleVariables(variables: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(variables))
    if (value !== undefined) document.documentElement.style.setProperty(name, value);
}
