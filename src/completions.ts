import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CompleteRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "./log.js";
import { PROMPTS } from "./prompts.js";
import { INVALID_PARAMS, ProtocolError } from "./protocol-error.js";
import { RESOURCES } from "./resources/catalogue.js";
import type { Directory } from "./resources/directory.js";

const NONE = { completion: { values: [], hasMore: false } };

/** Argument completion for resource templates and prompts (MCP completion API). */
export function installCompletions(server: Server, directory: Directory, logger: Logger): void {
  server.registerCapabilities({ completions: {} });
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const { ref, argument } = request.params;
    let complete: ((d: Directory, typed: string) => Promise<string[]>) | undefined;
    if (ref.type === "ref/resource") {
      const resource = RESOURCES.find((r) => r.uri === ref.uri);
      if (!resource) throw new ProtocolError(INVALID_PARAMS, `No resource template ${ref.uri}.`);
      complete = resource.complete?.[argument.name];
    } else {
      const prompt = PROMPTS.find((p) => p.name === ref.name);
      if (!prompt) throw new ProtocolError(INVALID_PARAMS, `No prompt ${ref.name}.`);
      complete = prompt.arguments.find((a) => a.name === argument.name)?.complete;
    }
    if (!complete) return NONE;
    try {
      const values = await complete(directory, argument.value);
      return { completion: { values, total: values.length, hasMore: false } };
    } catch (error) {
      logger.warn({ err: error, argument: argument.name }, "completion failed");
      return NONE; // completion is a convenience: never an error in the user's face
    }
  });
}
