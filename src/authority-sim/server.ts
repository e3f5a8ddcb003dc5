/**
 * The authority simulator: a small HTTP server that plays the Authority for development and
 * tests (SPEC §5). It speaks the registration protocol of src/authority/protocol.ts,
 * deduplicates on the Idempotency-Key (the same key gets the same answer and is counted once),
 * and has switches for latency, error rate and outage:
 *
 * - `POST /v1/registrations`   register one item (Idempotency-Key required)
 * - `GET  /_sim/stats`         requests and registrations, per key: tests prove exactly-once with it
 * - `POST /_sim/config`        change `{latencyMs, errorRate, outage}` while running
 */
import { setTimeout as sleep } from "node:timers/promises";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import {
  IDEMPOTENCY_KEY_HEADER,
  REGISTRATIONS_PATH,
  type RegistrationAccepted,
  type RegistrationRejected,
  type RegistrationRequest,
} from "../authority/protocol.ts";
import type { AuthoritySimSettings } from "../config.ts";
import { rejectionReasons } from "./rules.ts";

export type SimBehaviour = Pick<AuthoritySimSettings, "latencyMs" | "errorRate" | "outage">;

export interface SimStats {
  /** Registration calls received, replays and refusals included. */
  requests: number;
  /** Distinct items registered (each idempotency key at most once). */
  registrations: number;
  rejections: number;
  /** Most registration calls in flight at once: shows a client's concurrency bound. */
  maxConcurrent: number;
  keys: Record<string, { requests: number; registrations: number; registrationNumber: string | null }>;
}

export interface AuthoritySim {
  /** Base URL to give the http adapter (AUTHORITY_URL). */
  url: string;
  behaviour: SimBehaviour;
  stats(): SimStats;
  close(): Promise<void>;
}

interface StoredAnswer {
  status: number;
  body: RegistrationAccepted | RegistrationRejected;
}

export interface SimOptions {
  now?: () => Date;
  random?: () => number;
}

export async function startAuthoritySim(settings: AuthoritySimSettings, options: SimOptions = {}): Promise<AuthoritySim> {
  const now = options.now ?? (() => new Date());
  const random = options.random ?? Math.random;
  const behaviour: SimBehaviour = { latencyMs: settings.latencyMs, errorRate: settings.errorRate, outage: settings.outage };
  const answers = new Map<string, StoredAnswer>();
  const stats: SimStats = { requests: 0, registrations: 0, rejections: 0, maxConcurrent: 0, keys: {} };
  let sequence = 0;
  let concurrent = 0;

  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 1_048_576 });

  app.post(REGISTRATIONS_PATH, async (request, reply) => {
    concurrent += 1;
    stats.maxConcurrent = Math.max(stats.maxConcurrent, concurrent);
    try {
      return await register(request, reply);
    } finally {
      concurrent -= 1;
    }
  });

  async function register(request: FastifyRequest, reply: FastifyReply) {
    stats.requests += 1;
    const key = request.headers[IDEMPOTENCY_KEY_HEADER];
    if (typeof key !== "string" || key.length === 0 || key.length > 255) {
      return reply.code(400).send({ code: "IDEMPOTENCY_KEY_REQUIRED", message: "Send an Idempotency-Key header (1–255 characters)." });
    }
    const perKey = (stats.keys[key] ??= { requests: 0, registrations: 0, registrationNumber: null });
    perKey.requests += 1;
    if (behaviour.latencyMs > 0) await sleep(behaviour.latencyMs);
    if (behaviour.outage) return reply.code(503).send({ code: "UNAVAILABLE", message: "The Authority is down for maintenance." });
    if (behaviour.errorRate > 0 && random() < behaviour.errorRate) {
      return reply.code(500).send({ code: "INTERNAL", message: "Simulated failure." });
    }
    const previous = answers.get(key);
    if (previous) return reply.code(previous.status === 201 ? 200 : previous.status).header("idempotency-replayed", "true").send(previous.body);

    const body = request.body as Partial<Record<keyof RegistrationRequest, unknown>> | undefined;
    const item = body?.request !== null && typeof body?.request === "object" ? (body.request as Record<string, unknown>) : {};
    const reasons = rejectionReasons(item, now());
    let answer: StoredAnswer;
    if (reasons.length > 0) {
      stats.rejections += 1;
      answer = { status: 422, body: { code: "REJECTED", message: "The Authority rejected the item.", reasons } };
    } else {
      sequence += 1;
      stats.registrations += 1;
      perKey.registrations += 1;
      const registeredAt = now();
      const registrationNumber = `RVDM-${registeredAt.getUTCFullYear()}-${String(sequence).padStart(6, "0")}`;
      perKey.registrationNumber = registrationNumber;
      answer = { status: 201, body: { registrationNumber, registeredAt: registeredAt.toISOString() } };
    }
    answers.set(key, answer);
    return reply.code(answer.status).send(answer.body);
  }

  app.get("/_sim/stats", async () => stats);

  app.post("/_sim/config", async (request, reply) => {
    const patch = (request.body ?? {}) as Partial<Record<keyof SimBehaviour, unknown>>;
    const problems: string[] = [];
    if (patch.latencyMs !== undefined) {
      if (Number.isInteger(patch.latencyMs) && (patch.latencyMs as number) >= 0) behaviour.latencyMs = patch.latencyMs as number;
      else problems.push("latencyMs must be an integer ≥ 0");
    }
    if (patch.errorRate !== undefined) {
      if (typeof patch.errorRate === "number" && patch.errorRate >= 0 && patch.errorRate <= 1) behaviour.errorRate = patch.errorRate;
      else problems.push("errorRate must be a number from 0 to 1");
    }
    if (patch.outage !== undefined) {
      if (typeof patch.outage === "boolean") behaviour.outage = patch.outage;
      else problems.push("outage must be true or false");
    }
    if (problems.length > 0) return reply.code(400).send({ code: "BAD_CONFIG", message: problems.join("; ") });
    return behaviour;
  });

  const address = await app.listen({ host: settings.host, port: settings.port });
  return {
    url: address,
    behaviour,
    stats: () => structuredClone(stats),
    close: () => app.close(),
  };
}
