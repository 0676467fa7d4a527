import { STATUS_CODES } from "node:http";
import type { FieldError } from "@portfolio-mcp/field-errors";
import { z } from "zod";
import { component } from "./models/common.js";

export type { FieldError } from "@portfolio-mcp/field-errors";

export interface ProblemExtras {
  reasonCode?: string;
  scope?: string;
  routeId?: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
}

/**
 * A refusal, thrown anywhere in the pipeline and answered as `application/problem+json` with
 * the fields of spec part 7. `errors` is the sandbox's extension for validation failures.
 */
export class Problem extends Error {
  readonly status: number;
  readonly detail: string;
  readonly extras: ProblemExtras;

  constructor(status: number, detail: string, extras: ProblemExtras = {}) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.extras = extras;
  }
}

/** Spec part 7, with the sandbox's `errors` extension naming each refused field and rule. */
export const problemSchema = component(
  "Problem",
  z.object({
    type: z.string().default("about:blank"),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    request_id: z.string().optional(),
    reason_code: z.string().optional(),
    scope: z.string().optional(),
    route_id: z.string().optional(),
    errors: z
      .array(z.object({ field: z.string(), rule: z.string(), message: z.string() }))
      .optional(),
  }),
);
export type ProblemBody = z.output<typeof problemSchema>;

export function problemBody(problem: Problem, requestId: string, routeId?: string): ProblemBody {
  const { reasonCode, scope, errors } = problem.extras;
  const route = problem.extras.routeId ?? routeId;
  return {
    type: "about:blank",
    title: STATUS_CODES[problem.status] ?? "Error",
    status: problem.status,
    detail: problem.detail,
    request_id: requestId,
    ...(reasonCode ? { reason_code: reasonCode } : {}),
    ...(scope ? { scope } : {}),
    ...(route ? { route_id: route } : {}),
    ...(errors ? { errors } : {}),
  };
}

export function invalid(errors: FieldError[], reasonCode = "validation_failed"): Problem {
  const detail = errors.map((e) => `${e.field}: ${e.message}`).join("; ");
  return new Problem(422, detail, { reasonCode, errors });
}

export function notFound(what: string, id: string, reasonCode: string): Problem {
  return new Problem(404, `No ${what} with id ${id} in this entity.`, { reasonCode });
}
