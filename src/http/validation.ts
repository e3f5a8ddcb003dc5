/**
 * Two Ajv instances: bodies are validated strictly (no type coercion; the compatibility layer
 * does the few conversions the SPEC allows), while path, query and headers, which arrive as
 * text, are coerced. Both report every problem at once.
 */
import { Ajv, type Options } from "ajv";
import addFormats from "ajv-formats";
import type { TSchema } from "@sinclair/typebox";
import type { FastifyError, FastifySchemaCompiler, FastifySchemaValidationError } from "fastify";
import { fieldErrorsFromValidation, type FieldErrors } from "../errors.ts";

/** ISO 8601 date-time; the offset may be left out (then it means UTC), as .NET clients do. */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,7})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
const daysInMonth = (year: number, month: number) => (month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);

/** PostgreSQL has no year 0 (it counts 1 BC, 1 AD), so neither store can hold an instant before this year. */
export const FIRST_YEAR = 1;

/**
 * Date.parse takes any day up to 31 in any month and rolls it over (2027-02-30 becomes 2 March),
 * so the day is checked against its month first; Date.parse then refuses out-of-range times.
 */
export function isIsoDateTime(text: string): boolean {
  const parts = ISO_DATE_TIME.exec(text);
  if (!parts) return false;
  const [year, month, day] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (year < FIRST_YEAR || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  return !Number.isNaN(Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text}Z`));
}

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    strictNumbers: true,
    useDefaults: true,
    removeAdditional: false,
    verbose: true,
    ...options,
  });
  // ajv-formats is CommonJS: under NodeNext its default import is the module object.
  (addFormats as unknown as { default: (ajv: Ajv) => void }).default(ajv);
  ajv.addFormat("date-time", { type: "string", validate: isIsoDateTime });
  return ajv;
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodyAjv = createAjv({ coerceTypes: false });
  const textAjv = createAjv({ coerceTypes: "array" });
  return ({ schema, httpPart }) => (httpPart === "body" ? bodyAjv.compile(schema as object) : refuseNonFinite(textAjv.compile(schema as object)));
}

/**
 * A validator for a body that is not a whole request body (each item of a bulk add): the same
 * Ajv rules as a route's body, and the field errors its 400 would list (`$` for the value itself).
 */
export function compileBodyValidator(schema: TSchema): (value: unknown) => FieldErrors | undefined {
  const validate = createAjv({ coerceTypes: false }).compile(schema);
  return (value) => {
    if (validate(value)) return undefined;
    return fieldErrorsFromValidation({ validation: validate.errors ?? [], validationContext: "body" } as unknown as FastifyError);
  };
}

type AjvValidate = ((data: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null };

/**
 * Ajv's coercion turns the text "Infinity" or "1e400" into Infinity, which then passes both
 * `integer` and `maximum`; a path id like that must be a 400, not reach the database.
 */
function refuseNonFinite(validate: AjvValidate): AjvValidate {
  const checked: AjvValidate = (data) => {
    const valid = validate(data);
    checked.errors = (validate.errors ?? null) as FastifySchemaValidationError[] | null;
    if (!valid || data === null || typeof data !== "object") return valid;
    for (const [name, value] of Object.entries(data as Record<string, unknown>)) {
      if (typeof value === "number" && !Number.isFinite(value)) {
        checked.errors = [{ instancePath: `/${name}`, schemaPath: "#/type", keyword: "type", params: { type: "finite number" }, message: "must be a finite number" }];
        return false;
      }
    }
    return true;
  };
  return checked;
}
