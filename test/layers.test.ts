import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Layers point down only (DESIGN.md): a module imports from its own layer or below. The order,
 * from the bottom: shared leaves, telemetry (spans and metrics), configuration, the shared
 * state's connection (Redis), the HTTP attempt loop, auth, the API client,
 * model-facing errors, writes, the MCP Apps views, the toolkit (how a domain declares its tools:
 * the definitions' types and shared builders), the domains, the long tail
 * (discovery and the generic tools over the key's contract), the inventory,
 * the MCP handlers, the server, the transports, then the app and the command line. The sandbox
 * stands apart: an independent oracle, it imports nothing from the client side.
 */
const LAYERS: Array<[string, RegExp]> = [
  [
    "leaves",
    /^src\/(version|closest|fold|json-depth|field-errors|log|cli-args|aead|neutralise|canonical|events|scope|state-dir)\.ts$/,
  ],
  ["telemetry", /^src\/telemetry\//],
  ["config", /^src\/config\.ts$/],
  ["audit", /^src\/audit\//],
  ["state", /^src\/state\//],
  ["http", /^src\/http\//],
  ["auth", /^src\/auth\//],
  ["api", /^src\/api\//],
  ["errors", /^src\/(errors|readiness)\.ts$/],
  ["writes", /^src\/writes\//],
  ["apps", /^src\/apps\//],
  ["toolkit", /^src\/toolkit\//],
  ["domains", /^src\/domains\//],
  ["longtail", /^src\/longtail\//],
  ["inventory", /^src\/inventory\//],
  ["mcp", /^src\/mcp\//],
  ["server", /^src\/server(-shell)?\.ts$/],
  ["transport", /^src\/transport\//],
  ["app", /^src\/(app|app-stdio|doctor|doctor-offer)\.ts$/],
  ["cli", /^src\/cli\.ts$/],
];
const SANDBOX_MAY_USE = /^src\/(sandbox\/|log\.ts|cli-args\.ts|field-errors\.ts|closest\.ts)/;

const root = join(import.meta.dirname, "..");
const files = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? files(`${dir}/${e.name}`)
      : e.name.endsWith(".ts")
        ? [`${dir}/${e.name}`]
        : [],
  );

function imports(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const found = [...text.matchAll(/(?:from\s+|import\()\s*"(\.[^"]+)"/g)].map((m) => m[1] ?? "");
  return found.map((spec) =>
    relative(root, join(root, dirname(file), spec)).replace(/\.js$/, ".ts"),
  );
}

const layerOf = (file: string) => LAYERS.findIndex(([, pattern]) => pattern.test(file));

describe("layers", () => {
  const sources = files("src");

  it("place every module of src/ in a layer", () => {
    const unplaced = sources.filter((f) => !f.startsWith("src/sandbox/") && layerOf(f) === -1);
    expect(unplaced).toEqual([]);
  });

  it("point down only", () => {
    const upward: string[] = [];
    for (const file of sources.filter((f) => !f.startsWith("src/sandbox/"))) {
      for (const target of imports(file)) {
        if (target.startsWith("src/sandbox/")) continue; // loaded on demand, as a program
        if (layerOf(target) > layerOf(file))
          upward.push(
            `${file} (${LAYERS[layerOf(file)]?.[0]}) imports ${target} (${LAYERS[layerOf(target)]?.[0]})`,
          );
      }
    }
    expect(upward).toEqual([]);
  });

  it("are whole folders: each folder of src/ is one layer, and no folder imports one above it", () => {
    // A folder is its first path segment under src/ (src/api/contract/ is api); a file directly
    // under src/ stands for itself.
    const folderOf = (file: string) => {
      const parts = file.split("/");
      return parts.length > 2 ? `src/${parts[1]}/` : file;
    };
    const layersOfFolder = new Map<string, Set<string>>();
    for (const file of sources.filter((f) => !f.startsWith("src/sandbox/"))) {
      const layers = layersOfFolder.get(folderOf(file)) ?? new Set<string>();
      layers.add(LAYERS[layerOf(file)]?.[0] ?? "none");
      layersOfFolder.set(folderOf(file), layers);
    }
    const split = [...layersOfFolder]
      .filter(([, layers]) => layers.size > 1)
      .map(([folder, layers]) => `${folder} spans ${[...layers].join(" and ")}`);
    expect(split).toEqual([]);
    const upward = new Set<string>();
    for (const file of sources.filter((f) => !f.startsWith("src/sandbox/")))
      for (const target of imports(file)) {
        if (target.startsWith("src/sandbox/") || folderOf(target) === folderOf(file)) continue;
        if (layerOf(target) > layerOf(file))
          upward.add(`${folderOf(file)} imports ${folderOf(target)}`);
      }
    expect([...upward]).toEqual([]);
  });

  it("keep the sandbox independent of the client it checks", () => {
    const leaks = sources
      .filter((f) => f.startsWith("src/sandbox/"))
      .flatMap((file) =>
        imports(file)
          .filter((t) => !SANDBOX_MAY_USE.test(t))
          .map((t) => `${file} imports ${t}`),
      );
    expect(leaks).toEqual([]);
  });
});
