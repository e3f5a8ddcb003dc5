/**
 * The content type of an answer whose JSON is already text (a page the database or the event
 * log wrote): Fastify sends a string of this type as it is, without its serializer. The route's
 * response schema still documents the answer.
 */
export const JSON_TEXT_TYPE = "application/json; charset=utf-8";
