/**
 * The console's OpenID Connect settings (SPEC §19): their part of the environment schema, and the
 * checks that need more than one variable. config.ts reads the environment; this file only
 * judges what it read, so a half-configured provider stops the process with one line.
 */
import { Type, type Static, type TObject } from "@sinclair/typebox";

const Optional = (description: string, pattern?: string) => Type.Optional(Type.String({ minLength: 1, description, ...(pattern ? { pattern } : {}) }));

export const OIDC_ENV = {
  OIDC_ISSUER: Optional("issuer of the identity provider operators sign in to the console with (OpenID Connect, found by discovery); unset = passwords only", "^https?://"),
  OIDC_CLIENT_ID: Optional("the console's client id at the identity provider"),
  OIDC_CLIENT_SECRET: Optional("the console's client secret at the identity provider; unset = a public client (PKCE only)"),
  OIDC_REDIRECT_URL: Optional("where the provider sends operators back: <the console's public origin>/console/oidc/callback", "^https?://"),
  OIDC_SCOPES: Type.String({ minLength: 1, default: "openid email profile", description: "scopes asked of the provider (space-separated; must include openid)" }),
  OIDC_ROLE_CLAIM: Type.String({ minLength: 1, default: "roles", description: "ID token claim holding the operator's roles or groups (a dotted path reaches into an object: realm_access.roles)" }),
  OIDC_ADMIN_VALUES: Optional("role claim values (comma-separated) that make an operator an admin"),
  OIDC_OPERATOR_VALUES: Optional("role claim values (comma-separated) that give the operator role (retry, cancel, pause, redeliver)"),
  OIDC_VIEWER_VALUES: Optional("role claim values (comma-separated) that give the viewer role (read only)"),
  OIDC_DISPLAY_NAME: Type.String({ minLength: 1, maxLength: 60, default: "your company account", description: "the provider's name on the sign-in button: Sign in with <name>" }),
  CONSOLE_PASSWORD_SIGNIN: Type.Boolean({ default: true, description: "offer password sign-in on the console; false hides and refuses it (the operator API's tokens are not affected)" }),
};

type OidcEnv = Static<TObject<typeof OIDC_ENV>>;

export interface OidcSettings {
  issuer: string;
  clientId: string;
  /** Undefined: a public client, which proves itself with PKCE alone. */
  clientSecret: string | undefined;
  redirectUrl: string;
  scopes: string;
  roleClaim: string;
  /** Claim values per role; an operator gets the highest role any of its values gives. */
  roleValues: { admin: string[]; operator: string[]; viewer: string[] };
  displayName: string;
  /** Plain http to the provider: only to names that cannot be on the internet (loopback, .localhost, .test). */
  allowHttp: boolean;
}

export const OIDC_CALLBACK_PATH = "/console/oidc/callback";
const NEEDED = ["OIDC_CLIENT_ID", "OIDC_REDIRECT_URL"] as const;
const ROLE_VALUES = ["OIDC_ADMIN_VALUES", "OIDC_OPERATOR_VALUES", "OIDC_VIEWER_VALUES"] as const;
/** Variables that only mean something with an issuer; the ones with defaults count when given. */
const NEED_AN_ISSUER = ["OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "OIDC_REDIRECT_URL", "OIDC_SCOPES", "OIDC_ROLE_CLAIM", ...ROLE_VALUES, "OIDC_DISPLAY_NAME"] as const;

/** RFC 6761's names for this machine and for testing: no one on the internet can answer for them. */
const isLocalHost = (host: string) => /^(localhost|.+\.localhost|.+\.test|127(\.\d{1,3}){3}|\[::1\])$/i.test(host);
const list = (value: string | undefined) => (value ?? "").split(",").map((part) => part.trim()).filter((part) => part !== "");

/** The OpenID Connect settings, undefined when no issuer is set, or the one-line problem with them. */
export function readOidcSettings(env: OidcEnv, given: ReadonlySet<string>): OidcSettings | undefined | { problem: string } {
  if (env.OIDC_ISSUER === undefined) {
    const stray = NEED_AN_ISSUER.filter((name) => given.has(name));
    if (stray.length > 0) return { problem: `OIDC_ISSUER: not set, but ${stray.join(", ")} ${stray.length === 1 ? "is" : "are"}; set the issuer for OpenID Connect sign-in, or unset the others` };
    if (!env.CONSOLE_PASSWORD_SIGNIN) return { problem: "CONSOLE_PASSWORD_SIGNIN: false without OIDC_ISSUER would leave the console with no way to sign in" };
    return undefined;
  }
  const missing = NEEDED.filter((name) => env[name] === undefined);
  if (missing.length > 0) return { problem: `${missing.join(", ")}: missing; OIDC_ISSUER is set, so OpenID Connect sign-in needs ${NEEDED.join(" and ")} too` };
  const roleValues = { admin: list(env.OIDC_ADMIN_VALUES), operator: list(env.OIDC_OPERATOR_VALUES), viewer: list(env.OIDC_VIEWER_VALUES) };
  if (roleValues.admin.length + roleValues.operator.length + roleValues.viewer.length === 0) {
    return { problem: `${ROLE_VALUES.join(", ")}: none is set, so no one could sign in through OIDC_ISSUER; name the ${env.OIDC_ROLE_CLAIM} claim values of each role` };
  }
  const issuer = parseUrl("OIDC_ISSUER", env.OIDC_ISSUER);
  if (typeof issuer === "string") return { problem: issuer };
  const redirect = parseUrl("OIDC_REDIRECT_URL", env.OIDC_REDIRECT_URL!);
  if (typeof redirect === "string") return { problem: redirect };
  if (redirect.pathname !== OIDC_CALLBACK_PATH || redirect.search !== "" || redirect.hash !== "") {
    return { problem: `OIDC_REDIRECT_URL: must be the console's callback, <origin>${OIDC_CALLBACK_PATH} (got ${JSON.stringify(env.OIDC_REDIRECT_URL)})` };
  }
  if (!env.OIDC_SCOPES.split(/\s+/).includes("openid")) return { problem: `OIDC_SCOPES: must include openid (got ${JSON.stringify(env.OIDC_SCOPES)})` };
  return {
    issuer: env.OIDC_ISSUER,
    clientId: env.OIDC_CLIENT_ID!,
    clientSecret: env.OIDC_CLIENT_SECRET,
    redirectUrl: redirect.href,
    scopes: env.OIDC_SCOPES,
    roleClaim: env.OIDC_ROLE_CLAIM,
    roleValues,
    displayName: env.OIDC_DISPLAY_NAME,
    allowHttp: issuer.protocol === "http:",
  };
}

function parseUrl(name: string, value: string): URL | string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${name}: not a URL (got ${JSON.stringify(value)})`;
  }
  if (url.protocol === "http:" && !isLocalHost(url.hostname)) return `${name}: must be https (http only for localhost, loopback addresses and .test names; got ${JSON.stringify(value)})`;
  return url;
}
