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
