import type { SandboxControl } from "@portfolio-mcp/sandbox";

export interface FairShareReport {
  seconds: number;
  neighbour: {
    reads: number;
    failed: number;
    failures: string[];
    p50_ms: number;
    p99_ms: number;
    max_ms: number;
  };
  burst: {
    walks: number;
    answered: number;
    refused_with_the_sentence: number;
    other_failures: string[];
    example_refusal: string | null;
  };
  /** From the servers' /metrics, replicas added up. */
  servers: {
    waits: Record<string, number>;
    refusals: Record<string, number>;
    rate_per_minute: Array<number | null>;
  };
  upstream: {
    requests: number;
    answered_429: number;
    walk_requests: number;
    walk_requests_in_busiest_second: number;
  };
}

export const WALK: { name: string; arguments: Record<string, unknown> };
export const READ: { name: string; arguments: Record<string, unknown> };

export function burstAndNeighbour(options: {
  burst: { urls: string[]; token: string };
  neighbour: { url: string; token: string };
  control: Pick<SandboxControl, "mark" | "requests">;
  calls?: number;
}): Promise<FairShareReport>;
