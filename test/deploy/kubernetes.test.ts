import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Secret, Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { describeVariables } from "../../src/config.js";

// The Kubernetes kit, validated against the Kubernetes API's own JSON schemas as the
// kubernetes-models package ships them (offline; like kubectl's default validation, it checks
// types and required fields, not unknown ones), then read for what the fleet needs.
const dir = new URL("../../deploy/kubernetes/", import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
// Manifests are plain YAML, read field by field.
type Doc = any;
const docs: Array<{ file: string; doc: Doc }> = readdirSync(dir)
  .filter((f) => f.endsWith(".yaml"))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), "utf8")).map((d) => ({
      file,
      doc: d.toJS(),
    })),
  );
const MODELS: Record<string, new (doc: Doc) => { validate(): void }> = {
  "apps/v1 Deployment": Deployment,
  "apps/v1 StatefulSet": StatefulSet,
  "policy/v1 PodDisruptionBudget": PodDisruptionBudget,
  "v1 ConfigMap": ConfigMap,
  "v1 Secret": Secret,
  "v1 Service": Service,
};
const find = (kind: string, name: string) =>
  docs.find((d) => d.doc.kind === kind && d.doc.metadata.name === name)?.doc;

describe("deploy/kubernetes", () => {
  it("every document is valid against the Kubernetes schema of its kind", () => {
    expect(docs.map((d) => `${d.file}: ${d.doc.kind}`).sort()).toEqual([
      "configmap.yaml: ConfigMap",
      "deployment.yaml: Deployment",
      "pdb.yaml: PodDisruptionBudget",
      "redis.yaml: Service",
      "redis.yaml: StatefulSet",
      "secret.yaml: Secret",
      "service.yaml: Service",
    ]);
    for (const { file, doc } of docs) {
      const model = new MODELS[`${doc.apiVersion} ${doc.kind}`]!(doc);
      expect(() => model.validate(), file).not.toThrow();
    }
    // The validator catches what it should: a wrong type is refused.
    const wrong = structuredClone(find("Deployment", "portfolio-mcp"));
    wrong.spec.replicas = "two";
    expect(() => new Deployment(wrong).validate()).toThrow(/replicas must be integer/);
  });

  it("the Deployment: replicas, probes, resources, a restricted security context, spread", () => {
    const deployment = find("Deployment", "portfolio-mcp");
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(container.image).toBe(`portfolio-mcp:${pkg.version}`);
    // Behind a Service without affinity, every replica serves every request.
    expect(container.args).toContain("--stateless");
    expect(container.args.join(" ")).toContain("--host 0.0.0.0 --port 8787");
    const probe = (p: Doc) => ({ path: p.httpGet.path, host: p.httpGet.httpHeaders[0].value });
    expect(probe(container.startupProbe)).toEqual({ path: "/healthz", host: "localhost:8787" });
    expect(probe(container.livenessProbe)).toEqual({ path: "/healthz", host: "localhost:8787" });
    expect(probe(container.readinessProbe)).toEqual({ path: "/readyz", host: "localhost:8787" });
    expect(container.resources.requests).toMatchObject({ cpu: expect.any(String) });
    expect(container.resources.limits.memory).toBeTruthy();
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(container.volumeMounts).toEqual([
      { name: "state", mountPath: "/var/lib/portfolio-mcp" },
    ]);
    expect(pod.topologySpreadConstraints[0]).toMatchObject({
      topologyKey: "kubernetes.io/hostname",
      labelSelector: { matchLabels: deployment.spec.selector.matchLabels },
    });
    // In-flight calls finish before Kubernetes kills the pod.
    const config = find("ConfigMap", "portfolio-mcp");
    expect(Number(config.data.PORTFOLIO_SHUTDOWN_GRACE_SECONDS)).toBeLessThan(
      pod.terminationGracePeriodSeconds,
    );
  });

  it("reads a ConfigMap and a Secret of this folder whose keys are the server's variables", () => {
    const [container] = find("Deployment", "portfolio-mcp").spec.template.spec.containers;
    const config = find("ConfigMap", container.envFrom[0].configMapRef.name);
    const secret = find("Secret", container.envFrom[1].secretRef.name);
    const known = new Set(describeVariables().map((v) => v.name));
    for (const key of [...Object.keys(config.data), ...Object.keys(secret.stringData)])
      expect(known, key).toContain(key);
    expect(Object.keys(secret.stringData).sort()).toEqual([
      "PORTFOLIO_API_SECRET",
      "PORTFOLIO_MCP_TOKEN",
      "PORTFOLIO_STATE_SECRET",
    ]);
    expect(config.data.PORTFOLIO_REDIS_URL).toBe("redis://redis:6379/0");
  });

  it("the Service, the PodDisruptionBudget and Redis select what they should", () => {
    const deployment = find("Deployment", "portfolio-mcp");
    const labels = deployment.spec.template.metadata.labels;
    const service = find("Service", "portfolio-mcp");
    expect(service.spec.selector).toEqual(labels);
    expect(service.spec.sessionAffinity).toBeUndefined();
    expect(service.spec.ports[0].targetPort).toBe(
      deployment.spec.template.spec.containers[0].ports[0].name,
    );
    const pdb = find("PodDisruptionBudget", "portfolio-mcp");
    expect(pdb.spec.selector.matchLabels).toEqual(labels);
    expect(pdb.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
    const redis = find("StatefulSet", "redis");
    expect(redis.spec.template.spec.containers[0].args.join(" ")).toContain(
      "--appendonly yes --appendfsync everysec",
    );
    expect(find("Service", "redis").spec.ports[0].port).toBe(6379);
  });
});
