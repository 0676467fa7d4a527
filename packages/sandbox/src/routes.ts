import { alertRoutes } from "./handlers/alerts.js";
import { calendarRoutes } from "./handlers/calendar.js";
import { dealRoutes } from "./handlers/deals.js";
import { documentRoutes } from "./handlers/documents.js";
import { extractionRoutes } from "./handlers/extraction.js";
import { meRoutes } from "./handlers/me.js";
import { operationImportRoutes } from "./handlers/operation-imports.js";
import { operationNoteRoutes } from "./handlers/operation-notes.js";
import { operationRoutes } from "./handlers/operations.js";
import { operatorRoutes } from "./handlers/operators.js";
import { portfolioRoutes } from "./handlers/portfolio.js";
import { referenceRoutes } from "./handlers/reference.js";
import { repaymentRoutes } from "./handlers/repayments.js";
import { reportRoutes, reportTemplateRoutes } from "./handlers/reports.js";
import { searchRoutes } from "./handlers/search.js";
import { settingsRoutes } from "./handlers/settings.js";
import { sirenRoutes } from "./handlers/siren.js";
import { structureRoutes } from "./handlers/structures.js";
import { taskRoutes } from "./handlers/tasks.js";
import { timelineRoutes } from "./handlers/timeline.js";
import { userRoutes } from "./handlers/users.js";
import { workflowRoutes } from "./handlers/workflows.js";
import type { RouteDef } from "./routing.js";

/**
 * The routes the sandbox serves: one line per handler file. The token exchange is served
 * apart (tokens.ts). The contract they must add up to is contract/table.ts.
 */
export const ROUTES: readonly RouteDef[] = [
  ...portfolioRoutes,
  ...operationRoutes,
  ...operationNoteRoutes,
  ...operationImportRoutes,
  ...dealRoutes,
  ...structureRoutes,
  ...operatorRoutes,
  ...referenceRoutes,
  ...sirenRoutes,
  ...alertRoutes,
  ...calendarRoutes,
  ...reportRoutes,
  ...reportTemplateRoutes,
  ...workflowRoutes,
  ...userRoutes,
  ...meRoutes,
  ...documentRoutes,
  ...extractionRoutes,
  ...searchRoutes,
  ...repaymentRoutes,
  ...taskRoutes,
  ...timelineRoutes,
  ...settingsRoutes,
];
