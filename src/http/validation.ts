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
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,7})?)?(Z|[+-]\d{2}:?\d{2})?$/i;
export const isIsoDateTime = (text: string) => ISO_DATE_TIME.test(text) && !Number.isNaN(Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text}Z`));

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
