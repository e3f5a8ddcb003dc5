/**
 * A company's erase as the operator API shows it (SPEC §22): `POST …/Companies/{id}/Erase`
 * answers it, `GET /api/Operator/Erasures` lists the ones under way.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { CompanyErasure } from "../../store/store.ts";
import { PositiveId } from "../shared/ids.ts";
import { OperatorRef } from "./get-work-item.ts";
import { OneOf } from "./schemas.ts";

const PHASES = ["revoking", "draining", "deleting"] as const;

const example = {
  companyId: 42,
  phase: "deleting",
  startedAt: "2026-11-28T09:00:00.000Z",
  keysRevokedAt: "2026-11-28T09:00:00.120Z",
  items: 1250000,
  operator: { operatorId: "op_5b0f0e4c6a7d4e2f9c1b3a5d7e9f1a2b", email: "ops@example.com" },
  reason: "contract ended on 30 Nov; the company asked for its data to be erased",
};

export const OperatorCompanyErasure = Type.Object(
  {
    companyId: PositiveId("the company being erased"),
    phase: OneOf(PHASES, {
      description: "revoking: its keys are being revoked; draining: its New items cancelled, waiting for its calls to the authority to end; deleting: its rows going, in short steps",
      examples: ["deleting"],
    }),
    startedAt: Type.String({ format: "date-time" }),
    keysRevokedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "when its keys were revoked: every process refuses them 5 s later at the latest" }),
    items: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: "its items when deleting began; null before" }),
    operator: OperatorRef,
    reason: Type.String({ description: "why, as the operator who asked for it gave it" }),
  },
  { title: "OperatorCompanyErasure", description: "an erase under way; when it ends its record goes, and the audit log has an entry company.erased", examples: [example] },
);
export type OperatorCompanyErasure = Static<typeof OperatorCompanyErasure>;

export const toErasureView = (erasure: CompanyErasure): OperatorCompanyErasure => ({ ...erasure });
