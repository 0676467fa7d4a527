// Runs a sandbox in its own process, so that it never shares an event loop with what is
// measured. Prints one JSON line ({ baseUrl, credentials }); answers "stats" on stdin, and a
// line {"fault": <rule>} with the fault's id.
import { createInterface } from "node:readline";
import { startSandbox } from "@portfolio-mcp/sandbox";

const options = JSON.parse(process.argv[2] ?? "{}");
const sandbox = await startSandbox(options);
process.stdout.write(
  `${JSON.stringify({ baseUrl: sandbox.baseUrl, credentials: sandbox.credentials })}\n`,
);
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "stats") process.stdout.write(`${JSON.stringify(sandbox.control.stats())}\n`);
  else if (line.startsWith("{")) {
    const id = sandbox.control.addFault(JSON.parse(line).fault);
    process.stdout.write(`${JSON.stringify({ fault: id })}\n`);
  }
});
process.stdin.on("end", () => sandbox.close().then(() => process.exit(0)));
