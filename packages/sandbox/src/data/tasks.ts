import type { Operation } from "../models/operations.js";
import {
  type LABEL_COLORS,
  type StoredTaskLabel,
  TASK_STATUSES,
  type Task,
  type TaskStatus,
} from "../models/tasks.js";
import { DEMO_USERS } from "./demo.js";
import type { FamilySeed } from "./index.js";

export interface TasksData {
  tasks: Task[];
  taskLabels: StoredTaskLabel[];
}

const LABELS: ReadonlyArray<readonly [string, (typeof LABEL_COLORS)[number], string]> = [
  ["Reporting", "blue", "Pièces et reportings attendus des opérateurs."],
  ["Juridique", "purple", "Actes, garanties, assurances."],
  ["Comité", "amber", "À présenter au comité d'investissement ou de suivi."],
  ["Risque", "red", "Points de vigilance du contrôle des risques."],
  ["KYC", "teal", "Connaissance des opérateurs et des SPV."],
  ["Travaux", "slate", "Suivi de chantier et appels de fonds."],
];

/** Task templates: title, label, description. */
const TEMPLATES: ReadonlyArray<readonly [string, string, string]> = [
  [
    "Relancer l'opérateur pour le reporting trimestriel",
    "Reporting",
    "Reporting du trimestre non reçu à date.",
  ],
  [
    "Analyser le rapport d'expertise",
    "Risque",
    "Vérifier la valeur vénale retenue et la LTV qui en découle.",
  ],
  [
    "Préparer la note pour le comité de suivi",
    "Comité",
    "Synthèse de l'avancement, des ventes et des risques.",
  ],
  [
    "Obtenir l'attestation d'assurance dommages-ouvrage",
    "Juridique",
    "Pièce manquante au dossier.",
  ],
  [
    "Contrôler l'appel de fonds",
    "Travaux",
    "Rapprocher l'appel de fonds de l'avancement certifié par le maître d'œuvre.",
  ],
  ["Mettre à jour le KYC de l'opérateur", "KYC", "Kbis et bénéficiaires effectifs à renouveler."],
  [
    "Obtenir le plan de trésorerie actualisé",
    "Risque",
    "Demandé après le dépassement du budget travaux.",
  ],
  ["Organiser une visite de chantier", "Travaux", "Avec l'opérateur et le maître d'œuvre."],
];

const BLOCKERS = [
  "En attente des pièces de l'opérateur.",
  "En attente du rapport de l'expert.",
  "Suspendu jusqu'au prochain comité.",
];

/**
 * A board of follow-up tasks on the live operations, in every column, some overdue, each with
 * the label its subject calls for; assigned to the approved users who work the portfolio.
 */
export const seedTasks: FamilySeed<TasksData> = {
  family: "tasks",
  seed(data, { random, at, day }) {
    const created = at(-200);
    const taskLabels: StoredTaskLabel[] = LABELS.map(([name, color, description]) => ({
      id: random.uuid(),
      name,
      color,
      description,
      created_at: created,
      updated_at: created,
    }));
    const labelId = new Map(taskLabels.map((l) => [l.name, l.id]));
    const users = data.users.filter((u) => u.status === "approved");
    const live = data.operations.filter(
      (o: Operation) => o.status !== "sourcing" && o.phase !== "terminee",
    );
    const tasks: Task[] = [];
    const positions: Record<TaskStatus, number> = { todo: 0, in_progress: 0, blocked: 0, done: 0 };
    let turn = 0;
    for (const operation of live.slice(0, 24)) {
      const count = random.int(1, 3);
      for (const [title, label, description] of random.shuffle(TEMPLATES).slice(0, count)) {
        const status = TASK_STATUSES[turn++ % TASK_STATUSES.length] as TaskStatus;
        const assignee = random.chance(0.85) ? random.pick(users) : null;
        const opened = -random.int(5, 90);
        const createdAt = at(opened, random.int(0, 480));
        const updatedAt = at(Math.min(-1, opened + random.int(1, 20)), random.int(0, 480));
        tasks.push({
          id: random.uuid(),
          operation_id: operation.id,
          operation_name: operation.name,
          title,
          description,
          status,
          priority: random.pick(["low", "normal", "normal", "high", "urgent"] as const),
          assignee_id: assignee?.id ?? null,
          assignee_name: assignee?.display_name ?? null,
          due_date: random.chance(0.8) ? day(random.int(-15, 45)) : null,
          label_ids: [labelId.get(label) as string],
          position: positions[status]++,
          blocked_reason: status === "blocked" ? random.pick(BLOCKERS) : null,
          created_by: random.pick([DEMO_USERS.camille, DEMO_USERS.thomas]),
          created_at: createdAt,
          updated_at: updatedAt,
          completed_at: status === "done" ? updatedAt : null,
        });
      }
    }
    return { tasks, taskLabels };
  },
};
