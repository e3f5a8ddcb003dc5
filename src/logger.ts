/** The pino logger. Credentials never reach a log line, even by accident in a logged object. */
import pino from "pino";
import type { Config } from "./config.ts";

export const REDACTED_PATHS = [
  "req.headers.authorization",
  "headers.authorization",
  "authorization",
  "secret",
  "*.secret",
  "apiKeySecret",
  "bearerToken",
  "*.bearerToken",
  "webhookSecret",
  "*.webhookSecret",
  // The console's session and CSRF cookies, and an operator's password.
  "req.headers.cookie",
  "headers.cookie",
  "password",
  "*.password",
  // The identity provider's: the console's client secret, and what a sign-in carries.
  "clientSecret",
  "*.clientSecret",
  "idToken",
  "*.idToken",
  "codeVerifier",
  "*.codeVerifier",
];

export function createLogger(config: Pick<Config, "logLevel">, destination?: pino.DestinationStream) {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    },
    destination,
  );
}
