import { describe, expect, it } from "vitest";
import { DEMO_USERS } from "../src/index.js";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

// Each test starts from the seeded data: the lifecycle is about state.
const env = sandboxPerTest({ rateLimit: false });

const taskIn = (status: string) => env.data.tasks.find((t) => t.status === status)!;
const patch = (id: string, body: unknown) => env.client.write("PATCH", `/tasks/${id}`, body);
const board = (query: Record<string, string> = {}) => env.client.get("/tasks/board", { query });

describe("the board", () => {
  it("has one column per status, in order, each with its total and tasks by position", async () => {
    const { body } = await board();
    expect(body.columns.map((c: any) => c.status)).toEqual([
      "todo",
      "in_progress",
      "blocked",
      "done",
    ]);
    expect(body.columns.map((c: any) => c.label)).toEqual([
      "À faire",
      "En cours",
      "Bloquée",
      "Terminée",
    ]);
    expect(body.total).toBe(env.data.tasks.length);
    for (const column of body.columns) {
      expect(column.total).toBeGreaterThan(0);
      expect(column.items.every((t: any) => t.status === column.status)).toBe(true);
      const positions = column.items.map((t: any) => t.position);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
    }
    const blocked = body.columns[2].items;
    expect(blocked.every((t: any) => t.blocked_reason)).toBe(true);
  });

  it("filters by operation, assignee and label, and lists an operation's tasks", async () => {
    const task = env.data.tasks.find((t) => t.assignee_id)!;
    const byOperation = await board({ operation_id: task.operation_id });
    const mine = await env.client.get(`/operations/${task.operation_id}/tasks`);
    expect(byOperation.body.total).toBe(mine.body.total);
    expect(mine.body.items.every((t: any) => t.operation_id === task.operation_id)).toBe(true);
    const byAssignee = await board({ assignee_id: task.assignee_id! });
    for (const c of byAssignee.body.columns)
      expect(c.items.every((t: any) => t.assignee_id === task.assignee_id)).toBe(true);
    const byLabel = await board({ label_id: task.label_ids[0]!, limit: "1" });
    for (const c of byLabel.body.columns) expect(c.items.length).toBeLessThanOrEqual(1);
  });
});

describe("the task lifecycle", () => {
  it("allows every move of the table and refuses the others with 409", async () => {
    const allowed: Array<[string, string]> = [
      ["todo", "in_progress"],
      ["todo", "blocked"],
      ["in_progress", "todo"],
      ["in_progress", "blocked"],
      ["in_progress", "done"],
      ["blocked", "todo"],
      ["blocked", "in_progress"],
      ["done", "todo"],
    ];
    for (const [from, to] of allowed) {
      const task = taskIn(from);
      const reply = await patch(task.id, {
        status: to,
        ...(to === "blocked" ? { blocked_reason: "En attente du notaire." } : {}),
      });
      expect(reply.status, `${from} → ${to}`).toBe(200);
      expect(reply.body.status).toBe(to);
      expect(reply.body.blocked_reason).toBe(to === "blocked" ? "En attente du notaire." : null);
      expect(reply.body.completed_at === null).toBe(to !== "done");
      // Put it back so the next row finds a task in the state it needs.
      Object.assign(task, { status: from });
    }
    const refused: Array<[string, string]> = [
      ["todo", "done"],
      ["blocked", "done"],
      ["done", "in_progress"],
      ["done", "blocked"],
    ];
    for (const [from, to] of refused) {
      const reply = await patch(taskIn(from).id, { status: to, blocked_reason: "x" });
      expect(reply.status, `${from} → ${to}`).toBe(409);
      expect(reply.body).toMatchObject({
        reason_code: "invalid_transition",
        route_id: "task_update",
      });
      expect(reply.body.detail).toContain(from);
    }
  });

  it("puts a moved task last in its new column, and needs a reason to block", async () => {
    const task = taskIn("todo");
    const last = Math.max(
      ...env.data.tasks.filter((t) => t.status === "in_progress").map((t) => t.position),
    );
    const moved = await patch(task.id, { status: "in_progress" });
    expect(moved.body.position).toBe(last + 1);
    const noReason = await patch(task.id, { status: "blocked" });
    expect(noReason.status).toBe(422);
    expect(noReason.body.errors[0].field).toBe("blocked_reason");
    const stray = await patch(task.id, { blocked_reason: "x" });
    expect(stray.body.errors[0].field).toBe("blocked_reason");
  });
});

describe("task writes", () => {
  it("create a task last of its column, change it, delete it", async () => {
    const operation = env.data.operations.find((o) => o.status === "travaux")!;
    const label = env.data.taskLabels[0]!;
    const created = await env.client.write("POST", `/operations/${operation.id}/tasks`, {
      title: "Relire le rapport du bureau de contrôle",
      assignee_id: DEMO_USERS.julien,
      due_date: "2030-01-15",
      label_ids: [label.id],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: "todo",
      priority: "normal",
      operation_name: operation.name,
      assignee_name: "Julien Bernard",
      created_by: "apikey:sandboxdemo",
    });
    const column = (await board({ limit: "100" })).body.columns[0];
    expect(column.items.at(-1).id).toBe(created.body.id);
    const changed = await patch(created.body.id, {
      assignee_id: null,
      description: "Rapport reçu.",
    });
    expect(changed.body).toMatchObject({
      assignee_id: null,
      assignee_name: null,
      description: "Rapport reçu.",
    });
    const remove = (n: number) =>
      env.client.call("DELETE", `/tasks/${created.body.id}`, { idempotencyKey: `del-${n}` });
    expect((await remove(1)).status).toBe(204);
    expect((await remove(2)).body.reason_code).toBe("task_not_found");
  });

  it("refuse a suspended assignee, an unknown user or label", async () => {
    const operation = env.data.operations[0]!;
    const reply = await env.client.write("POST", `/operations/${operation.id}/tasks`, {
      title: "Tâche",
      assignee_id: DEMO_USERS.sophie,
      label_ids: ["0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40"],
    });
    expect(reply.status).toBe(422);
    expect(reply.body.reason_code).toBe("reference_not_found");
    expect(reply.body.errors.map((e: any) => e.field)).toEqual(["assignee_id", "label_ids[0]"]);
    const nobody = await patch(taskIn("todo").id, { assignee_id: "usr_inconnu" });
    expect(nobody.body.errors[0].field).toBe("assignee_id");
  });

  it("reorder a column: the tasks listed swap the places they held, the rest stays", async () => {
    const todo = env.data.tasks
      .filter((t) => t.status === "todo")
      .sort((a, b) => a.position - b.position);
    const [a, b, c] = todo;
    const untouched = todo.slice(3).map((t) => [t.id, t.position]);
    const reply = await env.client.write("POST", "/tasks/reorder", {
      status: "todo",
      task_ids: [c!.id, a!.id],
    });
    expect(reply.status).toBe(200);
    expect(reply.body.status).toBe("todo");
    const ids = reply.body.items.map((t: any) => t.id);
    expect(ids.slice(0, 3)).toEqual([c!.id, b!.id, a!.id]);
    expect(todo.slice(3).map((t) => [t.id, t.position])).toEqual(untouched);
    const stray = await env.client.write("POST", "/tasks/reorder", {
      status: "todo",
      task_ids: [a!.id, taskIn("done").id],
    });
    expect(stray.status).toBe(409);
    expect(stray.body.reason_code).toBe("task_not_in_column");
  });
});

describe("labels", () => {
  it("list with their task counts, create, rename, and keep names unique", async () => {
    const { body } = await env.client.get("/tasks/labels");
    expect(body.total).toBe(6);
    const reporting = body.items.find((l: any) => l.name === "Reporting");
    expect(reporting.task_count).toBe(
      env.data.tasks.filter((t) => t.label_ids.includes(reporting.id)).length,
    );
    const created = await env.client.write("POST", "/tasks/labels", {
      name: "Notaire",
      color: "green",
    });
    expect(created.body).toMatchObject({
      name: "Notaire",
      color: "green",
      task_count: 0,
      description: null,
    });
    const taken = await env.client.write("POST", "/tasks/labels", {
      name: "notaire",
      color: "red",
    });
    expect(taken.status).toBe(409);
    expect(taken.body.reason_code).toBe("label_name_taken");
    const renamed = await env.client.write("PATCH", `/tasks/labels/${created.body.id}`, {
      name: "Notaires",
      description: "Actes et signatures.",
    });
    expect(renamed.body).toMatchObject({ name: "Notaires", description: "Actes et signatures." });
    const clash = await env.client.write("PATCH", `/tasks/labels/${created.body.id}`, {
      name: "REPORTING",
    });
    expect(clash.body.reason_code).toBe("label_name_taken");
    const color = await env.client.write("PATCH", `/tasks/labels/${created.body.id}`, {
      color: "mauve",
    });
    expect(color.body.errors[0].field).toBe("color");
  });
});
