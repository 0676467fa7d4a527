import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

/**
 * A minimal MCP Apps host for the browser tests: the official ext-apps AppBridge in a page,
 * the view in a sandboxed iframe under a CSP that allows nothing from the network, and the
 * view's server calls handed to the test (which makes them with the SDK's client).
 */

type CallTool = (params: unknown) => Promise<unknown>;

declare global {
  interface Window {
    hostCallTool: CallTool;
    hostReport: (params: unknown) => Promise<void>;
    openView: (options: ViewOptions) => Promise<void>;
  }
}

interface ViewOptions {
  html: string;
  toolArguments: Record<string, unknown>;
  toolResult: Record<string, unknown>;
  theme: "light" | "dark";
  width: number;
}

/** The CSP a host derives from `_meta.ui.csp` with no domains: inline code only, no fetch. */
const CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:";

let bridge: AppBridge | null = null;

window.openView = async (options) => {
  if (bridge) await bridge.close();
  document.body.replaceChildren();
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.style.width = `${options.width}px`;
  frame.style.height = "640px";
  frame.style.border = "0";
  document.body.append(frame);
  // The bridge listens before the view loads: a view says ui/initialize as soon as it runs.
  const view = frame.contentWindow as Window;
  const current = new AppBridge(
    null,
    { name: "portfolio-test-host", version: "1.0.0" },
    { serverTools: {}, updateModelContext: { text: {} }, message: { text: {} } },
    { hostContext: { theme: options.theme, displayMode: "inline" } },
  );
  bridge = current;
  current.oncalltool = async (params) => (await window.hostCallTool(params)) as never;
  current.onupdatemodelcontext = async (params) => {
    await window.hostReport(params);
    return {};
  };
  current.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${Math.ceil(height)}px`;
  };
  current.onmessage = async (params) => {
    await window.hostReport(params);
    return {};
  };
  const ready = new Promise<void>((resolve) => {
    current.oninitialized = () => resolve();
  });
  await current.connect(new PostMessageTransport(view, view));
  frame.srcdoc = options.html.replace(
    "<head>",
    `<head><meta http-equiv="Content-Security-Policy" content="${CSP}">`,
  );
  await ready;
  await current.sendToolInput({ arguments: options.toolArguments });
  await current.sendToolResult(options.toolResult as never);
};
