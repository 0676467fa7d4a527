import type { FamilyTag } from "../contract/families.js";
import { Random } from "../random.js";
import { seedAlerts } from "./alerts.js";
import { seedCalendar } from "./calendar.js";
import { seedDeals } from "./deals.js";
import {
  type At,
  buildDemoData,
  type Day,
  type DemoData,
  type DemoOptions,
  demoDates,
  type Past,
} from "./demo.js";
import { seedDocuments } from "./documents.js";
import { seedExtraction } from "./extraction.js";
import { seedOperations } from "./operations.js";
import { seedOperators } from "./operators.js";
import { seedRepayments } from "./repayments.js";
import { seedReporting } from "./reporting.js";
import { seedDelegated } from "./rgpd.js";
import { seedSettings } from "./settings.js";
import { seedSiren } from "./siren.js";
import { seedTasks } from "./tasks.js";
import { seedTimeline } from "./timeline.js";
import { seedWorkflows } from "./workflows.js";

/** What a family's seed gets besides the data seeded before it. */
export interface SeedContext {
  /** The family's own generator: adding a family never changes another family's data. */
  random: Random;
  at: At;
  day: Day;
  /** An instant of something done, held to the sandbox's clock (demo.ts, demoDates). */
  past: Past;
  today: string;
}

export interface FamilySeed<T extends object> {
  family: FamilyTag;
  /** Returns the family's collections; may link records seeded before it to them. */
  seed(data: DemoData, context: SeedContext): T;
}

/** The families' own data, in seeding order: one line per family. */
const FAMILY_SEEDS = [
  // Before the alerts: a late repayment's alert names the schedule line and its amount.
  seedRepayments,
  seedAlerts,
  seedCalendar,
  seedDeals,
  seedOperators,
  seedOperations,
  seedSiren,
  seedDocuments,
  seedExtraction,
  seedTasks,
  seedReporting,
  seedTimeline,
  seedDelegated,
  seedSettings,
  seedWorkflows,
] as const;

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

/** Everything the sandbox serves: the core demo data and every family's collections. */
export type SandboxData = DemoData &
  Intersection<ReturnType<(typeof FAMILY_SEEDS)[number]["seed"]>>;

/** Builds the whole data set. Pure: same seed and same `today`, same data. */
export function buildSandboxData(options: DemoOptions): SandboxData {
  const data = buildDemoData(options) as SandboxData;
  const { at, day, past } = demoDates(options.today, options.now);
  for (const family of FAMILY_SEEDS) {
    const random = new Random(`${options.seed}/${family.family}`);
    Object.assign(data, family.seed(data, { random, at, day, past, today: options.today }));
  }
  return data;
}
