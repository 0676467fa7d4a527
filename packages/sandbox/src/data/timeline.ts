import type { StatusChange } from "../models/timeline.js";
import { DEMO_USERS } from "./demo.js";
import type { FamilySeed } from "./index.js";

export interface TimelineData {
  statusChanges: StatusChange[];
}

/** The statuses an operation went through to reach its current one. */
const PATHS: Record<string, readonly string[]> = {
  sourcing: ["sourcing"],
  instruction: ["sourcing", "instruction"],
  travaux: ["sourcing", "instruction", "travaux"],
  commercialisation: ["sourcing", "instruction", "travaux", "commercialisation"],
  livraison: ["sourcing", "instruction", "travaux", "commercialisation", "livraison"],
  remboursee: [
    "sourcing",
    "instruction",
    "travaux",
    "commercialisation",
    "livraison",
    "remboursee",
  ],
  cloturee: [
    "sourcing",
    "instruction",
    "travaux",
    "commercialisation",
    "livraison",
    "remboursee",
    "cloturee",
  ],
  abandonnee: ["sourcing", "instruction", "abandonnee"],
};

/**
 * Each operation's history of statuses, from its creation (as sourcing) to its current status,
 * the last move at its latest update: what the timeline tells of how it got where it is.
 */
export const seedTimeline: FamilySeed<TimelineData> = {
  family: "timeline",
  seed(data, { random }) {
    const statusChanges: StatusChange[] = [];
    for (const operation of data.operations) {
      const path = PATHS[operation.status] ?? [operation.status];
      const start = Date.parse(operation.created_at);
      const end = Math.max(start, Date.parse(operation.updated_at));
      path.forEach((status, i) => {
        const share =
          i === 0
            ? 0
            : i === path.length - 1
              ? 1
              : (i + random.next() * 0.6 - 0.3) / (path.length - 1);
        statusChanges.push({
          id: random.uuid(),
          operation_id: operation.id,
          from: i === 0 ? null : (path[i - 1] ?? null),
          to: status,
          at: new Date(start + Math.round((end - start) * share)).toISOString(),
          by: i === 0 ? "system" : random.pick([DEMO_USERS.camille, DEMO_USERS.thomas]),
        });
      });
    }
    return { statusChanges };
  },
};
