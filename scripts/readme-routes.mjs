#!/usr/bin/env node
// Rewrites the route table of README.md ("### Routes") from the sandbox's own route table, so
// that the README lists exactly what the sandbox serves. Run through `npm run readme:routes`,
// which builds first; test/readme-routes.test.ts fails when the README is behind.
import { readFileSync, writeFileSync } from "node:fs";
import { routeTable, withRouteTable } from "../dist/sandbox/contract/readme.js";
import { ROUTES } from "../dist/sandbox/routes.js";
import { EXCHANGE_OPERATION } from "../dist/sandbox/tokens.js";

const file = new URL("../README.md", import.meta.url);
const before = readFileSync(file, "utf8");
const after = withRouteTable(before, routeTable([EXCHANGE_OPERATION, ...ROUTES]));
writeFileSync(file, after);
process.stdout.write(
  after === before
    ? "README.md route table already up to date\n"
    : "README.md route table rewritten\n",
);
