/** The translation object of the seed: the value sent to the Authority and the printed text. */
import { Type } from "@sinclair/typebox";

const documentValue = Type.Optional(Type.String({ maxLength: 500, description: "the text printed on the document", examples: ["Rundveemest"] }));

export const TranslationObject = Type.Object(
  {
    sendValue: Type.String({ minLength: 1, maxLength: 500, description: "the value sent to the Authority", examples: ["RUNDVEEMEST"] }),
    documentValue,
  },
  { additionalProperties: false, title: "TranslationObject" },
);

/** A translation object whose sendValue is the text `true` or `false`. */
export const BooleanTranslationObject = Type.Object(
  {
    sendValue: Type.Unsafe<"true" | "false">({ type: "string", enum: ["true", "false"], description: "the text true or false", examples: ["true"] }),
    documentValue,
  },
  { additionalProperties: false, title: "BooleanTranslationObject" },
);

/**
 * Unknown body properties are kept when they are translation objects (the seed's "etc."): the
 * same schema, with the message a client sees for anything else. It keeps the title, so the
 * OpenAPI document refers to TranslationObject for both.
 */
export const ExtraTranslationObject = Type.Object(TranslationObject.properties, {
  additionalProperties: false,
  title: "TranslationObject",
  errorMessage: "is not a known property; extra properties must be translation objects { sendValue, documentValue? }",
});
