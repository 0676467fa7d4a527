import { describe, expectTypeOf, it } from "vitest";
import type { OperationInput } from "../../src/api/catalogue.js";

describe("OperationInput", () => {
  it("requires what an operation needs and nothing else", () => {
    expectTypeOf<Record<never, never>>().toExtend<OperationInput<"operations_list">>();
    expectTypeOf<{ query: { status: string } }>().toExtend<OperationInput<"operations_list">>();
    expectTypeOf<Record<never, never>>().not.toExtend<OperationInput<"operation_get">>();
    expectTypeOf<{ path: { operation_id: string } }>().toExtend<OperationInput<"operation_get">>();
    // Every note field is optional in the spec, so the body may be left out...
    expectTypeOf<{ path: { operation_id: string } }>().toExtend<
      OperationInput<"operation_note_create">
    >();
    // ...but a dashboard needs its name.
    expectTypeOf<Record<never, never>>().not.toExtend<OperationInput<"custom_dashboard_create">>();
    expectTypeOf<{ body: { name: string } }>().toExtend<
      OperationInput<"custom_dashboard_create">
    >();
    expectTypeOf<{ path: { operation_id: string }; body: { content: string } }>().toExtend<
      OperationInput<"operation_note_create">
    >();
  });
});
