import { z } from "zod";
import { CATALOGUE } from "../api/catalogue.js";
import { matchCodes, matchNamed } from "../api/directory.js";
import { record } from "../api/response.js";
import { OUTPUT_BUDGET_CHARS } from "../toolkit/budget.js";
import { type Domain, defineTool, READ_ONLY } from "../toolkit/definitions.js";
import { folded, listPage } from "../toolkit/listing.js";
import { noteRows, operationRows, timelineEvents } from "../toolkit/present.js";
import { isUuid, promptRefusal } from "../toolkit/prompt-args.js";
import { detailTool, fetchDetail, listOf, listTool } from "../toolkit/read-tools.js";
import { CREATES, given, lookUp } from "../toolkit/write-tools.js";
import { quote } from "../writes/display.js";
import { outcomeSchema } from "../writes/outcome.js";

const q = CATALOGUE;
const noteFields = Object.keys(q.operation_note_create.body.shape);

/** The narrative's text is a few paragraphs; a larger one is cut so the events keep room. */
const NARRATIVE_MAX_CHARS = 8_000;
const narrative = z.object({
  title: z.string().nullable(),
  as_of: z.string().nullable(),
  period_start: z.string().nullable(),
  period_end: z.string().nullable(),
  text: z.string().describe("French, four sections: situation, events, attention, next 60 days."),
});
type TimelineEvent = ReturnType<typeof timelineEvents.present>;
const str = (value: unknown) => (typeof value === "string" ? value : null);

/** Operations: the live book, one operation in full, its notes, and notes to add. */
export const operations: Domain = {
  tools: [
    listTool({
      name: "list_operations",
      title: "List operations",
      description:
        "Operations, compact (id, name, status, phase, SPV, amounts), filtered by name, status (a get_taxonomies code, or active) or SPV. Paged.",
      family: "operations",
      operation: "operations_list",
      item: operationRows.item,
      present: operationRows.present,
      query: q.operations_list.query.shape,
      local: {
        shape: {
          name_contains: z
            .string()
            .min(2)
            .max(100)
            .optional()
            .describe("Part of the name; case and accents ignored."),
        },
        keep({ name_contains }) {
          if (typeof name_contains !== "string") return null;
          const wanted = folded(name_contains.trim());
          return (raw) => folded(String(record(raw).name ?? "")).includes(wanted);
        },
      },
      pageable: true,
      narrowHint: "filter by status or spv_id, or lower limit",
    }),
    detailTool({
      name: "get_operation",
      title: "Get an operation",
      description:
        "One operation in full: financial_summary, kpi_snapshot, business data (units in get_field_definitions).",
      family: "operations",
      operation: "operation_get",
      input: q.operation_get.params,
      view: "operation",
    }),
    listTool({
      name: "list_operation_notes",
      title: "List an operation's notes",
      description:
        "Follow-up notes of one operation, newest first (text clipped at 1,500 characters). Paged.",
      family: "operations",
      operation: "operation_notes_list",
      item: noteRows.item,
      present: noteRows.present,
      path: q.operation_notes_list.params.shape,
      query: q.operation_notes_list.query.shape,
      pageable: true,
      narrowHint: "lower limit",
    }),
    defineTool({
      kind: "run",
      name: "get_operation_timeline",
      title: "Get an operation's timeline",
      description:
        "One operation's history, newest first (status changes, notes, alerts, events, documents, tasks, repayments). Paged. narrative=true adds the API's French summary of 90 days.",
      family: "operations",
      annotations: READ_ONLY,
      operations: ["operation_timeline", "operation_narrative"],
      input: z.strictObject({
        ...q.operation_timeline.params.shape,
        ...q.operation_timeline.query.shape,
        narrative: z.boolean().optional(),
      }),
      output: listOf(timelineEvents.item).extend({ narrative: narrative.optional() }),
      async run(args, ctx) {
        const { operation_id, narrative: wanted, ...query } = args;
        const path = { operation_id };
        const story = wanted
          ? await fetchDetail("operation_narrative", { path }, ctx).then((n) => ({
              title: str(n.title),
              as_of: str(n.as_of),
              period_start: str(n.period_start),
              period_end: str(n.period_end),
              text: (str(n.text) ?? "").slice(0, NARRATIVE_MAX_CHARS),
            }))
          : undefined;
        const { list, text } = await listPage<TimelineEvent>(
          {
            operation: "operation_timeline",
            path,
            query,
            present: timelineEvents.present,
            narrowHint: "filter by types or since/until, or lower limit",
            maxLimit: 200,
            budget: OUTPUT_BUDGET_CHARS - (story ? story.text.length + 200 : 0),
          },
          ctx,
        );
        if (!story) return { structured: list, text };
        return {
          structured: { ...list, narrative: story },
          text: `${text}\n\nNarrative, ${story.period_start} to ${story.period_end} (as of ${story.as_of}):\n${story.text}`,
        };
      },
    }),
    defineTool({
      kind: "draft",
      name: "create_operation_note",
      title: "Create a follow-up note",
      description:
        "Drafts a follow-up note on an operation, written once the user confirms this exact note. Give content (or text).",
      family: "operations",
      annotations: CREATES,
      operations: ["operation_get", "operation_note_create"],
      writes: ["operation_note_create"],
      output: outcomeSchema,
      input: z
        .strictObject({
          operation_id: q.operation_note_create.params.shape.operation_id,
          ...q.operation_note_create.body.shape,
        })
        .refine((a) => a.content != null || a.text != null, {
          path: ["content"],
          message: "is required when text is absent (a note needs content or text)",
        }),
      async draft(args, ctx) {
        const operation = record(
          await lookUp(ctx, "operation_get", { path: { operation_id: args.operation_id } }),
        );
        const name = typeof operation.name === "string" ? operation.name : args.operation_id;
        const body = given(args, noteFields);
        return {
          path: { operation_id: args.operation_id },
          body,
          excerpt: args.content ?? args.text ?? undefined,
          preview: {
            action: "Create a follow-up note",
            target: `operation ${quote(name)} (${args.operation_id})`,
            fields: body,
            billable: false,
          },
        };
      },
    }),
  ],
  resources: [
    {
      name: "operations",
      title: "Operations",
      description: "Operations, compact; filter by exact name, status code (or active) and SPV.",
      family: "operations",
      uri: "portfolio://operations{?name,status,spv_id,limit,offset}",
      tool: "list_operations",
      mimeType: "application/json",
      complete: {
        status: async (d, typed) =>
          matchCodes(["active", ...(await d.codes("operation_status"))], typed),
        spv_id: async (d, typed) => matchNamed(await d.spvs(), typed),
      },
    },
    {
      name: "operation",
      title: "Operation",
      description: "One operation in full.",
      family: "operations",
      uri: "portfolio://operations/{operation_id}",
      tool: "get_operation",
      mimeType: "application/json",
      complete: { operation_id: async (d, typed) => matchNamed(await d.operations(), typed) },
    },
    {
      name: "operation-timeline",
      title: "Operation timeline",
      description: "What happened to one operation, newest first; filter by types and dates.",
      family: "operations",
      uri: "portfolio://operations/{operation_id}/timeline{?types,since,until,limit,offset}",
      tool: "get_operation_timeline",
      mimeType: "application/json",
      complete: { operation_id: async (d, typed) => matchNamed(await d.operations(), typed) },
    },
    {
      name: "operation-notes",
      title: "Operation notes",
      description: "Follow-up notes of one operation, newest first.",
      family: "operations",
      uri: "portfolio://operations/{operation_id}/notes",
      tool: "list_operation_notes",
      mimeType: "application/json",
      complete: { operation_id: async (d, typed) => matchNamed(await d.operations(), typed) },
    },
  ],
  prompts: [
    {
      name: "operation_brief",
      title: "Operation brief",
      description: "Everything about one operation: status, figures, notes, upcoming events.",
      family: "operations",
      tools: ["get_operation", "list_operation_notes", "get_operator", "list_calendar_events"],
      arguments: [
        {
          name: "operation_id",
          description: "The operation's id (completion searches operation names).",
          required: true,
          complete: async (d, typed) => matchNamed(await d.operations(), typed),
        },
      ],
      async render(args, ctx) {
        const id = args.operation_id ?? "";
        if (!isUuid(id))
          throw promptRefusal(
            "operation_brief was not rendered: operation_id must be a UUID; give an operation id (completion finds them by name).",
          );
        // A failed read is the prompt's failure, told by its kind (src/mcp/failures.ts).
        const [operation, notes] = await Promise.all([
          ctx.api.call("operation_get", { path: { operation_id: id } }, { signal: ctx.signal }),
          ctx.api.call(
            "operation_notes_list",
            { path: { operation_id: id }, query: { limit: 20 } },
            { signal: ctx.signal },
          ),
        ]);
        const name = (operation.data as { name?: unknown }).name;
        const label = typeof name === "string" ? name : id;
        return {
          description: `Brief on ${label}`,
          messages: [
            {
              role: "user",
              content: {
                type: "resource",
                resource: {
                  uri: `portfolio://operations/${id}`,
                  mimeType: "application/json",
                  text: JSON.stringify(operation.data),
                },
              },
            },
            {
              role: "user",
              content: {
                type: "resource",
                resource: {
                  uri: `portfolio://operations/${id}/notes`,
                  mimeType: "application/json",
                  text: JSON.stringify(notes.data),
                },
              },
            },
            {
              role: "user",
              content: {
                type: "text",
                text: [
                  `Brief me on the operation above (${label}) in under 300 words:`,
                  "status and phase; the financing (amounts exactly as given, EUR) and KPIs (LTV, DSCR, outstanding);",
                  "what the latest notes say and any unresolved risk; the operator (get_operator) and SPV;",
                  "upcoming calendar events for it (list_calendar_events with operation_id). Units come from get_field_definitions.",
                ].join(" "),
              },
            },
          ],
        };
      },
    },
  ],
};
