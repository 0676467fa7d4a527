import { randomUUID } from "node:crypto";
import { z } from "zod";
import { payloadDigest } from "../data/calendar.js";
import { IDEMPOTENCY_KEY_PATTERN } from "../idempotency.js";
import { serviceAccount } from "../keys.js";
import {
  type CalendarEvent,
  calendarEventListSchema,
  calendarEventSchema,
} from "../models/calendar.js";
import { date } from "../models/common.js";
import { invalid, notFound, Problem } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { assertTransition, type Transitions } from "../transitions.js";
import { uuid } from "../validation.js";
import { checkLinks, lowerId } from "./links.js";
import { page, pageQuery } from "./pagination.js";

/** The capability a manual creation's receipt relates to (spec part 2). */
const MANUAL_CREATION = "calendar_events";

const eventParams = z.strictObject({ event_id: uuid });

/** Links an event may carry; each must name a record of the entity. */
const links = {
  operation_id: uuid.nullish(),
  operateur_id: uuid.nullish(),
  fond_id: uuid.nullish(),
  spv_id: uuid.nullish(),
};

const eventFields = {
  title: z.string().min(1).max(300),
  description: z.string().max(5000).nullish(),
  event_date: date,
  event_type: z.string().min(1).max(50),
  ...links,
};

const createBody = z.strictObject({
  client_request_id: z
    .string()
    .min(1)
    .max(255)
    .regex(IDEMPOTENCY_KEY_PATTERN, "must be printable ASCII without spaces"),
  ...eventFields,
});

// Absent leaves a field as it is; null clears a nullable one (spec part 2, conventions).
const updateBody = z.strictObject(eventFields).partial();

type Decision = "accept" | "reject";
type ProposalState = "undecided" | "accepted" | "rejected";

/** Spec part 3: `accepted` is null until decided, then true or false, for good. */
const PROPOSAL_DECISIONS: Transitions<ProposalState, Decision> = {
  accept: ["undecided"],
  reject: ["undecided"],
};

type Receipt = NonNullable<CalendarEvent["idempotency_receipt"]>;
type ManualContent = Omit<z.output<typeof createBody>, "client_request_id">;

/**
 * The event an earlier creation with the same client_request_id made, marked replayed; null
 * for a first creation. 409 when the content differs, or when that event was deleted.
 */
function replayedCreation(state: SandboxState, receipt: Receipt): CalendarEvent | null {
  const id = receipt.client_request_id;
  const earlier = state.data.calendarReceipts.find(
    (r) => r.actor_id === receipt.actor_id && r.client_request_id === id,
  );
  if (!earlier) return null;
  if (earlier.payload_digest !== receipt.payload_digest) {
    throw new Problem(
      409,
      `client_request_id ${id} already created an event with other content; use a new client_request_id for a new event.`,
      { reasonCode: "client_request_id_reused" },
    );
  }
  if (earlier.deleted) {
    throw new Problem(
      409,
      `The event created under client_request_id ${id} was deleted; use a new client_request_id to create it again.`,
      { reasonCode: "manual_creation_deleted" },
    );
  }
  const stored = findEvent(state, earlier.event_id);
  const replay = stored.idempotency_receipt ?? null;
  return { ...stored, idempotency_receipt: replay && { ...replay, replayed: true } };
}

function manualEvent(
  state: SandboxState,
  content: ManualContent,
  receipt: Receipt,
  at: string,
): CalendarEvent {
  return {
    id: randomUUID(),
    entity_id: state.data.entity.id,
    title: content.title,
    description: content.description ?? null,
    event_date: content.event_date,
    event_type: content.event_type,
    operation_id: lowerId(content.operation_id) ?? null,
    operateur_id: lowerId(content.operateur_id) ?? null,
    fond_id: lowerId(content.fond_id) ?? null,
    spv_id: lowerId(content.spv_id) ?? null,
    source: "manual",
    source_alert_id: null,
    confidence: null,
    accepted: null,
    idempotency_receipt: receipt,
    created_at: at,
    updated_at: at,
  };
}

/** A proposal is an event a machine suggested (from an alert, with a confidence index). */
function isProposal(event: CalendarEvent): boolean {
  return (event.source_alert_id ?? null) !== null || (event.confidence ?? null) !== null;
}

function proposalState(event: CalendarEvent): ProposalState {
  if (event.accepted === true) return "accepted";
  return event.accepted === false ? "rejected" : "undecided";
}

function findEvent(state: SandboxState, id: string): CalendarEvent {
  const event = state.data.calendarEvents.find((e) => e.id === id.toLowerCase());
  if (!event) throw notFound("calendar event", id, "calendar_event_not_found");
  return event;
}

const decisionRoute = (decision: Decision) =>
  defineRoute({
    id: `calendar_event_${decision}`,
    family: "calendar",
    method: "POST",
    path: `/calendar/events/{event_id}/${decision}`,
    scope: "calendar:write",
    kind: "write",
    summary: decision === "accept" ? "Accept a proposed event" : "Reject a proposed event",
    description: "Only a proposal (an event derived from an alert) that is still undecided.",
    params: eventParams,
    response: { status: 200, schema: calendarEventSchema },
    refusals: {
      404: ["calendar_event_not_found"],
      409: ["not_a_proposal", "invalid_transition"],
    },
    example: ({ state }) => {
      const event = state.data.calendarEvents.find(
        (e) => isProposal(e) && proposalState(e) === "undecided",
      );
      return event ? { params: { event_id: event.id } } : {};
    },
    handle({ params, state, now }) {
      const event = findEvent(state, params.event_id);
      if (!isProposal(event)) {
        throw new Problem(
          409,
          `Event ${event.id} is not a proposal; there is nothing to ${decision}.`,
          {
            reasonCode: "not_a_proposal",
          },
        );
      }
      assertTransition(PROPOSAL_DECISIONS, decision, proposalState(event), `Proposal ${event.id}`);
      Object.assign(event, {
        accepted: decision === "accept",
        updated_at: new Date(now()).toISOString(),
      });
      return json(event);
    },
  });

export const calendarRoutes = [
  defineRoute({
    id: "calendar_list",
    family: "calendar",
    method: "GET",
    path: "/calendar/events",
    scope: "calendar:read",
    kind: "read",
    summary: "List calendar events by date",
    query: z.strictObject(pageQuery(200, 20)),
    response: { status: 200, schema: calendarEventListSchema },
    handle({ query, state }) {
      const events = [...state.data.calendarEvents].sort(
        (a, b) => a.event_date.localeCompare(b.event_date) || a.title.localeCompare(b.title, "fr"),
      );
      return json(page(events, query));
    },
  }),
  defineRoute({
    id: "calendar_event_create",
    family: "calendar",
    method: "POST",
    path: "/calendar/events",
    scope: "calendar:write",
    kind: "write",
    summary: "Create a manual event",
    description:
      "`client_request_id` is the durable identity of the creation: sent again with the same content (same `payload_digest`), it returns the stored event with `replayed: true`, whatever the Idempotency-Key; with other content it is refused (409 `client_request_id_reused`).",
    body: createBody,
    response: { status: 201, schema: calendarEventSchema },
    refusals: {
      409: ["client_request_id_reused", "manual_creation_deleted"],
      422: ["reference_not_found"],
    },
    example: ({ today }) => ({
      body: {
        client_request_id: "contract-walk-creation",
        title: "Point de suivi avec l'opérateur",
        event_date: today,
        event_type: "custom",
      },
    }),
    handle({ body, state, key, now }) {
      checkLinks(state, body);
      const { client_request_id: clientRequestId, ...content } = body;
      const receipt: Receipt = {
        client_request_id: clientRequestId,
        actor_id: serviceAccount(key),
        capability: MANUAL_CREATION,
        payload_digest: payloadDigest(content),
        replayed: false,
      };
      const replay = replayedCreation(state, receipt);
      if (replay) return json(replay, 201);
      const event = manualEvent(state, content, receipt, new Date(now()).toISOString());
      state.data.calendarEvents.push(event);
      state.data.calendarReceipts.push({
        actor_id: receipt.actor_id,
        client_request_id: clientRequestId,
        payload_digest: receipt.payload_digest,
        event_id: event.id,
        deleted: false,
      });
      return json(event, 201);
    },
  }),
  defineRoute({
    id: "calendar_event_get",
    family: "calendar",
    method: "GET",
    path: "/calendar/events/{event_id}",
    scope: "calendar:read",
    kind: "read",
    summary: "Get a calendar event",
    params: eventParams,
    response: { status: 200, schema: calendarEventSchema },
    refusals: { 404: ["calendar_event_not_found"] },
    handle: ({ params, state }) => json(findEvent(state, params.event_id)),
  }),
  defineRoute({
    id: "calendar_event_update",
    family: "calendar",
    method: "PATCH",
    path: "/calendar/events/{event_id}",
    scope: "calendar:write",
    kind: "write",
    summary: "Change a calendar event",
    description: "Absent fields are left as they are; null clears a nullable field.",
    params: eventParams,
    body: updateBody,
    response: { status: 200, schema: calendarEventSchema },
    refusals: { 404: ["calendar_event_not_found"], 422: ["reference_not_found"] },
    example: () => ({ body: { title: "Comité de suivi trimestriel" } }),
    handle({ params, body, state, now }) {
      const event = findEvent(state, params.event_id);
      if (Object.keys(body).length === 0) {
        throw invalid([
          { field: "body", rule: "min 1 field", message: "send at least one field to change" },
        ]);
      }
      checkLinks(state, body);
      const changes = Object.fromEntries(
        Object.entries(body)
          .filter(([, value]) => value !== undefined)
          .map(([field, value]) => [
            field,
            field.endsWith("_id") ? lowerId(value as string | null) : value,
          ]),
      );
      Object.assign(event, changes, { updated_at: new Date(now()).toISOString() });
      return json(event);
    },
  }),
  defineRoute({
    id: "calendar_event_delete",
    family: "calendar",
    method: "DELETE",
    path: "/calendar/events/{event_id}",
    scope: "calendar:write",
    kind: "write",
    summary: "Delete a manual event",
    description:
      "Only events created by hand (`source: manual`); proposals are rejected, not deleted. The receipt outlives the event.",
    params: eventParams,
    response: { status: 204 },
    refusals: { 404: ["calendar_event_not_found"], 409: ["event_not_manual"] },
    example: ({ state }) => {
      const manual = state.data.calendarEvents.find((e) => e.source === "manual");
      return manual ? { params: { event_id: manual.id } } : {};
    },
    handle({ params, state }) {
      const event = findEvent(state, params.event_id);
      if (event.source !== "manual") {
        throw new Problem(
          409,
          `Event ${event.id} comes from ${event.source}; only manual events can be deleted.`,
          {
            reasonCode: "event_not_manual",
          },
        );
      }
      state.data.calendarEvents.splice(state.data.calendarEvents.indexOf(event), 1);
      for (const receipt of state.data.calendarReceipts)
        if (receipt.event_id === event.id) receipt.deleted = true;
      return { status: 204 };
    },
  }),
  decisionRoute("accept"),
  decisionRoute("reject"),
];
