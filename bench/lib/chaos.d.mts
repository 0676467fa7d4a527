/** The figures of one class of writes: which operations, and what became of them. */
export interface WriteClass {
  operations: string[];
  requested: number;
  confirmed: number;
  records: number;
  duplicates: number;
  lost_confirmed_writes: number;
}

export interface ChaosReport {
  writes_requested: number;
  confirmed: number;
  failed: number;
  failures: string[];
  unfinished: number;
  draft_retries: number;
  confirm_retries: number;
  records: number;
  duplicates: number;
  lost_confirmed_writes: number;
  /** The writes drafted with their curated tools. */
  curated: WriteClass;
  /** The writes drafted with draft_api_write, on operations without a curated tool. */
  long_tail: WriteClass & {
    /** Requests that reached their routes, faults and drops included. */
    requests_sent: number;
    /** Intents delivered under more than one Idempotency-Key (must be 0). */
    sent_under_several_idempotency_keys: number;
    /** Manual events delivered under more than one client_request_id (must be 0). */
    sent_under_several_client_request_ids: number;
  };
  token_exchanges: number;
  client_retries: number;
  upstream_requests: number;
  injected: {
    failed_500_503: number;
    dropped_after_apply: number;
    rate_limited_429: number;
    refused_401: number;
  };
  seconds: number;
}

export function runChaos(options?: {
  writes?: number;
  workers?: number;
  burstEveryMs?: number;
  expireEveryMs?: number;
  maxConfirms?: number;
}): Promise<ChaosReport>;
