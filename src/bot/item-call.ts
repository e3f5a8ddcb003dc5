/**
 * One authority call about one item, through the gate (capacity, breaker), as a client span of
 * the item's trace (SPEC §17): the span's parent is the item's intake, it links to the pass that
 * made the call, and `work` hands it to the adapter, which sends it on as `traceparent`.
 */
import type { AuthorityAdapter } from "../authority/protocol.ts";
import type { FollowUpKind } from "../domain/work-item-kinds.ts";
import { inSpan, SpanKind, type Span } from "../telemetry/spans.ts";
import { BREAKER_OPEN } from "./authority-gate.ts";
import type { Pass } from "./pass-state.ts";

/** The call's name on its span: a create's submit and status, or a follow-up's own kind. */
export type ItemCall = "submit" | "status" | FollowUpKind;

export function callAboutItem<T>(
  pass: Pass,
  call: ItemCall,
  item: { companyId: number; workItemId: number; traceParent: string | null },
  work: (adapter: AuthorityAdapter, span: Span) => Promise<T>,
): Promise<T | typeof BREAKER_OPEN> {
  const attributes = { "work_item_api.company_id": item.companyId, "work_item_api.work_item_id": item.workItemId, "work_item_api.authority_call": call };
  return inSpan(`authority ${call}`, { kind: SpanKind.CLIENT, traceParent: item.traceParent, madeBy: pass.span, attributes }, async (span) => {
    // A status request and a filing take capacity alike; only status requests are counted apart.
    const answer = await pass.deps.gate.call(call === "status" ? "status" : "submit", (adapter) => work(adapter, span), pass.deps.signal);
    if (answer === BREAKER_OPEN) span.setAttribute("work_item_api.breaker_open", true);
    return answer;
  });
}
