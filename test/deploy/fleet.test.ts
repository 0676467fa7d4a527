import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { freePort, mcpClient, podman, TEST_IMAGE, waitFor } from "../helpers/podman.js";

const run = promisify(execFile);

/**
 * Stand-ins for the public Redis and nginx images deploy/compose.yaml names, which no
 * registry reachable from CI serves: .ci/services-image.sh builds one from Debian's packages.
 */
const SERVICES_IMAGE = process.env.PORTFOLIO_TEST_SERVICES_IMAGE ?? "";
const docs = readFileSync(new URL("../../docs/deployment.md", import.meta.url), "utf8");
const kube = new URL("../../deploy/kubernetes/", import.meta.url).pathname;

// docs/deployment.md's fleet, as it says to start it, in a copy of deploy/ (its secrets are
// written there). A second compose file publishes each replica on a port of its own, so that
// the test can pick the replica it talks to; the proxy is reached as clients reach it.
describe.skipIf(!TEST_IMAGE || !SERVICES_IMAGE)("the fleet kit, with podman", () => {
  // Compose names the project after the folder.
  const project = `portfolio-fleet-${process.pid}`;
  const dir = join(tmpdir(), project);
  mkdirSync(dir);
  const ports = { proxy: 0, "mcp-1": 0, "mcp-2": 0 };
  let token = "";
  let kubeFile = "";

  afterAll(async () => {
    if (kubeFile) await podman("kube", "down", kubeFile).catch(() => "");
    await podman("secret", "rm", `${project}-secrets`).catch(() => "");
    // What compose made for this project, found by the label it puts on everything.
    const labelled = async (...command: string[]) =>
      (
        await podman(
          ...command,
          "--quiet",
          "--filter",
          `label=io.podman.compose.project=${project}`,
        ).catch(() => "")
      )
        .split("\n")
        .filter(Boolean);
    const containers = await labelled("ps", "--all");
    if (containers.length) await podman("rm", "--force", "--volumes", ...containers);
    const volumes = await labelled("volume", "ls");
    if (volumes.length) await podman("volume", "rm", "--force", ...volumes);
    await podman("network", "rm", `${project}_default`).catch(() => "");
    rmSync(dir, { recursive: true, force: true }); // its secrets with it
  });

  it("starts as docs/deployment.md says: two replicas, a proxy, Redis and the sandbox, all ready", async () => {
    cpSync(new URL("../../deploy/compose.yaml", import.meta.url), join(dir, "compose.yaml"));
    cpSync(new URL("../../deploy/nginx.conf", import.meta.url), join(dir, "nginx.conf"));
    for (const name of Object.keys(ports) as Array<keyof typeof ports>)
      ports[name] = await freePort();
    const allowed = `127.0.0.1:${ports["mcp-1"]},127.0.0.1:${ports["mcp-2"]}`;
    const replica = (port: number) => ({
      ports: [`127.0.0.1:${port}:8787`],
      environment: { PORTFOLIO_MCP_ALLOWED_HOSTS: allowed },
    });
    writeFileSync(
      join(dir, "by-replica.yaml"),
      stringify({
        services: { "mcp-1": replica(ports["mcp-1"]), "mcp-2": replica(ports["mcp-2"]) },
      }),
    );
    const block = /```sh\n([\s\S]*?)```/.exec(
      docs.slice(docs.indexOf("Start it on the sandbox, from the repository")),
    )?.[1];
    expect(block).toContain("podman-compose up -d");
    const script = block!
      .replace("cd deploy", `cd ${dir}`)
      .replace("podman-compose up -d", "podman-compose -f compose.yaml -f by-replica.yaml up -d");
    await run("timeout", ["180", "bash", "-euo", "pipefail", "-c", script], {
      env: {
        ...process.env,
        PORTFOLIO_IMAGE: TEST_IMAGE,
        REDIS_IMAGE: SERVICES_IMAGE,
        PROXY_IMAGE: SERVICES_IMAGE,
        PORTFOLIO_PORT: String(ports.proxy),
        PORTFOLIO_PUBLIC_URL: `http://127.0.0.1:${ports.proxy}`,
      },
    });
    token = readFileSync(join(dir, "secrets", "mcp_token"), "utf8").trim();
    // The proxy answered ready through one replica; each must be. A replica that tried to sign
    // in before the sandbox listened tries again after a growing pause (up to a minute).
    for (const name of ["mcp-1", "mcp-2"] as const) {
      const status = await waitFor(
        `${name} ready`,
        async () => {
          const reply = await fetch(`http://127.0.0.1:${ports[name]}/readyz`);
          return reply.status === 200 ? reply.status : undefined;
        },
        120_000,
      );
      expect(status, name).toBe(200);
    }
    const names = await podman(
      "ps",
      "--format",
      "{{.Names}}",
      "--filter",
      `label=io.podman.compose.project=${project}`,
    );
    expect(names.split("\n").sort()).toEqual(
      ["mcp-1", "mcp-2", "proxy", "redis", "sandbox"].map((s) => `${project}_${s}_1`),
    );
  }, 360_000);

  it("confirms through one replica a write drafted through the other, once", async () => {
    const one = await mcpClient(`http://127.0.0.1:${ports["mcp-1"]}/mcp`, token);
    const two = await mcpClient(`http://127.0.0.1:${ports["mcp-2"]}/mcp`, token);
    const proxy = await mcpClient(`http://127.0.0.1:${ports.proxy}/mcp`, token);
    try {
      const [operation] = (await proxy.call("list_operations", { status: "travaux", limit: 1 }))
        .items;
      const notes = async () =>
        (await proxy.call("list_operation_notes", { operation_id: operation.id, limit: 200 }))
          .total;
      const before = await notes();
      const draft = await one.call("create_operation_note", {
        operation_id: operation.id,
        content: "Fleet test: drafted on one replica, confirmed on the other.",
      });
      expect(draft.status).toBe("awaiting_confirmation");
      const done = await two.call("confirm_write", { confirmation_id: draft.confirmation_id });
      expect(done.status).toBe("succeeded");
      // Confirming again, anywhere, sends nothing more.
      const again = await one.call("confirm_write", { confirmation_id: draft.confirmation_id });
      expect(again.result.id).toBe(done.result.id);
      expect(await notes()).toBe(before + 1);
    } finally {
      await Promise.all([one.client.close(), two.client.close(), proxy.client.close()]);
    }
  });

  it("plays deploy/kubernetes with podman kube play: two pods that sign in and reach Redis", async () => {
    // The ConfigMap and the Deployment as they are, pointed at this fleet's sandbox and Redis
    // (the Services of a cluster are the compose network's names here). podman 4.3 cannot
    // play the Secret kind (it stores it in a form its own reader refuses), so the secret is
    // made with podman, from the same keys; Service, PodDisruptionBudget and StatefulSet are
    // not kinds podman plays.
    const [config] = parseAllDocuments(readFileSync(join(kube, "configmap.yaml"), "utf8")).map(
      (d) => d.toJS(),
    );
    const [deployment] = parseAllDocuments(readFileSync(join(kube, "deployment.yaml"), "utf8")).map(
      (d) => d.toJS(),
    );
    const [secret] = parseAllDocuments(readFileSync(join(kube, "secret.yaml"), "utf8")).map((d) =>
      d.toJS(),
    );
    config.data.PORTFOLIO_API_BASE_URL = "http://sandbox:4010/v1";
    config.data.PORTFOLIO_API_KEY_ID = "sandboxdemo";
    config.data.PORTFOLIO_DELEGATED_USER_EMAIL = "camille.martin@aurore-capital.example";
    const values: Record<string, string> = {
      PORTFOLIO_API_SECRET: "sandbox-demo-secret-not-for-production",
      PORTFOLIO_STATE_SECRET: readFileSync(join(dir, "secrets", "state_secret"), "utf8").trim(),
      PORTFOLIO_MCP_TOKEN: token,
    };
    expect(Object.keys(secret.stringData).sort()).toEqual(Object.keys(values).sort());
    const name = `${project}-secrets`;
    const secretFile = join(dir, "kube-secret.json");
    writeFileSync(
      secretFile,
      JSON.stringify(
        Object.fromEntries(
          Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
        ),
      ),
    );
    await podman("secret", "create", name, secretFile);
    deployment.metadata.name = `${project}-k8s`;
    const [container] = deployment.spec.template.spec.containers;
    container.image = TEST_IMAGE;
    container.envFrom[1].secretRef.name = name;
    // podman publishes every containerPort on the host, which two pods cannot share: the
    // pods are reached on the compose network instead.
    delete container.ports;
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe])
      probe.httpGet.port = 8787;
    kubeFile = join(dir, "kube.yaml");
    writeFileSync(kubeFile, `${stringify(config)}---\n${stringify(deployment)}`);
    await podman("kube", "play", "--network", `${project}_default`, kubeFile);
    const pods = await podman(
      "pod",
      "ps",
      "--format",
      "{{.Name}}",
      "--filter",
      `name=${project}-k8s`,
    );
    expect(pods.split("\n").sort()).toEqual([`${project}-k8s-pod-0`, `${project}-k8s-pod-1`]);
    for (const pod of pods.split("\n")) {
      const replica = `${pod}-portfolio-mcp`;
      const ready = await waitFor(`${pod} ready`, async () => {
        const { stdout } = await run("podman", [
          "exec",
          replica,
          "node",
          "-e",
          "fetch('http://127.0.0.1:8787/readyz').then(async (r) => console.log(r.status, await r.text()))",
        ]);
        return stdout.startsWith("200") ? stdout.trim() : undefined;
      });
      expect(ready).toBe('200 {"status":"ready"}');
      expect(await podman("inspect", "--format", "{{.Config.User}}", replica)).toBe("10001:10001");
    }
  }, 120_000);
});
