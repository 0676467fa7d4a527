import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DEMO_KEYS } from "../src/index.js";
import { PartnerTestClient } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false, today: "2026-11-21" });

const events = () => env.data.calendarEvents;
const UNKNOWN = "0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40";

/** The digest spec part 2 describes, computed here independently: sha256 of canonical JSON. */
function digestOf(content: Record<string, unknown>): string {
  const canonical = Object.keys(content)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(content[k])}`)
    .join(",");
  return createHash("sha256").update(`{${canonical}}`).digest("hex");
}

describe("manual creation and its receipt", () => {
  const operationId = () => env.data.operations[3]!.id;
  const creation = () => ({
    client_request_id: "crm-7f3a-comite",
    title: "Comité d'investissement",
    event_date: "2026-12-03",
    event_type: "comite",
    operation_id: operationId().toUpperCase(),
  });

  it("creates a manual event whose receipt carries the digest of its content", async () => {
    const reply = await env.client.write("POST", "/calendar/events", creation());
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      title: "Comité d'investissement",
      source: "manual",
      operation_id: operationId(),
      accepted: null,
      description: null,
    });
    expect(reply.body.idempotency_receipt).toEqual({
      client_request_id: "crm-7f3a-comite",
      actor_id: "apikey:sandboxdemo",
      capability: "calendar_events",
      payload_digest: digestOf({
        title: "Comité d'investissement",
        description: null,
        event_date: "2026-12-03",
        event_type: "comite",
        operation_id: operationId(),
        operateur_id: null,
        fond_id: null,
        spv_id: null,
      }),
      replayed: false,
    });
    const read = await env.client.get(`/calendar/events/${reply.body.id}`);
    expect(read.body.idempotency_receipt.replayed).toBe(false);
  });

  it("replays the same creation under a new Idempotency-Key, creating nothing", async () => {
    const before = events().length;
    const first = events().find(
      (e) => e.idempotency_receipt?.client_request_id === "crm-7f3a-comite",
    )!;
    // Same content written differently: lower-case id, an explicit null for an absent field.
    const replay = await env.client.write("POST", "/calendar/events", {
      ...creation(),
      operation_id: operationId(),
      description: null,
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("false");
    expect(replay.body.id).toBe(first.id);
    expect(replay.body.idempotency_receipt).toMatchObject({
      replayed: true,
      payload_digest: first.idempotency_receipt!.payload_digest,
    });
    expect(events()).toHaveLength(before);
    expect(first.idempotency_receipt!.replayed).toBe(false);
  });

  it("refuses the same client_request_id with other content", async () => {
    const before = events().length;
    const conflict = await env.client.write("POST", "/calendar/events", {
      ...creation(),
      event_date: "2026-12-04",
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({
      reason_code: "client_request_id_reused",
      route_id: "calendar_event_create",
    });
    expect(events()).toHaveLength(before);
  });

  it("keeps client_request_ids apart per author", async () => {
    const manager = PartnerTestClient.for(env.sandbox, DEMO_KEYS.portfolioManager);
    const other = await manager.write("POST", "/calendar/events", {
      ...creation(),
      event_date: "2026-12-04",
    });
    expect(other.status).toBe(201);
    expect(other.body.idempotency_receipt).toMatchObject({
      actor_id: "apikey:sandboxpm",
      replayed: false,
    });
  });

  it("replays the seeded manual events' receipts too: their digests are real", async () => {
    const seeded = events().find(
      (e) => e.source === "manual" && e.idempotency_receipt?.actor_id === "usr_camille_martin",
    )!;
    const receipt = seeded.idempotency_receipt!;
    expect(receipt.payload_digest).toBe(
      digestOf({
        title: seeded.title,
        description: seeded.description ?? null,
        event_date: seeded.event_date,
        event_type: seeded.event_type,
        operation_id: seeded.operation_id ?? null,
        operateur_id: seeded.operateur_id ?? null,
        fond_id: seeded.fond_id ?? null,
        spv_id: seeded.spv_id ?? null,
      }),
    );
  });

  it("refuses links to records the entity does not have, and bad fields, by name", async () => {
    const reply = await env.client.write("POST", "/calendar/events", {
      ...creation(),
      client_request_id: "crm-unknown-link",
      spv_id: UNKNOWN,
    });
    expect(reply.status).toBe(422);
    expect(reply.body).toMatchObject({ reason_code: "reference_not_found" });
    expect(reply.body.errors[0].field).toBe("spv_id");
    const long = await env.client.write("POST", "/calendar/events", {
      ...creation(),
      client_request_id: "crm-long",
      title: "x".repeat(301),
      event_type: "y".repeat(51),
    });
    expect(long.body.errors.map((e: any) => `${e.field} ${e.rule}`)).toEqual([
      "title max length 300",
      "event_type max length 50",
    ]);
    const missing = await env.client.write("POST", "/calendar/events", {
      title: "Sans identifiant",
    });
    expect(missing.body.errors.map((e: any) => e.field)).toContain("client_request_id");
  });
});

describe("changing and deleting events", () => {
  it("updates only what is sent, clears with null, and refuses an empty change", async () => {
    const event = events().find((e) => e.description && e.operation_id)!;
    const reply = await env.client.write("PATCH", `/calendar/events/${event.id}`, {
      title: "Test de covenant avancé",
      description: null,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      title: "Test de covenant avancé",
      description: null,
      operation_id: event.operation_id,
      event_date: event.event_date,
    });
    expect(reply.body.updated_at > reply.body.created_at).toBe(true);
    const empty = await env.client.write("PATCH", `/calendar/events/${event.id}`, {});
    expect(empty.status).toBe(422);
    const nullTitle = await env.client.write("PATCH", `/calendar/events/${event.id}`, {
      title: null,
    });
    expect(nullTitle.status).toBe(422);
  });

  it("deletes manual events only; their receipt outlives them", async () => {
    const created = await env.client.write("POST", "/calendar/events", {
      client_request_id: "crm-to-delete",
      title: "Visite annulée",
      event_date: "2026-12-10",
      event_type: "visite_chantier",
    });
    const deleted = await env.client.call("DELETE", `/calendar/events/${created.body.id}`, {
      idempotencyKey: "delete-1",
    });
    expect(deleted.status).toBe(204);
    expect((await env.client.get(`/calendar/events/${created.body.id}`)).status).toBe(404);
    const resend = await env.client.write("POST", "/calendar/events", {
      client_request_id: "crm-to-delete",
      title: "Visite annulée",
      event_date: "2026-12-10",
      event_type: "visite_chantier",
    });
    expect(resend.status).toBe(409);
    expect(resend.body.reason_code).toBe("manual_creation_deleted");

    const scheduled = events().find((e) => e.source === "operation_schedule")!;
    const refused = await env.client.call("DELETE", `/calendar/events/${scheduled.id}`, {
      idempotencyKey: "delete-2",
    });
    expect(refused.status).toBe(409);
    expect(refused.body.reason_code).toBe("event_not_manual");
    const missing = await env.client.call("DELETE", `/calendar/events/${UNKNOWN}`, {
      idempotencyKey: "delete-3",
    });
    expect(missing.status).toBe(404);
    expect(missing.body.reason_code).toBe("calendar_event_not_found");
  });
});

describe("proposals", () => {
  const undecided = () =>
    events().filter((e) => e.source === "alert" && e.accepted === null && e.confidence !== null);

  it("are seeded from alerts with a confidence, some still undecided", () => {
    expect(undecided().length).toBeGreaterThanOrEqual(3);
    for (const e of undecided()) expect(e.confidence).toBeGreaterThan(0);
  });

  it("accepts or rejects an undecided proposal once, and nothing else", async () => {
    const [first, second] = undecided();
    const accepted = await env.client.write(
      "POST",
      `/calendar/events/${first!.id}/accept`,
      undefined,
    );
    expect(accepted.status).toBe(200);
    expect(accepted.body.accepted).toBe(true);
    const rejected = await env.client.write(
      "POST",
      `/calendar/events/${second!.id}/reject`,
      undefined,
    );
    expect(rejected.body.accepted).toBe(false);
    for (const [event, decision] of [
      [first, "reject"],
      [first, "accept"],
      [second, "accept"],
    ] as const) {
      const again = await env.client.write(
        "POST",
        `/calendar/events/${event!.id}/${decision}`,
        undefined,
      );
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({
        reason_code: "invalid_transition",
        route_id: `calendar_event_${decision}`,
      });
    }
    const manual = events().find((e) => e.source === "manual")!;
    const notProposal = await env.client.write(
      "POST",
      `/calendar/events/${manual.id}/accept`,
      undefined,
    );
    expect(notProposal.status).toBe(409);
    expect(notProposal.body.reason_code).toBe("not_a_proposal");
  });
});
