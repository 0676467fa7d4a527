#!/usr/bin/env node
// npm run image: builds the container image portfolio-mcp:<version> from the Containerfile,
// with podman (or docker when podman is absent; PORTFOLIO_CONTAINER_ENGINE chooses). The
// bundle the image runs is made here, on the host, and handed to the build as PREBUILT, so
// the build itself needs no network. PORTFOLIO_IMAGE_BASE replaces the default base (the
// official Node 22 slim image); CI passes one made from Debian offline (.ci/image-base.sh).
// PORTFOLIO_IMAGE names the result. Prints the image's size.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { bundle } from "./bundle.mjs";

const root = new URL("..", import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const found = (command) => spawnSync(command, ["--version"], { stdio: "ignore" }).status === 0;
const engine = process.env.PORTFOLIO_CONTAINER_ENGINE ?? (found("podman") ? "podman" : "docker");
const tag = process.env.PORTFOLIO_IMAGE ?? `portfolio-mcp:${pkg.version}`;
const base = process.env.PORTFOLIO_IMAGE_BASE;
const prebuilt = join("build", "image", "app");

execFileSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
rmSync(join(root, prebuilt), { recursive: true, force: true });
await bundle(root, join(root, prebuilt));
execFileSync(
  engine,
  [
    "build",
    // podman's default OCI format drops HEALTHCHECK; the Docker format keeps it.
    ...(engine === "podman" ? ["--format", "docker"] : []),
    "--network",
    "none",
    "--build-arg",
    `PREBUILT=${prebuilt}`,
    ...(base ? ["--build-arg", `BASE=${base}`] : []),
    "--tag",
    tag,
    "--file",
    "Containerfile",
    ".",
  ],
  { cwd: root, stdio: "inherit" },
);
const size = Number(
  execFileSync(engine, ["image", "inspect", "--format", "{{.Size}}", tag], { encoding: "utf8" }),
);
console.log(`\n${tag}: ${(size / 1e6).toFixed(1)} MB (${engine})`);
