/**
 * Shapes and answers every route of the operator API (SPEC §12.2) shares: the item as operators
 * see it, the required `reason`, the security requirement and the problem answers.
 */
import { Type, type Static } from "@sinclair/typebox";
import { DEADLINE_MARKS, type DeadlineMark } from "../../domain/due.ts";
import { Nullable, WorkItemView } from "../../domain/views.ts";
import { problemExample, problemResponses } from "../../http/problem-schema.ts";
import { REASON_MAX_LENGTH } from "../../operators/roles.ts";
import { PositiveId } from "../shared/ids.ts";

/** The OpenAPI security scheme of operator tokens; integrator routes use `bearer`. */
export const OPERATOR_SECURITY_SCHEME = "operatorToken";
export const operatorSecurity = [{ [OPERATOR_SECURITY_SCHEME]: [] }];
export const OPERATOR_TAG = "Operator";

const exampleItem = (WorkItemView.examples as Array<Static<typeof WorkItemView>>)[0]!;

/** For the examples of the schemas built on the item. */
export const EXAMPLE_OPERATOR_ITEM = { ...exampleItem, companyId: 42 };

export const OperatorWorkItemView = Type.Composite([WorkItemView, Type.Object({ companyId: PositiveId("the company the item belongs to") })], {
  title: "OperatorWorkItemView",
  description: "a work item as operators see it: the integrator's view plus its company",
  examples: [EXAMPLE_OPERATOR_ITEM],
});
export type OperatorWorkItemView = Static<typeof OperatorWorkItemView>;

/** The mark of how near an item's deadline is (domain/due.ts), as the console shows it. */
const DeadlineMarkSchema = Type.Unsafe<DeadlineMark | null>({
  type: ["string", "null"],
  enum: [...DEADLINE_MARKS, null],
  description:
    "how near the deadline is at the time of the answer, as the console marks it (New items only): overdue (passed), atRisk (within 2 hours), dueToday (before the end of the due day in CONSOLE_TZ: today, or on a weekend or public holiday the next working day); null otherwise",
  examples: ["dueToday"],
});

/** For the examples of the list's page. */
export const EXAMPLE_LISTED_ITEM = { ...EXAMPLE_OPERATOR_ITEM, companyName: "Acme Transport", overdue: false, deadline: null };

export const OperatorListedWorkItem = Type.Composite(
  [
    OperatorWorkItemView,
    Type.Object({
      companyName: Nullable(Type.String({ description: "the company's name (null only for a company the store does not know)" })),
      overdue: Type.Boolean({ description: "a New item whose deadline has passed, at the time of the answer (the console's Overdue)" }),
      deadline: DeadlineMarkSchema,
    }),
  ],
  { title: "OperatorListedWorkItem", description: "a work item in the operators' list: its view, its company and how near its deadline is", examples: [EXAMPLE_LISTED_ITEM] },
);

export const OperatorWorkItemParams = Type.Object({ workItemId: PositiveId("the work item id (of any company)") });

export const Reason = Type.String({ minLength: 1, maxLength: REASON_MAX_LENGTH, description: "why: lands in the audit log and the item's timeline", examples: ["authority outage on 23 Nov, resubmitting"] });

/** The body of the state-changing calls that need nothing but a reason. */
export const ReasonBody = Type.Object(
  { reason: Reason },
  { title: "OperatorReason", additionalProperties: false, examples: [{ reason: "authority outage on 23 Nov, resubmitting" }] },
);
export type ReasonBody = Static<typeof ReasonBody>;

/** One of a few strings, as an `enum`, so a wrong value's 400 lists the ones allowed. */
export const OneOf = <const T extends readonly string[]>(values: T, options: { description: string; examples?: string[] }) =>
  Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });

export const pageLimit = (defaultLimit: number, maximum: number) =>
  Type.Integer({ minimum: 1, maximum, default: defaultLimit, description: `page size, 1–${maximum} (default ${defaultLimit})` });
export const PageCursor = Type.String({ minLength: 1, maxLength: 128, description: "nextCursor of the previous page" });

/** What the operator guard, the query check, the router and the store can answer besides a route's own statuses. */
const OPERATOR_GUARD_STATUSES = [400, 401, 403, 405, 503];
const BAD_REQUEST_DESCRIPTION = "schema violation, or a query parameter the route does not declare or given more than once (SPEC §24)";
const FORBIDDEN_DETAIL = "An integrator's token is not accepted on the operator API; use an operator token.";

/** A route's problem answers; the 400 and 403 are the operator API's own (unknown query parameters; an integrator token, or a read-only role). */
export function operatorResponses(...statuses: number[]) {
  const responses = problemResponses(...[...new Set([...statuses, ...OPERATOR_GUARD_STATUSES])].sort());
  responses[400] = { ...responses[400]!, description: BAD_REQUEST_DESCRIPTION };
  const forbidden = responses[403]!;
  const media = forbidden.content["application/problem+json"];
  responses[403] = {
    ...forbidden,
    description: "an integrator's token, or (on a state-changing route) the role viewer",
    content: { "application/problem+json": { ...media, example: { ...problemExample(403, "/api/Operator/Overview"), detail: FORBIDDEN_DETAIL } } },
  };
  return responses;
}
