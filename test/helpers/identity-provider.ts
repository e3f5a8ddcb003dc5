/**
 * A real OpenID provider for the console's sign-in tests (SPEC §19): oidc-provider on a loopback
 * port, known by a host name of its own (`idp.test` by default, which the browser and the app's
 * fetch resolve to 127.0.0.1), with one registered client and accounts whose claims a test can
 * change between sign-ins. Its sign-in form is oidc-provider's development one: any password,
 * the login is the account's subject. Consent is taken as given.
 *
 * A test may also have the token endpoint hand out a changed ID token (another audience, an
 * expired one, a forged signature): the provider's answer is rewritten and signed again with the
 * provider's own key, so the console meets it exactly as it would meet a real one.
 */
import { createSign, generateKeyPairSync, type JsonWebKey, type KeyObject } from "node:crypto";
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:http";
import Provider from "oidc-provider";
import { Agent, fetch as undiciFetch } from "undici";
import type { CustomFetch } from "../../src/operators/oidc.ts";

export interface TestAccount {
  email: string;
  /** The `roles` claim. */
  roles: string[];
}

export type IdTokenClaims = Record<string, unknown> & { aud: string | string[]; exp: number; iat: number; iss: string; sub: string };

export interface TestIdentityProvider {
  /** `http://<host>:<port>`, the issuer the provider names itself by. */
  issuer: string;
  port: number;
  /** By subject (the login of the development sign-in form). */
  accounts: Map<string, TestAccount>;
  /** When set, every ID token the token endpoint hands out is rewritten by it, and signed with `signingKey` (the provider's own unless a test swaps it). */
  rewriteIdToken: ((claims: IdTokenClaims) => IdTokenClaims) | undefined;
  signingKey: KeyObject;
  /** Paths the provider was asked for, in order (to see the end-session call, say). */
  requests: string[];
  close(): Promise<void>;
}

export interface ProviderClient {
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
  postLogoutRedirectUri: string;
}

const KEY_ID = "test-key-1";

/** Names ending in .test go to 127.0.0.1: what `--host-resolver-rules` does for the browser, for the app's own requests. */
export const loopbackTestNamesFetch: CustomFetch = (() => {
  const agent = new Agent({
    connect: {
      lookup: (hostname, options, callback) => {
        const address = hostname.endsWith(".test") ? "127.0.0.1" : hostname;
        if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family: 4 }]);
        else callback(null, address, 4);
      },
    },
  });
  return (url, options) => undiciFetch(url, { ...options, dispatcher: agent } as Parameters<typeof undiciFetch>[1]) as unknown as Promise<Response>;
})();

function sign(claims: IdTokenClaims, key: KeyObject): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const input = `${part({ alg: "RS256", typ: "JWT", kid: KEY_ID })}.${part(claims)}`;
  return `${input}.${createSign("RSA-SHA256").update(input).sign(key).toString("base64url")}`;
}

/** Starts the provider on a free loopback port, answering as `http://<host>:<port>`. */
export async function startIdentityProvider(client: ProviderClient, host = "idp.test"): Promise<TestIdentityProvider> {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk: JsonWebKey = { ...privateKey.export({ format: "jwk" }), kid: KEY_ID, alg: "RS256", use: "sig" };
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://${host}:${port}`;
  const accounts = new Map<string, TestAccount>();
  const requests: string[] = [];

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: client.clientId,
        ...(client.clientSecret ? { client_secret: client.clientSecret, token_endpoint_auth_method: "client_secret_post" } : { token_endpoint_auth_method: "none" }),
        redirect_uris: [client.redirectUri],
        post_logout_redirect_uris: [client.postLogoutRedirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ["identity-provider-test-cookie-key"] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "roles"] },
    // Real providers (Keycloak, Entra ID) put these claims in the ID token of the code flow too.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true, logoutSource, postLogoutSuccessSource } },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    async findAccount(_ctx: unknown, subject: string) {
      const account = accounts.get(subject);
      if (!account) return undefined;
      return { accountId: subject, claims: () => ({ sub: subject, email: account.email, email_verified: true, name: account.email, roles: [...account.roles] }) };
    },
    // Consent is taken as given: the console's client is the company's own.
    async loadExistingGrant(ctx: GrantContext) {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
  });

  const handle: TestIdentityProvider = { issuer, port, accounts, rewriteIdToken: undefined, signingKey: privateKey, requests, close: async () => undefined };
  provider.use(async (ctx: KoaContext, next: () => Promise<void>) => {
    requests.push(ctx.path);
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path === "/token" && handle.rewriteIdToken && body?.id_token) {
      const claims = JSON.parse(Buffer.from(body.id_token.split(".")[1]!, "base64url").toString("utf8")) as IdTokenClaims;
      ctx.body = { ...body, id_token: sign(handle.rewriteIdToken(claims), handle.signingKey) };
    }
  });
  server.on("request", provider.callback());
  handle.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return handle;
}

/** The provider's "sign out?" page, without the stock page's web font (the test browser has no internet). */
async function logoutSource(ctx: KoaContext, form: string): Promise<void> {
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign out</title></head><body><h1>Sign out of the identity provider?</h1>${form}<button type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button></body></html>`;
}

async function postLogoutSuccessSource(ctx: KoaContext): Promise<void> {
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed out</title></head><body><h1>Signed out</h1></body></html>`;
}

/** What these hooks use of Koa's and oidc-provider's context (the package ships no types). */
interface KoaContext {
  path: string;
  body: unknown;
}

interface GrantContext {
  oidc: {
    result?: { consent?: { grantId?: string } };
    session: { accountId: string; grantIdFor(clientId: string): string | undefined };
    client: { clientId: string };
    provider: { Grant: GrantClass };
  };
}

interface GrantClass {
  new (input: { clientId: string; accountId: string }): { addOIDCScope(scope: string): void; save(): Promise<string> };
  find(id: string): Promise<unknown>;
}
