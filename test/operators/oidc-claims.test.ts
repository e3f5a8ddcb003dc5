/** What the console reads from a checked ID token (SPEC §19): the role its claim gives, and the e-mail. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { emailFromClaims, roleFromClaims } from "../../src/operators/oidc.ts";

const settings = { roleClaim: "roles", roleValues: { admin: ["ops-admin"], operator: ["ops-operator", "filing"], viewer: ["ops-viewer"] } };

test("the highest role any value of the claim gives; none when no value maps to a role", () => {
  assert.equal(roleFromClaims({ roles: ["ops-viewer", "ops-admin"] }, settings), "admin");
  assert.equal(roleFromClaims({ roles: ["filing", "ops-viewer"] }, settings), "operator");
  assert.equal(roleFromClaims({ roles: "ops-viewer" }, settings), "viewer", "one value, not a list");
  for (const claims of [{}, { roles: [] }, { roles: ["payroll"] }, { roles: null }, { roles: [42, { admin: true }] }, { roles: "OPS-ADMIN" }]) {
    assert.equal(roleFromClaims(claims, settings), undefined, JSON.stringify(claims));
  }
});

test("a dotted claim name reaches into an object (Keycloak's realm_access.roles)", () => {
  const keycloak = { ...settings, roleClaim: "realm_access.roles" };
  assert.equal(roleFromClaims({ realm_access: { roles: ["offline_access", "ops-admin"] } }, keycloak), "admin");
  assert.equal(roleFromClaims({ realm_access: "ops-admin" }, keycloak), undefined);
  assert.equal(roleFromClaims({ "realm_access.roles": ["ops-admin"] }, keycloak), undefined);
});

test("the e-mail: email, else a preferred_username that is an address (Entra ID's UPN), lower case", () => {
  assert.equal(emailFromClaims({ email: " Ann@Example.COM ", preferred_username: "other@example.com" }), "ann@example.com");
  assert.equal(emailFromClaims({ preferred_username: "Bob@Contoso.onmicrosoft.com" }), "bob@contoso.onmicrosoft.com");
  assert.equal(emailFromClaims({ preferred_username: "bob" }), undefined);
  assert.equal(emailFromClaims({ email: 7 }), undefined);
});
