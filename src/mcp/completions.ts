import { ProtocolError, ProtocolErrorCode, type Server } from "@modelcontextprotocol/server";
import type { Directory } from "../api/directory.js";
import type { Selection } from "../inventory/index.js";
import type { Logger } from "../log.js";
import { neutralise } from "../neutralise.js";
import type { Completer } from "../toolkit/definitions.js";
import { failed } from "./failures.js";

const NONE = { completion: { values: [], hasMore: false } };

/** Argument completion for the resource templates and prompts offered to this caller. */
export function installCompletions(
  server: Server,
  selection: Selection,
  directory: Directory,
  logger: Logger,
): void {
  server.setRequestHandler("completion/complete", async (request) => {
    const { ref, argument } = request.params;
    let complete: Completer | undefined;
    if (ref.type === "ref/resource") {
      const resource = selection.resources.find((r) => r.uri === ref.uri);
      if (!resource)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `No resource template ${ref.uri}.`,
        );
      complete = resource.complete?.[argument.name];
    } else {
      const prompt = selection.prompts.find((p) => p.name === ref.name);
      if (!prompt)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No prompt ${ref.name}.`);
      complete = prompt.arguments.find((a) => a.name === argument.name)?.complete;
    }
    if (!complete) return NONE;
    try {
      const values = (await complete(directory, argument.value)).map((v) => neutralise(v));
      return { completion: { values, total: values.length, hasMore: false } };
    } catch (error) {
      // A convenience: never an error in the person's face (src/mcp/failures.ts).
      return failed("completion/complete", error, argument.name, logger);
    }
  });
}
