#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { runSandboxCommand } from "./sandbox/cli.js";

const USAGE = `Usage: portfolio-mcp <command>

Commands:
  sandbox    serve the Partner API simulator with demo data (portfolio-mcp sandbox --help)

Options:
  --version  print the version
  --help     print this help`;

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case "sandbox":
      return runSandboxCommand(rest);
    case "--version":
    case "-v": {
      const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
        version: string;
      };
      process.stdout.write(`${pkg.version}\n`);
      return;
    }
    case "--help":
    case "-h":
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      process.stderr.write(`${command ? `Unknown command: ${command}\n\n` : ""}${USAGE}\n`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(
    `portfolio-mcp: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
