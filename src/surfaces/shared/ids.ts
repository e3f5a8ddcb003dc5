/** Path id parameters: positive integers that fit every store. */
import { Type } from "@sinclair/typebox";

export const PositiveId = (description: string) =>
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description, examples: [4711] });
