/** Signing in to the console through its real routes (inject), for the console's tests. */
import assert from "node:assert/strict";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";

export const FORM = { "content-type": "application/x-www-form-urlencoded" } as const;

/** The `name=value` pairs of a response's Set-Cookie headers. */
export function setCookies(response: LightMyRequestResponse): Map<string, string> {
  const raw = response.headers["set-cookie"];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return new Map(lines.map((line) => {
    const pair = line.split(";")[0]!;
    const at = pair.indexOf("=");
    return [pair.slice(0, at), pair.slice(at + 1)];
  }));
}

/** The hidden `_csrf` value of the first form on a page. */
export function csrfTokenOf(body: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
  assert.ok(token, "the page has a form with a CSRF token");
  return token;
}

/** A browser-like console client: keeps its cookies and the latest page's CSRF token. */
export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  csrfToken = "";

  constructor(private readonly app: FastifyInstance) {}

  get cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({ method: "GET", url, headers: { cookie: this.cookieHeader } });
    this.remember(response);
    if (response.statusCode === 200 && response.body.includes('name="_csrf"')) this.csrfToken = csrfTokenOf(response.body);
    return response;
  }

  /** Posts a form with the current CSRF token (unless `fields` names its own `_csrf`), as the same origin would. */
  async post(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({
      method: "POST",
      url,
      headers: { ...FORM, cookie: this.cookieHeader, ...headers },
      payload: new URLSearchParams({ _csrf: this.csrfToken, ...fields }).toString(),
    });
    this.remember(response);
    return response;
  }

  /** The sign-in form, then the sign-in itself; the response of the POST. */
  async signIn(email: string, password: string): Promise<LightMyRequestResponse> {
    assert.equal((await this.get("/console/login")).statusCode, 200);
    return this.post("/console/login", { email, password });
  }

  private remember(response: LightMyRequestResponse): void {
    for (const [name, value] of setCookies(response)) {
      if (value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

/** A signed-in client for a fresh operator. */
export async function signedInClient(app: FastifyInstance, email: string, password: string): Promise<ConsoleClient> {
  const client = new ConsoleClient(app);
  const response = await client.signIn(email, password);
  assert.equal(response.statusCode, 303, response.body);
  assert.equal(response.headers.location, "/console");
  return client;
}
