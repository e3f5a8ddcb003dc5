/**
 * The authority simulator: a small HTTP server that plays the Authority for development and
 * tests (SPEC §5, §10). It speaks the protocol of src/authority/protocol.ts in two stages:
 * `submit` answers at once with an application number (the same one again for the same
 * Idempotency-Key), and the decision, by the rules of rules.ts, is given by `status` once
 * `decisionDelayMs` has passed since the submit. Switches for latency, error rate and outage:
 *
 * - `POST /v1/registrations`                      submit one item (Idempotency-Key required)
 * - `GET  /v1/registrations/{applicationNumber}`  its status: pending, registered or rejected; 404 unknown
 * - `POST /v1/registrations/{n}/changes`           change a filed document (SPEC §15): the §5 rules apply to the
 *                                                 merged document; refused for a rejected or withdrawn application
 * - `POST /v1/registrations/{n}/withdrawal`        withdraw it; refused for a rejected or withdrawn application
 * - `GET  /_sim/applications/{applicationNumber}` the document as the simulated Authority holds it
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
  FOLLOW_UP_WIRE,
  IDEMPOTENCY_KEY_HEADER,
  REGISTRATIONS_PATH,
  type FieldReason,
  type FollowUpAccepted,
  type ApplicationAccepted,
  type ApplicationStatus,
  type RegistrationRejected,
  type RegistrationRequest,
} from "../authority/protocol.ts";
import type { AuthoritySimSettings } from "../config.ts";
import { FOLLOW_UP_KINDS, type FollowUpKind } from "../domain/work-item-kinds.ts";
import { rejectionReasons } from "./rules.ts";

export type SimBehaviour = Pick<AuthoritySimSettings, "latencyMs" | "errorRate" | "outage" | "decisionDelayMs">;

export interface SimKeyStats {
  /** Calls of submit with this key, replays included. */
  submits: number;
  /** Status requests about this key's application. */
  statusRequests: number;
  applicationNumber: string | null;
  registrationNumber: string | null;
  /** Change calls with this key (SPEC §15), replays and refusals included. */
  changes: number;
  /** Withdrawal calls with this key, replays and refusals included. */
  withdrawals: number;
  /** The W3C `traceparent` of each call about this key, in order (SPEC §17), where the caller sent one. */
  traceparents: string[];
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
  /** The document as it stands, changes applied. */
  request: Record<string, unknown>;
  /** Changes accepted so far. */
  revision: number;
  withdrawn: boolean;
  decision?: ApplicationStatus;
}

/** What the simulator holds of one application: `GET /_sim/applications/{applicationNumber}`. */
export interface SimApplication {
  applicationNumber: string;
  status: "pending" | "registered" | "rejected" | "withdrawn";
  revision: number;
  document: Record<string, unknown>;
}

/** Ten characters of Crockford base32 from random bytes: 50 bits, unique across processes and restarts. */
function randomCode(): string {
  const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  return [...randomBytes(10)].map((byte) => alphabet[byte % 32]).join("");
}

/**
 * What the simulated Authority does with each kind of follow-up of an application that can still
 * take one: applies it, or says why not. `counted`: the per-key count of its calls.
 */
const FOLLOW_UPS: Record<FollowUpKind, {
  counted: "changes" | "withdrawals";
  apply(application: Application, body: Record<string, unknown>, now: () => Date): { message: string; reasons?: FieldReason[] } | undefined;
}> = {
  change: {
    counted: "changes",
    apply(application, body, now) {
      if (body.changes === null || typeof body.changes !== "object" || Array.isArray(body.changes)) return { message: "A change is {changes}." };
      const merged = { ...application.request, ...(body.changes as Record<string, unknown>) };
      const reasons = rejectionReasons(merged, now());
      if (reasons.length > 0) return { message: "The changed document breaks the Authority's rules.", reasons };
      application.request = merged;
      application.revision += 1;
      return undefined;
    },
  },
  withdraw: {
    counted: "withdrawals",
    apply(application, body) {
      if (typeof body.reason !== "string" || body.reason.length === 0) return { message: "A withdrawal is {reason}." };
      application.withdrawn = true;
      return undefined;
    },
  },
};

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
  /** The first answer to each change or withdrawal key, given again to a replay. */
  const followUpAnswers = new Map<string, { code: number; body: FollowUpAccepted | RegistrationRejected }>();
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

  // Closing drops open connections, calls held by the latency included: a stopped simulator is an
  // authority that went away, and a close must not wait out a keep-alive.
  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 1_048_576, forceCloseConnections: true });

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
    const perKey = keyStats(key);
    perKey.submits += 1;
    noteTraceparent(perKey, request);
    if (await disturbed(reply)) return reply;
    const previous = byKey.get(key);
    if (previous) return reply.code(200).header("idempotency-replayed", "true").send({ applicationNumber: previous.applicationNumber } satisfies ApplicationAccepted);

    // The syntax check of the first stage: a registration request must carry the item.
    const body = request.body as Partial<RegistrationRequest> | undefined;
    if (typeof body?.workType !== "string" || body.request === null || typeof body.request !== "object" || Array.isArray(body.request)) {
      const rejected: RegistrationRejected = { code: "MALFORMED", message: "A registration request is {workType, request}.", reasons: [] };
      return reply.code(422).send(rejected);
    }
    const application: Application = { key, applicationNumber: `RVDM-A-${randomCode()}`, submittedAt: now().getTime(), request: body.request, revision: 0, withdrawn: false };
    byKey.set(key, application);
    byNumber.set(application.applicationNumber, application);
    perKey.applicationNumber = application.applicationNumber;
    return reply.code(202).send({ applicationNumber: application.applicationNumber } satisfies ApplicationAccepted);
  }

  async function status(request: FastifyRequest, reply: FastifyReply) {
    stats.statusRequests += 1;
    const { applicationNumber } = request.params as { applicationNumber: string };
    const application = byNumber.get(applicationNumber);
    if (application) {
      stats.keys[application.key]!.statusRequests += 1;
      noteTraceparent(stats.keys[application.key]!, request);
    }
    if (await disturbed(reply)) return reply;
    if (!application) return reply.code(404).send({ code: "UNKNOWN_APPLICATION", message: `No application ${applicationNumber}.` });
    return reply.code(200).send(decide(application));
  }

  const keyStats = (key: string) =>
    (stats.keys[key] ??= { submits: 0, statusRequests: 0, applicationNumber: null, registrationNumber: null, changes: 0, withdrawals: 0, traceparents: [] });
  const noteTraceparent = (perKey: SimKeyStats, request: FastifyRequest) => {
    const traceparent = request.headers.traceparent;
    if (typeof traceparent === "string") perKey.traceparents.push(traceparent);
  };

  for (const kind of FOLLOW_UP_KINDS) {
    app.post(`${REGISTRATIONS_PATH}/:applicationNumber${FOLLOW_UP_WIRE[kind].path}`, (request, reply) => counted(() => fileFollowUp(request, reply, kind))());
  }

  /** A change or a withdrawal of a filed application, once per key (SPEC §15). */
  async function fileFollowUp(request: FastifyRequest, reply: FastifyReply, kind: FollowUpKind) {
    const key = request.headers[IDEMPOTENCY_KEY_HEADER];
    if (typeof key !== "string" || key.length === 0 || key.length > 255) {
      return reply.code(400).send({ code: "IDEMPOTENCY_KEY_REQUIRED", message: "Send an Idempotency-Key header (1–255 characters)." });
    }
    keyStats(key)[FOLLOW_UPS[kind].counted] += 1;
    noteTraceparent(keyStats(key), request);
    if (await disturbed(reply)) return reply;
    const previous = followUpAnswers.get(key);
    if (previous) return reply.code(previous.code).header("idempotency-replayed", "true").send(previous.body);
    const { applicationNumber } = request.params as { applicationNumber: string };
    const application = byNumber.get(applicationNumber);
    if (!application) return reply.code(404).send({ code: "UNKNOWN_APPLICATION", message: `No application ${applicationNumber}.` });
    const body = (request.body ?? {}) as Record<string, unknown>;
    const refuse = (message: string, reasons: RegistrationRejected["reasons"] = []) => {
      const answer = { code: 422, body: { code: "REFUSED", message, reasons } satisfies RegistrationRejected };
      followUpAnswers.set(key, answer);
      return reply.code(answer.code).send(answer.body);
    };
    const decision = decide(application);
    if (application.withdrawn) return refuse(`Application ${applicationNumber} is withdrawn.`);
    if (decision.status === "rejected") return refuse(`Application ${applicationNumber} was rejected.`);
    const refusal = FOLLOW_UPS[kind].apply(application, body, now);
    if (refusal) return refuse(refusal.message, refusal.reasons);
    const answer = { code: 200, body: { applicationNumber, revision: application.revision } satisfies FollowUpAccepted };
    followUpAnswers.set(key, answer);
    return reply.code(answer.code).send(answer.body);
  }

  app.get("/_sim/applications/:applicationNumber", async (request, reply) => {
    const { applicationNumber } = request.params as { applicationNumber: string };
    const application = byNumber.get(applicationNumber);
    if (!application) return reply.code(404).send({ code: "UNKNOWN_APPLICATION", message: `No application ${applicationNumber}.` });
    const decision = decide(application);
    const held: SimApplication = {
      applicationNumber,
      status: application.withdrawn ? "withdrawn" : decision.status,
      revision: application.revision,
      document: application.request,
    };
    return held;
  });

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
