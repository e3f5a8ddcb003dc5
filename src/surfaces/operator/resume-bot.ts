/** POST /api/Operator/Bot/Resume {workType, reason}: see bot-switch.ts. */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { registerBotSwitch } from "./bot-switch.ts";

export const register = (app: FastifyInstance, ctx: AppContext): void => registerBotSwitch(app, ctx, false);
