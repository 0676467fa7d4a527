import type { SirenRecord } from "../models/siren.js";
import { registryLookup } from "../siren.js";
import type { FamilySeed } from "./index.js";

/**
 * Earlier explicit resolutions left in the cache: the parent companies of operators, which no
 * local record knows. Pushed with the local records, tagged `cache`, so that deleting the
 * cache has something to delete (and shows that it resolves nothing again, spec part 4).
 */
export const seedSiren: FamilySeed<object> = {
  family: "siren",
  seed(data, { random, at }) {
    const known = new Set(data.sirenRecords.map((r) => r.siren));
    for (const operator of data.operators) {
      const parent = operator.siren_mere;
      if (!parent || known.has(parent)) continue;
      known.add(parent);
      const record: SirenRecord = {
        ...registryLookup(parent, at(-random.int(3, 180), random.int(0, 600))),
        source: "cache",
      };
      data.sirenRecords.push(record);
    }
    return {};
  },
};
