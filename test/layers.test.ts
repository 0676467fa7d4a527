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
 * stands apart, in its own package (packages/sandbox): an independent oracle, it imports nothing
 * from the client side, and the server loads it only on demand.
 */
const LAYERS: Array<[string, RegExp]> = [
  [
    "leaves",
    /^src\/(version|closest|fold|json-depth|json-file|log|cli-args|aead|neutralise|canonical|events|scope|everyday|state-dir|memo)\.ts$/,
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
  ["app", /^src\/(app|app-stdio|app-banner|app-metrics|doctor|doctor-offer)\.ts$/],
  ["cli", /^src\/(cli|sandbox-command)\.ts$/],
];

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
    const unplaced = sources.filter((f) => layerOf(f) === -1);
    expect(unplaced).toEqual([]);
  });

  it("point down only", () => {
    const upward: string[] = [];
    for (const file of sources) {
      for (const target of imports(file)) {
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
    for (const file of sources) {
      const layers = layersOfFolder.get(folderOf(file)) ?? new Set<string>();
      layers.add(LAYERS[layerOf(file)]?.[0] ?? "none");
      layersOfFolder.set(folderOf(file), layers);
    }
    const split = [...layersOfFolder]
      .filter(([, layers]) => layers.size > 1)
      .map(([folder, layers]) => `${folder} spans ${[...layers].join(" and ")}`);
    expect(split).toEqual([]);
    const upward = new Set<string>();
    for (const file of sources)
      for (const target of imports(file)) {
        if (folderOf(target) === folderOf(file)) continue;
        if (layerOf(target) > layerOf(file))
          upward.add(`${folderOf(file)} imports ${folderOf(target)}`);
      }
    expect([...upward]).toEqual([]);
  });

  it("keep each package to its own files and the dependencies it declares", () => {
    // The sandbox checks the client: it may not borrow the client's code, nor its dependencies.
    const leaks: string[] = [];
    for (const pkg of readdirSync(join(root, "packages"))) {
      const dir = `packages/${pkg}`;
      const declared = dependenciesOf(dir);
      for (const file of files(`${dir}/src`))
        for (const { spec, kind } of specifiers(file)) {
          // A type-only import of a dev dependency costs nothing at run time; of the server, it
          // would still tie the oracle to what it checks.
          const inside = spec.startsWith(".")
            ? relative(root, join(root, dirname(file), spec)).startsWith(`${dir}/src/`)
            : spec.startsWith("node:") || kind === "type" || declared.has(packageOf(spec));
          if (!inside) leaks.push(`${file} imports ${spec}`);
        }
    }
    expect(leaks).toEqual([]);
  });

  it("load the sandbox only on demand: a server against a real API never loads it", () => {
    // One module of src/ runs the sandbox's command and imports it; it, and the package, are
    // reached only through import(), when --sandbox or `portfolio-mcp sandbox` asks for them.
    const declared = dependenciesOf(".");
    const eager: string[] = [];
    for (const file of sources)
      for (const { spec, kind } of specifiers(file)) {
        if (kind === "type") continue;
        if (!spec.startsWith(".") && !spec.startsWith("node:") && !declared.has(packageOf(spec)))
          eager.push(`${file} imports ${spec}, not a dependency of the server`);
        if (kind !== "static") continue;
        if (spec.startsWith("@portfolio-mcp/sandbox") && file !== ON_DEMAND)
          eager.push(`${file} imports ${spec} up front`);
        if (
          spec.startsWith(".") &&
          relative(root, join(root, dirname(file), spec)) === ON_DEMAND_JS
        )
          eager.push(`${file} imports ${ON_DEMAND} up front`);
      }
    expect(eager).toEqual([]);
    // The check sees what it claims to: the command and the app do reach the sandbox.
    const reached = sources.filter((f) =>
      specifiers(f).some((s) => s.kind === "dynamic" && /sandbox/.test(s.spec)),
    );
    expect(reached).toEqual(expect.arrayContaining(["src/app.ts", "src/cli.ts"]));
  });
});

const ON_DEMAND = "src/sandbox-command.ts";
const ON_DEMAND_JS = ON_DEMAND.replace(/\.ts$/, ".js");

/** Every module a file names: `import … from`, `export … from`, `import()`; type-only apart. */
function specifiers(file: string): Array<{ spec: string; kind: "static" | "type" | "dynamic" }> {
  const text = readFileSync(join(root, file), "utf8");
  const statics = [...text.matchAll(/^(?:import|export)\s+(type\s)?[^;]*?from\s+"([^"]+)"/gm)].map(
    (m) => ({ spec: m[2] ?? "", kind: m[1] ? ("type" as const) : ("static" as const) }),
  );
  const dynamics = [...text.matchAll(/import\(\s*"([^"]+)"\s*\)/g)].map((m) => ({
    spec: m[1] ?? "",
    kind: "dynamic" as const,
  }));
  return [...statics, ...dynamics];
}

/** `@scope/name/sub` -> `@scope/name`; `name/sub` -> `name`. */
const packageOf = (spec: string) =>
  spec
    .split("/")
    .slice(0, spec.startsWith("@") ? 2 : 1)
    .join("/");

function dependenciesOf(dir: string): Set<string> {
  const pkg = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
  return new Set(Object.keys(pkg.dependencies ?? {}));
}
