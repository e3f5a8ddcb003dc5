/** `Pong --> Saturday, 21 November 2026 14:03:12`: the liveness text of every surface. */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { guardedResponses } from "../../http/problem-schema.ts";

const formatters = new Map<string, Intl.DateTimeFormat>();

/** `dddd, d MMMM yyyy HH:mm:ss` in English, in the given IANA time zone. */
export function formatPongTime(date: Date, timeZone: string): string {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      weekday: "long",
      day: "numeric",
      month: "long",
      year: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(timeZone, formatter);
  }
  const part: Record<string, string> = {};
  for (const { type, value } of formatter.formatToParts(date)) part[type] = value;
  return `${part.weekday}, ${part.day} ${part.month} ${part.year} ${part.hour}:${part.minute}:${part.second}`;
}

/**
 * The whole Pong text for `nowMs`. It changes once a second, so it is formatted once a second
 * (Intl's formatToParts costs more than the rest of an authenticated ping).
 */
export function createPongText(timeZone: string): (nowMs?: number) => string {
  let second = Number.NaN;
  let text = "";
  return (nowMs = Date.now()) => {
    const current = Math.floor(nowMs / 1000);
    if (current !== second) {
      text = `Pong --> ${formatPongTime(new Date(current * 1000), timeZone)}`;
      second = current;
    }
    return text;
  };
}

/** `operationId` names the .NET action: AuthorityRvdmPing, VlmMadPing. */
export function registerPing(app: FastifyInstance, ctx: AppContext, url: string, surface: string, operationId: string): void {
  const pongText = createPongText(ctx.config.timeZone);
  app.get(url, {
    schema: {
      summary: `Liveness of the ${surface} surface with the caller's credentials`,
      operationId,
      tags: [surface],
      security: [{ bearer: [] }],
      response: {
        200: {
          description: "`Pong --> ` and the server time, `dddd, d MMMM yyyy HH:mm:ss` in the server's TZ",
          content: { "text/plain": { schema: Type.String(), example: "Pong --> Saturday, 21 November 2026 14:03:12" } },
        },
        ...guardedResponses(),
      },
    },
    handler: async (_request, reply) => reply.type("text/plain; charset=utf-8").send(pongText()),
  });
}
