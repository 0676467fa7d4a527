import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";

/**
 * The demo data agree with the sandbox's own clock: nothing the data say has happened is later
 * than the moment the sandbox started (events and due dates may be ahead; detections, logins,
 * creations and reads may not).
 */
let sandbox: Sandbox;
let startedAt: string;
beforeAll(async () => {
  startedAt = new Date().toISOString();
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

const after = (values: Array<[string, string | null | undefined]>) =>
  values
    .filter(([, at]) => typeof at === "string" && at > startedAt)
    .map(([what, at]) => `${what} ${at}`);

describe("the seed against the sandbox's clock", () => {
  it("detects no alert, logs no user in, creates no record after now", () => {
    const d = sandbox.control.state.data;
    expect(
      after([
        ...d.alerts.flatMap(
          (a): Array<[string, string | null]> => [
            [`alert ${a.title} detected_at`, a.detected_at],
            [`alert ${a.title} created_at`, a.created_at],
          ],
        ),
        ...d.users.map((u): [string, string | null] => [
          `user ${u.email} last_login_at`,
          u.last_login_at,
        ]),
        ...d.notifications.flatMap(
          (n): Array<[string, string | null]> => [
            [`notification ${n.title} created_at`, n.created_at],
            [`notification ${n.title} read_at`, n.read_at],
          ],
        ),
        ...d.calendarEvents.flatMap(
          (e): Array<[string, string | null]> => [
            [`event ${e.title} created_at`, e.created_at],
            [`event ${e.title} updated_at`, e.updated_at],
          ],
        ),
        ...d.documents.map((doc): [string, string | null] => [
          `document ${doc.name} created_at`,
          doc.created_at,
        ]),
      ]),
    ).toEqual([]);
  });

  it("keeps open alerts' detections in the past, whatever their due date", () => {
    const open = sandbox.control.state.data.alerts.filter((a) => a.status === "open");
    expect(open.length).toBeGreaterThan(0);
    for (const alert of open) expect(alert.detected_at <= startedAt, alert.title).toBe(true);
  });
});
