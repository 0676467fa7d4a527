import {
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { Selection } from "../inventory/index.js";
import type { Logger } from "../log.js";
import { neutraliseDeep } from "../neutralise.js";
import type { ToolContext } from "../toolkit/definitions.js";
import { failed } from "./failures.js";
import { familyIcons } from "./icons.js";

/** Serves the prompts offered to this caller. */
export function installPrompts(
  server: Server,
  selection: Selection,
  contextFor: (ctx: ServerContext) => ToolContext,
  logger: Logger,
): void {
  const listing = {
    prompts: selection.prompts.map((p) => ({
      name: p.name,
      title: p.title,
      description: p.description,
      arguments: p.arguments.map(({ name, description, required }) => ({
        name,
        description,
        required,
      })),
      icons: familyIcons(p.family),
    })),
  };
  server.setRequestHandler("prompts/list", () => listing);
  server.setRequestHandler("prompts/get", async (request, ctx) => {
    const prompt = selection.prompts.find((p) => p.name === request.params.name);
    if (!prompt)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown prompt ${request.params.name}; see prompts/list.`,
      );
    const args = request.params.arguments ?? {};
    for (const arg of prompt.arguments) {
      if (arg.required && !args[arg.name]) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `${prompt.name} was not rendered: ${arg.name} is required; give it and ask again.`,
        );
      }
    }
    try {
      // Prompts quote data written by others: nothing in it may hide from the model.
      return neutraliseDeep(await prompt.render(args, contextFor(ctx)));
    } catch (error) {
      return failed("prompts/get", error, prompt.name, logger);
    }
  });
}
