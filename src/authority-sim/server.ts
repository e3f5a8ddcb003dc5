/**
 * The authority simulator: a small HTTP server that plays the Authority for development and
 * tests (SPEC §5, §10). It speaks the protocol of src/authority/protocol.ts in two stages:
 * `submit` answers at once with an application number (the same one again for the same
 * Idempotency-Key), and the decision, by the rules of rules.ts, is given by `status` once
 * `decisionDelayMs` has passed since the submit. Switches for latency, error rate and outage:
 *
 * - `POST /v1/registrations`                      submit one item (Idempotency-Key required)
 * - `GET  /v1/registrations/{applicationNumber}`  its status: pending, registered or rejected; 404 unknown
 * - `GET  /_sim/stats`                            calls per key: tests prove exactly-once with it; calls
 *                                                 in flight (now, the most at once, over time);
 *                                                 `?keys=false` leaves the per-key counts out
 * - `POST /_sim/config`                           change `{latencyMs, errorRate, outage, decisionDelayMs}`
 *
 * Application and registration numbers carry random parts, so they are unique across restarts
 * and across simulator processes. What was submitted lives in memory: after a restart the
 * simulator no longer knows earlier application numbers (404), as a real Authority that lost
 * them would answer.
 */
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import {
  IDEMPOTENCY_KEY_HEADER,
  REGISTRATIONS_PATH,
  type ApplicationAccepted,
  type ApplicationStatus,
  type RegistrationRejected,
  type RegistrationRequest,
} from "../authority/protocol.ts";
import type { AuthoritySimSettings } from "../config.ts";
import { rejectionReasons } from "./rules.ts";

export type SimBehaviour = Pick<AuthoritySimSettings, "latencyMs" | "errorRate" | "outage" | "decisionDelayMs">;

export interface SimKeyStats {
  /** Calls of submit with this key, replays included. */
  submits: number;
  /** Status requests about this key's application. */
  statusRequests: number;
  applicationNumber: string | null;
  registrationNumber: string | null;
}

export interface SimStats {
  /** Submit calls received, replays and refusals included. */
  requests: number;
  statusRequests: number;
  /** Distinct items registered (each idempotency key at most once). */
  registrations: number;
  rejections: number;
  /** The same figure as `maxInFlight`, under its first name; kept so the stats keep their shape. */
  maxConcurrent: number;
  /** Calls (submit and status together) in flight now. */
  inFlight: number;
  /** The most calls in flight at once since the simulator started (SPEC §14): shows a client's concurrency bound. */
  maxInFlight: number;
  /**
   * Calls in flight integrated over time since the start, in call-milliseconds. Between two reads,
   * its growth ÷ (capacity × the time between their `readAt`) is the share of the capacity used.
   */
  inFlightMs: number;
  /** When these figures were read: milliseconds since the epoch, with fractions, so that two reads give the time between them. */
  readAt: number;
  /** Per idempotency key; `GET /_sim/stats?keys=false` leaves it out (a cheap read of the totals while many keys are known). */
  keys: Record<string, SimKeyStats>;
}

export interface AuthoritySim {
  /** Base URL to give the http adapter (AUTHORITY_URL). */
  url: string;
  behaviour: SimBehaviour;
  stats(): SimStats;
  close(): Promise<void>;
}

export interface SimOptions {
  now?: () => Date;
  random?: () => number;
}

interface Application {
  key: string;
  applicationNumber: string;
  submittedAt: number;
  request: Record<string, unknown>;
  decision?: ApplicationStatus;
}

/** Ten characters of Crockford base32 from random bytes: 50 bits, unique across processes and restarts. */
function randomCode(): string {
  const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  return [...randomBytes(10)].map((byte) => alphabet[byte % 32]).join("");
}

export async function startAuthoritySim(settings: AuthoritySimSettings, options: SimOptions = {}): Promise<AuthoritySim> {
  const now = options.now ?? (() => new Date());
  const random = options.random ?? Math.random;
  const behaviour: SimBehaviour = {
    latencyMs: settings.latencyMs,
    errorRate: settings.errorRate,
    outage: settings.outage,
    decisionDelayMs: settings.decisionDelayMs,
  };
  const byKey = new Map<string, Application>();
  const byNumber = new Map<string, Application>();
  const stats: SimStats = { requests: 0, statusRequests: 0, registrations: 0, rejections: 0, maxConcurrent: 0, inFlight: 0, maxInFlight: 0, inFlightMs: 0, readAt: 0, keys: {} };
  /** Monotonic time of the last change of `stats.inFlight`, up to which `stats.inFlightMs` is summed. */
  let summedTo = performance.now();
  /** Brings the in-flight integral up to now, before the count changes or is read. */
  const sumInFlight = () => {
    const at = performance.now();
    stats.inFlightMs += stats.inFlight * (at - summedTo);
    summedTo = at;
    stats.readAt = performance.timeOrigin + at;
  };

  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 1_048_576 });

  /** Latency, outage and injected errors, as every call of the Authority sees them; true when answered. */
  async function disturbed(reply: FastifyReply): Promise<boolean> {
    if (behaviour.latencyMs > 0) await sleep(behaviour.latencyMs);
    if (behaviour.outage) {
      void reply.code(503).send({ code: "UNAVAILABLE", message: "The Authority is down for maintenance." });
      return true;
    }
    if (behaviour.errorRate > 0 && random() < behaviour.errorRate) {
      void reply.code(500).send({ code: "INTERNAL", message: "Simulated failure." });
      return true;
    }
    return false;
  }

  const counted = <T>(work: () => Promise<T>) => async () => {
    sumInFlight();
    stats.inFlight += 1;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    stats.maxConcurrent = stats.maxInFlight;
    try {
      return await work();
    } finally {
      sumInFlight();
      stats.inFlight -= 1;
    }
  };

  /** The totals as of now, without the per-key counts. */
  function totals(): Omit<SimStats, "keys"> {
    sumInFlight();
    const { keys, ...rest } = stats;
    void keys;
    return rest;
  }

  app.post(REGISTRATIONS_PATH, (request, reply) => counted(() => submit(request, reply))());
  app.get(`${REGISTRATIONS_PATH}/:applicationNumber`, (request, reply) => counted(() => status(request, reply))());

  async function submit(request: FastifyRequest, reply: FastifyReply) {
    stats.requests += 1;
    const key = request.headers[IDEMPOTENCY_KEY_HEADER];
    if (typeof key !== "string" || key.length === 0 || key.length > 255) {
      return reply.code(400).send({ code: "IDEMPOTENCY_KEY_REQUIRED", message: "Send an Idempotency-Key header (1–255 characters)." });
    }
    const perKey = (stats.keys[key] ??= { submits: 0, statusRequests: 0, applicationNumber: null, registrationNumber: null });
    perKey.submits += 1;
    if (await disturbed(reply)) return reply;
    const previous = byKey.get(key);
    if (previous) return reply.code(200).header("idempotency-replayed", "true").send({ applicationNumber: previous.applicationNumber } satisfies ApplicationAccepted);

    // The syntax check of the first stage: a registration request must carry the item.
    const body = request.body as Partial<RegistrationRequest> | undefined;
    if (typeof body?.workType !== "string" || body.request === null || typeof body.request !== "object" || Array.isArray(body.request)) {
      const rejected: RegistrationRejected = { code: "MALFORMED", message: "A registration request is {workType, request}.", reasons: [] };
      return reply.code(422).send(rejected);
    }
    const application: Application = { key, applicationNumber: `RVDM-A-${randomCode()}`, submittedAt: now().getTime(), request: body.request };
    byKey.set(key, application);
    byNumber.set(application.applicationNumber, application);
    perKey.applicationNumber = application.applicationNumber;
    return reply.code(202).send({ applicationNumber: application.applicationNumber } satisfies ApplicationAccepted);
  }

  async function status(request: FastifyRequest, reply: FastifyReply) {
    stats.statusRequests += 1;
    const { applicationNumber } = request.params as { applicationNumber: string };
    const application = byNumber.get(applicationNumber);
    if (application) stats.keys[application.key]!.statusRequests += 1;
    if (await disturbed(reply)) return reply;
    if (!application) return reply.code(404).send({ code: "UNKNOWN_APPLICATION", message: `No application ${applicationNumber}.` });
    return reply.code(200).send(decide(application));
  }

  /** Pending until the decision delay has passed; then decided once, by the rules, for good. */
  function decide(application: Application): ApplicationStatus {
    if (application.decision) return application.decision;
    const at = now();
    if (at.getTime() - application.submittedAt < behaviour.decisionDelayMs) return { status: "pending", applicationNumber: application.applicationNumber };
    const reasons = rejectionReasons(application.request, new Date(application.submittedAt));
    if (reasons.length > 0) {
      stats.rejections += 1;
      application.decision = { status: "rejected", applicationNumber: application.applicationNumber, code: "REJECTED", message: "The Authority rejected the item.", reasons };
    } else {
      stats.registrations += 1;
      const registrationNumber = `RVDM-${at.getUTCFullYear()}-${randomCode()}`;
      stats.keys[application.key]!.registrationNumber = registrationNumber;
      application.decision = {
        status: "registered",
        applicationNumber: application.applicationNumber,
        registrationNumber,
        registeredAt: at.toISOString(),
      };
    }
    return application.decision;
  }

  app.get("/_sim/stats", async (request) => ((request.query as { keys?: string }).keys === "false" ? totals() : { ...totals(), keys: stats.keys }));

  app.post("/_sim/config", async (request, reply) => {
    const patch = (request.body ?? {}) as Partial<Record<keyof SimBehaviour, unknown>>;
    const problems: string[] = [];
    for (const field of ["latencyMs", "decisionDelayMs"] as const) {
      if (patch[field] === undefined) continue;
      if (Number.isInteger(patch[field]) && (patch[field] as number) >= 0) behaviour[field] = patch[field] as number;
      else problems.push(`${field} must be an integer ≥ 0`);
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
    stats: () => structuredClone({ ...totals(), keys: stats.keys }),
    close: () => app.close(),
  };
}
