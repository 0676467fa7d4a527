import { calendarRoutes } from "./handlers/calendar.js";
import { dealRoutes } from "./handlers/deals.js";
import { meRoutes } from "./handlers/me.js";
import { operationRoutes } from "./handlers/operations.js";
import { operatorRoutes } from "./handlers/operators.js";
import { portfolioRoutes } from "./handlers/portfolio.js";
import { referenceRoutes } from "./handlers/reference.js";
import { reportRoutes } from "./handlers/reports.js";
import { sirenRoutes } from "./handlers/siren.js";
import { structureRoutes } from "./handlers/structures.js";
import { workflowRoutes } from "./handlers/workflows.js";
import type { RouteDef } from "./routing.js";

/** The sandbox's route table (README, "Sandbox routes"). The token exchange is handled apart. */
export const ROUTES: readonly RouteDef[] = [
  ...portfolioRoutes,
  ...operationRoutes,
  ...dealRoutes,
  ...structureRoutes,
  ...operatorRoutes,
  ...referenceRoutes,
  ...sirenRoutes,
  ...calendarRoutes,
  ...reportRoutes,
  ...workflowRoutes,
  ...meRoutes,
];
