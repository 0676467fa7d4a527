#!/usr/bin/env node
// Rewrites the route table of README.md ("### Routes") from the sandbox's own route table, so
// that the README lists exactly what the sandbox serves. Run through `npm run readme:routes`,
// which builds first; test/readme-routes.test.ts fails when the README is behind.
import { readFileSync, writeFileSync } from "node:fs";
import { ROUTES } from "@portfolio-mcp/sandbox";
import { routeTable, withRouteTable } from "@portfolio-mcp/sandbox/contract/readme";
import { EXCHANGE_OPERATION } from "@portfolio-mcp/sandbox/tokens";

const file = new URL("../README.md", import.meta.url);
const before = readFileSync(file, "utf8");
const after = withRouteTable(before, routeTable([EXCHANGE_OPERATION, ...ROUTES]));
writeFileSync(file, after);
process.stdout.write(
  after === before
    ? "README.md route table already up to date\n"
    : "README.md route table rewritten\n",
);
