/**
 * Operators of the identity provider in the store (SPEC §19), on every backend: known by issuer
 * and subject, created at the first sign-in, their role taken from each sign-in, no session when
 * disabled or when a first sign-in's e-mail is another operator's; every sign-in audited with
 * its method in the sign-in's own transaction.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Store } from "../../src/store/store.ts";
import { availableBackends, openFreshStore, type Backend } from "../helpers/backends.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

recordStoreStatements();

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 27, 9, 0, seconds)).toISOString();
const ISSUER = "https://login.example.com/realms/ops";

async function withStore(backend: Backend, body: (store: Store) => Promise<void>): Promise<void> {
  const { store, cleanup } = await openFreshStore(backend);
  try {
    // One tenant statement, so the statement recorder has something to hold the others against.
    await store.createCompany({ companyId: 1, name: "c1" });
    await body(store);
  } finally {
    await store.close();
    await cleanup();
  }
}

for (const backend of await availableBackends()) {
  describe(`operator identities [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("first sign-in creates the operator; later ones find it by issuer and subject and take the role of the day", () => withStore(backend, async (store) => {
      const identity = { issuer: ISSUER, subject: "f4c1-77", email: "ann@example.com", role: "viewer" as const };
      const first = await store.signInWithIdentity({ identity, newOperatorId: "op_ann", sessionHash: "s1", now: at(1) });
      assert.equal(first.kind, "signedIn");
      assert.ok(first.kind === "signedIn" && first.created);
      assert.deepEqual(first.kind === "signedIn" && first.operator, { operatorId: "op_ann", email: "ann@example.com", role: "viewer", disabled: false, createdAt: at(1), signInMethod: "oidc" });
      assert.equal((await store.findOperatorBySession("s1", at(0)))?.operatorId, "op_ann");

      // A new e-mail at the provider changes nothing: the operator is its issuer and subject.
      const again = await store.signInWithIdentity({ identity: { ...identity, email: "ann.new@example.com", role: "admin" }, newOperatorId: "op_unused", sessionHash: "s2", now: at(2) });
      assert.ok(again.kind === "signedIn" && !again.created);
      assert.equal(again.kind === "signedIn" && again.operator.operatorId, "op_ann");
      assert.equal(again.kind === "signedIn" && again.operator.role, "admin");
      assert.equal((await store.findOperatorBySession("s1", at(0)))?.role, "admin", "the role of every session of the operator");

      const otherIssuer = await store.signInWithIdentity({ identity: { ...identity, issuer: "https://other.example.com", email: "ann2@example.com" }, newOperatorId: "op_ann2", sessionHash: "s3", now: at(3) });
      assert.equal(otherIssuer.kind === "signedIn" && otherIssuer.operator.operatorId, "op_ann2", "the same subject at another issuer is someone else");
      assert.deepEqual((await store.listOperators()).map((o) => [o.email, o.signInMethod]), [["ann@example.com", "oidc"], ["ann2@example.com", "oidc"]]);
    }));

    test("a disabled operator and a taken e-mail get no session", () => withStore(backend, async (store) => {
      await store.createOperator({ operatorId: "op_bob", email: "bob@example.com", role: "admin", passwordHash: "h", now: at(0) });
      const taken = await store.signInWithIdentity({ identity: { issuer: ISSUER, subject: "b-1", email: "bob@example.com", role: "admin" }, newOperatorId: "op_x", sessionHash: "s1", now: at(1) });
      assert.deepEqual(taken, { kind: "emailTaken" });
      assert.equal(await store.findOperatorBySession("s1", at(0)), undefined);
      assert.equal((await store.listOperators()).length, 1, "nothing was created");

      const identity = { issuer: ISSUER, subject: "c-1", email: "cy@example.com", role: "viewer" as const };
      assert.equal((await store.signInWithIdentity({ identity, newOperatorId: "op_cy", sessionHash: "s2", now: at(2) })).kind, "signedIn");
      await store.disableOperator("cy@example.com", at(3));
      assert.equal((await store.signInWithIdentity({ identity, newOperatorId: "op_cy2", sessionHash: "s3", now: at(4) })).kind, "disabled");
      assert.equal(await store.findOperatorBySession("s3", at(0)), undefined);
    }));

    test("each sign-in is audited: the method, and for OpenID Connect the issuer and subject", () => withStore(backend, async (store) => {
      await store.createOperator({ operatorId: "op_d", email: "d@example.com", role: "viewer", passwordHash: "h", now: at(0) });
      await store.addOperatorSession({ operator: { operatorId: "op_d", email: "d@example.com" }, sessionHash: "s1", now: at(1), signIn: { method: "password" } });
      await store.signInWithIdentity({ identity: { issuer: ISSUER, subject: "e-1", email: "e@example.com", role: "admin" }, newOperatorId: "op_e", sessionHash: "s2", now: at(2) });
      const entries = await store.listAudit({ limit: 10 });
      assert.deepEqual(
        entries.map(({ operator, action, reason, signIn, target }) => ({ operator, action, reason, signIn, target })),
        [
          { operator: { operatorId: "op_e", email: "e@example.com" }, action: "operator.signin", reason: "", signIn: { method: "oidc", issuer: ISSUER, subject: "e-1" }, target: { companyId: null, workItemId: null, workType: null, deliveryId: null } },
          { operator: { operatorId: "op_d", email: "d@example.com" }, action: "operator.signin", reason: "", signIn: { method: "password" }, target: { companyId: null, workItemId: null, workType: null, deliveryId: null } },
        ],
      );
    }));
  });
}
