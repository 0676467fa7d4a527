import type { RgpdErasure } from "../models/rgpd.js";
import { newExport, type RgpdExportRecord } from "../rgpd.js";
import type { FamilySeed } from "./index.js";
import { DEMO_USERS } from "./users.js";

export interface DelegatedData {
  rgpdExports: RgpdExportRecord[];
  rgpdErasures: RgpdErasure[];
}

/**
 * Personal-data exports the demo users asked for: one of Camille's is still served, an older
 * one has expired, and Julien has one. No erasure is seeded: an erasure is the delegated user's
 * own request, and each demo user stands for a case the delegation rules need.
 */
export const seedDelegated: FamilySeed<DelegatedData> = {
  family: "delegated",
  seed(data, { random, at }) {
    const requests: Array<[userId: string, daysAgo: number]> = [
      [DEMO_USERS.camille, 40],
      [DEMO_USERS.camille, 2],
      [DEMO_USERS.julien, 1],
    ];
    const rgpdExports = requests.flatMap(([userId, daysAgo]) => {
      const user = data.users.find((u) => u.id === userId);
      return user ? [newExport(data, user, random.uuid(), Date.parse(at(-daysAgo, 14)))] : [];
    });
    return { rgpdExports, rgpdErasures: [] };
  },
};
