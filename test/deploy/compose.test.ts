import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { describeVariables } from "../../src/config.js";

// The compose file read as compose reads it (anchors and merge keys resolved); what it starts
// is exercised with podman in test/deploy/fleet.test.ts.
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const compose = parse(read("deploy/compose.yaml"), { merge: true });
const nginx = read("deploy/nginx.conf");
const pkg = JSON.parse(read("package.json"));
const replicas = Object.entries<Record<string, unknown> & { command: string[] }>(
  compose.services,
).filter(([, s]) => s.command.includes("serve"));

describe("deploy/compose.yaml", () => {
  it("runs two or more stateless replicas of this version's image, each with a state volume of its own", () => {
    expect(replicas.map(([name]) => name)).toEqual(["mcp-1", "mcp-2"]);
    const volumes = replicas.map(([, s]) => (s.volumes as string[])[0]);
    expect(new Set(volumes).size).toBe(replicas.length);
    for (const [, service] of replicas) {
      expect(service.image).toBe(`\${PORTFOLIO_IMAGE:-portfolio-mcp:${pkg.version}}`);
      expect(service.command).toContain("--stateless");
      expect(service).toMatchObject({ read_only: true, cap_drop: ["ALL"] });
    }
  });

  it("gives every replica the fleet's settings, its secrets as files, and only variables the server knows", () => {
    const known = new Set(describeVariables().map((v) => v.name));
    for (const [, service] of replicas) {
      const env = service.environment as Record<string, string>;
      for (const name of Object.keys(env)) expect(known, name).toContain(name);
      expect(env.PORTFOLIO_REDIS_URL).toBe("redis://redis:6379/0");
      expect(env.PORTFOLIO_PUBLIC_URL).toContain("PORTFOLIO_PUBLIC_URL");
      expect(service.secrets).toEqual(["api_secret", "state_secret", "mcp_token"]);
      // The entry point turns each secret file into the variable of the same meaning.
      const script = (service.entrypoint as string[])[2]!;
      for (const [secret, variable] of [
        ["api_secret", "PORTFOLIO_API_SECRET"],
        ["state_secret", "PORTFOLIO_STATE_SECRET"],
        ["mcp_token", "PORTFOLIO_MCP_TOKEN"],
      ])
        expect(script).toContain(`${variable}="$$(cat /run/secrets/${secret})"`);
      expect(script).toContain('exec node dist/cli.js "$$@"');
    }
    expect(Object.keys(compose.secrets)).toEqual(["api_secret", "state_secret", "mcp_token"]);
  });

  it("puts a proxy without affinity in front of exactly those replicas", () => {
    const upstream = [...nginx.matchAll(/^\s*server (\S+):8787/gm)].map((m) => m[1]);
    expect(upstream).toEqual(replicas.map(([name]) => name));
    expect(nginx).not.toMatch(/\b(ip_hash|hash|sticky)\b/);
    expect(nginx).toMatch(/proxy_buffering off;/);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's interpolation, as written
    expect(compose.services.proxy.ports).toEqual(["127.0.0.1:${PORTFOLIO_PORT:-8080}:8080"]);
  });

  it("keeps Redis's data in AOF on a volume, and the sandbox behind a profile", () => {
    const redis = compose.services.redis;
    expect(redis.command.join(" ")).toContain(
      "--appendonly yes --appendfsync everysec --dir /data",
    );
    expect(redis.volumes).toEqual(["redis-data:/data"]);
    expect(compose.services.sandbox.profiles).toEqual(["sandbox"]);
    expect(compose.services.sandbox.command).toEqual([
      "sandbox",
      "--host",
      "0.0.0.0",
      "--port",
      "4010",
    ]);
  });
});
