import { z } from "zod";
import { defineRoute, json } from "../routing.js";
import { page, pageQuery } from "./pagination.js";

export const calendarRoutes = [
  defineRoute({
    id: "calendar_list",
    method: "GET",
    path: "/calendar/events",
    scope: "calendar:read",
    kind: "read",
    query: z.strictObject(pageQuery(200, 20)),
    handle({ query, state }) {
      const events = [...state.data.calendarEvents].sort(
        (a, b) => a.event_date.localeCompare(b.event_date) || a.title.localeCompare(b.title, "fr"),
      );
      return json(page(events, query));
    },
  }),
  defineRoute({
    id: "notifications_unread_count",
    method: "GET",
    path: "/notifications/unread-count",
    scope: "notifications:read",
    kind: "read",
    handle({ state }) {
      const unread = state.data.notifications.filter((n) => !n.read);
      return json({
        count: unread.length,
        has_critical: unread.some((n) => n.severity === "critical"),
      });
    },
  }),
];
