import type { SandboxData } from "./data/index.js";
import type { Operation } from "./models/operations.js";
import type { SirenRecord } from "./models/siren.js";
import { notFound } from "./problem.js";

/** The live data of one sandbox: the seeded data set, then whatever writes added to it. */
export class SandboxState {
  readonly sirenCache = new Map<string, SirenRecord>();
  billableResolutions = 0;

  constructor(readonly data: SandboxData) {
    for (const record of data.sirenRecords) this.sirenCache.set(record.siren, record);
  }

  operation(id: string): Operation {
    const wanted = id.toLowerCase(); // UUIDs compare case-insensitively
    const operation = this.data.operations.find((o) => o.id === wanted);
    if (!operation) throw notFound("operation", id, "operation_not_found");
    return operation;
  }
}
