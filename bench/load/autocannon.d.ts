// autocannon ships no types; this is the part of its API the bench uses.
declare module "autocannon" {
  interface Histogram {
    average: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
  }
  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    latency: Histogram;
    requests: Histogram & { total: number };
    statusCodeStats: Record<string, { count: number }>;
  }
  interface RawRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Options {
    url: string;
    connections: number;
    duration: number;
    timeout?: number;
    requests?: Array<{ setupRequest?: (request: RawRequest) => RawRequest }>;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
