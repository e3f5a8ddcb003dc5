/**
 * Console sign-in through the company's identity provider (SPEC §19): the authorization code
 * flow with PKCE, state and nonce, by openid-client (OpenID-certified). The provider is found by
 * discovery and its keys come from its JWKS; the library checks the ID token's signature, issuer,
 * audience, expiry and nonce. Nothing here validates a token by hand: this file only keeps the
 * discovered provider, and turns the library's failures into what the sign-in page says.
 */
import * as oidc from "openid-client";
import type { OidcSettings } from "../config.ts";
import type { OperatorRole } from "../store/store.ts";
import { isOperatorEmail } from "./accounts.ts";
import { normaliseEmail } from "./operator-auth.ts";

export type { CustomFetch } from "openid-client";

/** Why a sign-in through the provider ended without a session; each is a page, never a 500. */
export type OidcFailure = "unreachable" | "unknownProvider" | "flowMismatch" | "refused" | "codeRejected" | "tokenRejected";

export class OidcSignInError extends Error {
  override name = "OidcSignInError";
  constructor(
    readonly failure: OidcFailure,
    /** The library's words for what failed (no token, code or secret is in them); for the log and the page. */
    readonly reason: string,
  ) {
    super(`${failure}: ${reason}`);
  }
}

/** What the callback must find again; kept in the browser's short-lived flow cookie. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Who the provider says signed in, from the checked ID token. */
export interface VerifiedSignIn {
  issuer: string;
  subject: string;
  claims: Readonly<Record<string, unknown>>;
  /** Kept only as the hint of the provider's sign-out (RP-initiated logout). */
  idToken: string;
}

/** A provider's metadata changes rarely; a failed discovery is tried again at the next sign-in. */
const DISCOVERY_TTL_MS = 60 * 60_000;
const REQUEST_TIMEOUT_SECONDS = 10;

export class OidcSignIn {
  private discovered: { configuration: Promise<oidc.Configuration>; until: number } | undefined;

  constructor(
    readonly settings: OidcSettings,
    /** How requests to the provider are made; the platform's fetch unless given (tests resolve their own host names). */
    private readonly fetchImpl?: oidc.CustomFetch,
    private readonly now: () => number = Date.now,
  ) {}

  /** Where to send the browser, and what its callback must match. */
  async start(): Promise<{ authorizationUrl: string; pending: PendingSignIn }> {
    const configuration = await this.provider();
    const pending = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier() };
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.settings.redirectUrl,
      scope: this.settings.scopes,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: "S256",
    });
    return { authorizationUrl: url.href, pending };
  }

  /** Redeems the code of the callback's query and checks the ID token; throws OidcSignInError. */
  async finish(callbackQuery: string, pending: PendingSignIn): Promise<VerifiedSignIn> {
    const configuration = await this.provider();
    // The configured redirect URL, not the request's Host: it is what the provider registered.
    const callbackUrl = new URL(this.settings.redirectUrl);
    callbackUrl.search = callbackQuery;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims()!;
      return { issuer: claims.iss, subject: claims.sub, claims, idToken: tokens.id_token! };
    } catch (error) {
      throw signInError(error);
    }
  }

  /**
   * The provider's sign-out page for this operator (RP-initiated logout), when the provider
   * offers one; undefined when it does not, or cannot be reached (the console session ends anyway).
   */
  async endSessionUrl(idTokenHint: string | undefined, postLogoutRedirectUrl: string): Promise<string | undefined> {
    let configuration: oidc.Configuration;
    try {
      configuration = await this.provider();
    } catch {
      return undefined;
    }
    if (!configuration.serverMetadata().end_session_endpoint) return undefined;
    const parameters: Record<string, string> = { client_id: this.settings.clientId, post_logout_redirect_uri: postLogoutRedirectUrl };
    if (idTokenHint) parameters.id_token_hint = idTokenHint;
    return oidc.buildEndSessionUrl(configuration, parameters).href;
  }

  private provider(): Promise<oidc.Configuration> {
    const now = this.now();
    if (this.discovered && this.discovered.until > now) return this.discovered.configuration;
    const { issuer, clientId, clientSecret, allowHttp } = this.settings;
    const configuration = oidc
      .discovery(new URL(issuer), clientId, clientSecret, clientSecret === undefined ? oidc.None() : undefined, {
        timeout: REQUEST_TIMEOUT_SECONDS,
        // The token endpoint's answer comes over TLS, which OpenID Connect lets stand in for the
        // ID token's signature; the console checks the signature against the provider's keys anyway
        // (SPEC §19), so a token that did not come from the provider's keys is refused however it came.
        execute: [oidc.enableNonRepudiationChecks, ...(allowHttp ? [oidc.allowInsecureRequests] : [])],
        ...(this.fetchImpl ? { [oidc.customFetch]: this.fetchImpl } : {}),
      })
      .catch((error: unknown) => {
        if (this.discovered?.configuration === configuration) this.discovered = undefined;
        throw signInError(error);
      });
    this.discovered = { configuration, until: now + DISCOVERY_TTL_MS };
    return configuration;
  }
}

/** The innermost message of an error and its causes: the library's precise words. */
function innermostMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  for (let cause = (error as { cause?: unknown }).cause, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) message = cause.message;
  return message;
}

function signInError(error: unknown): OidcSignInError {
  if (error instanceof OidcSignInError) return error;
  const reason = innermostMessage(error);
  if (error instanceof oidc.AuthorizationResponseError) return new OidcSignInError("refused", error.error);
  if (error instanceof oidc.ResponseBodyError) return new OidcSignInError("codeRejected", error.error);
  const code = (error as { code?: unknown }).code;
  // fetch's own failures (refused, reset, DNS) are TypeErrors with a cause; timeouts have a code.
  if ((error instanceof TypeError && (error as { cause?: unknown }).cause !== undefined) || code === "OAUTH_TIMEOUT" || code === "OAUTH_ABORT") {
    return new OidcSignInError("unreachable", reason);
  }
  if (/"state" response parameter/.test(reason)) return new OidcSignInError("flowMismatch", reason);
  const discoveryFailed = code === "OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED" || code === "OAUTH_RESPONSE_IS_NOT_CONFORM" || code === "OAUTH_RESPONSE_IS_NOT_JSON";
  if (discoveryFailed || /"iss" \(issuer\) response parameter/.test(reason)) return new OidcSignInError("unknownProvider", reason);
  return new OidcSignInError("tokenRejected", reason);
}

/**
 * The role the provider's claim gives (SPEC §19), the highest of any value it holds; undefined
 * when no value maps to one. The claim may be a list or one value; a dotted name reaches into
 * an object (Keycloak's realm_access.roles).
 */
export function roleFromClaims(claims: Readonly<Record<string, unknown>>, settings: Pick<OidcSettings, "roleClaim" | "roleValues">): OperatorRole | undefined {
  let value: unknown = claims;
  for (const part of settings.roleClaim.split(".")) value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[part] : undefined;
  const held = new Set((Array.isArray(value) ? value : [value]).filter((entry): entry is string => typeof entry === "string"));
  const roles: OperatorRole[] = ["admin", "operator", "viewer"];
  return roles.find((role) => settings.roleValues[role].some((claimValue) => held.has(claimValue)));
}

/** The operator's e-mail from the ID token: `email`, else a `preferred_username` that is one (Entra ID's UPN). */
export function emailFromClaims(claims: Readonly<Record<string, unknown>>): string | undefined {
  for (const name of ["email", "preferred_username"]) {
    const value = claims[name];
    if (typeof value === "string" && isOperatorEmail(normaliseEmail(value))) return normaliseEmail(value);
  }
  return undefined;
}
