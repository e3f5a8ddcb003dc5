/**
 * A company's webhook signing secrets (Standard Webhooks `whsec_` + 32 random bytes), SPEC §6
 * and §11.3.
 *
 * - Made on first use, by the first delivery or by `webhooks secret` on the CLI, whichever comes
 *   first; concurrent first uses agree because the store keeps the first secret it is given.
 * - Rotation keeps the previous secret signing too for `WEBHOOK_SECRET_OVERLAP_SECONDS`
 *   (default 24 h): during the overlap every delivery carries two signatures, so a receiver can
 *   switch to the new secret at any moment within it. `revokePrevious` ends the overlap early.
 * - Stored encrypted (AES-256-GCM, ../lib/data-encryption.ts) under the data encryption key,
 *   each bound to its company. Signing needs the secret itself, so it cannot be a hash. Rows
 *   stored before encryption at rest are read as they are and encrypted by `encryptStored`,
 *   which every process runs at start-up after the migrations.
 */
import { randomBytes } from "node:crypto";
import type { Config } from "../config.ts";
import { createDataCipher, isEncrypted, type DataCipher } from "../lib/data-encryption.ts";
import { serverKey } from "../lib/server-keys.ts";
import type { Store } from "../store/store.ts";

export const newWebhookSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

export interface RotatedSecret {
  secret: string;
  /** Until when the replaced secret still signs; null when there was none, or no overlap is configured. */
  previousValidUntil: string | null;
}

export interface WebhookSecrets {
  /** The company's current secret, made now when it has none; undefined when there is no such company. */
  current(companyId: number): Promise<string | undefined>;
  /**
   * What a delivery at `now` is signed with: the current secret (made when none), then the
   * previous one while its overlap lasts. Undefined when there is no such company.
   */
  signingSecrets(companyId: number, now: Date): Promise<string[] | undefined>;
  /** Replaces the current secret; the old one keeps signing until `previousValidUntil`. */
  rotate(companyId: number, now: Date): Promise<RotatedSecret | undefined>;
  /** Ends the overlap now: only the current secret signs. Resolves to the current secret. */
  revokePrevious(companyId: number): Promise<string | undefined>;
  /** Encrypts every secret still stored in plain text; idempotent. Resolves to how many companies it changed. */
  encryptStored(): Promise<number>;
}

export type WebhookSecretsConfig = Pick<Config, "dataEncryptionKey" | "webhookSecretOverlapSeconds">;

/** The additional authenticated data of a company's secrets: a ciphertext copied to another company does not decrypt. */
const contextOf = (companyId: number) => `webhook-secret:company:${companyId}`;

const ENCRYPT_PAGE = 100;

export function createWebhookSecrets(store: Store, config: WebhookSecretsConfig): WebhookSecrets {
  let cipher: Promise<DataCipher> | undefined;
  const getCipher = () => {
    cipher ??= serverKey(store, "data-encryption", config.dataEncryptionKey).then(createDataCipher);
    // A store that did not answer is asked again next time.
    cipher.catch(() => (cipher = undefined));
    return cipher;
  };
  const seal = async (companyId: number, secret: string) => (await getCipher()).encrypt(secret, contextOf(companyId));
  const open = async (companyId: number, stored: string) => (isEncrypted(stored) ? (await getCipher()).decrypt(stored, contextOf(companyId)) : stored);

  async function current(companyId: number): Promise<string | undefined> {
    const stored = (await store.getWebhookSecrets(companyId))?.current ?? (await store.ensureWebhookSecret(companyId, await seal(companyId, newWebhookSecret())));
    return stored === undefined || stored === null ? undefined : open(companyId, stored);
  }

  return {
    current,

    async signingSecrets(companyId, now) {
      const stored = await store.getWebhookSecrets(companyId);
      if (!stored) return undefined;
      const secret = stored.current === null ? await current(companyId) : await open(companyId, stored.current);
      if (secret === undefined) return undefined;
      const overlapping = stored.previous !== null && stored.previousUntil !== null && Date.parse(stored.previousUntil) > now.getTime();
      return overlapping ? [secret, await open(companyId, stored.previous!)] : [secret];
    },

    async rotate(companyId, now) {
      const secret = newWebhookSecret();
      const overlap = config.webhookSecretOverlapSeconds;
      const until = overlap > 0 ? new Date(now.getTime() + overlap * 1000).toISOString() : null;
      if (!(await store.rotateWebhookSecret(companyId, { secret: await seal(companyId, secret), previousUntil: until }))) return undefined;
      const previous = (await store.getWebhookSecrets(companyId))?.previous ?? null;
      return { secret, previousValidUntil: previous === null ? null : until };
    },

    async revokePrevious(companyId) {
      if (!(await store.revokePreviousWebhookSecret(companyId))) return undefined;
      return current(companyId);
    },

    async encryptStored() {
      // The key is made here, at start-up, if this is the first process: never on the way of a
      // delivery, where on Citus its write would need every node (SPEC §23).
      await getCipher();
      let changed = 0;
      let afterCompanyId = 0;
      for (;;) {
        const page = await store.plaintextWebhookSecrets({ afterCompanyId, limit: ENCRYPT_PAGE });
        for (const row of page) {
          const pair = async (stored: string | null) => (stored !== null && !isEncrypted(stored) ? { from: stored, to: await seal(row.companyId, stored) } : null);
          await store.replaceStoredWebhookSecrets(row.companyId, { current: await pair(row.current), previous: await pair(row.previous) });
          changed++;
        }
        if (page.length < ENCRYPT_PAGE) return changed;
        afterCompanyId = page[page.length - 1]!.companyId;
      }
    },
  };
}
