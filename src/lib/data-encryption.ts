/**
 * Encryption at rest of the few values the service must be able to read back (the webhook
 * signing secrets, SPEC §11.3): AES-256-GCM from node:crypto. The 256-bit key is derived with
 * HKDF-SHA256 from the key text (`DATA_ENCRYPTION_KEY`, or the generated one; see
 * server-keys.ts), so any text of at least 32 random characters serves.
 *
 * A stored value reads `enc1.<key id>.<iv>.<ciphertext and tag>` (base64url parts). The key id
 * (a fingerprint of the key, not the key) says which key wrote it, so a value written under
 * another key is refused by name rather than by a bare authentication failure. Each value is
 * bound to its context (e.g. its company) as additional authenticated data: copied to another
 * row, it no longer decrypts.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";

const PREFIX = "enc1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A stored value that cannot be decrypted with this key; the message says why, never the value. */
export class DataDecryptionError extends Error {
  override name = "DataDecryptionError";
}

export interface DataCipher {
  /** Fingerprint of the key (8 hex digits), as written into each value. */
  readonly keyId: string;
  encrypt(plaintext: string, context: string): string;
  decrypt(stored: string, context: string): string;
}

/** True for a value `encrypt` wrote (under any key). */
export const isEncrypted = (stored: string) => stored.startsWith(`${PREFIX}.`);

export function createDataCipher(keyText: string): DataCipher {
  if (keyText.length < 32) throw new RangeError("the data encryption key must be at least 32 characters");
  const key = Buffer.from(hkdfSync("sha256", Buffer.from(keyText, "utf8"), Buffer.alloc(0), "work-item-api data encryption v1", 32));
  const keyId = createHmac("sha256", key).update("key id").digest("hex").slice(0, 8);
  return {
    keyId,
    encrypt(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const sealed = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return [PREFIX, keyId, iv.toString("base64url"), sealed.toString("base64url")].join(".");
    },
    decrypt(stored, context) {
      const [prefix, storedKeyId, ivText, sealedText, ...rest] = stored.split(".");
      if (prefix !== PREFIX || storedKeyId === undefined || ivText === undefined || sealedText === undefined || rest.length > 0) {
        throw new DataDecryptionError("the stored value is not an encrypted value");
      }
      if (storedKeyId !== keyId) {
        throw new DataDecryptionError(`the stored value was encrypted with another key (key id ${storedKeyId}; DATA_ENCRYPTION_KEY gives ${keyId})`);
      }
      const iv = Buffer.from(ivText, "base64url");
      const sealed = Buffer.from(sealedText, "base64url");
      if (iv.length !== IV_BYTES || sealed.length < TAG_BYTES) throw new DataDecryptionError("the stored value is damaged");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, iv);
        decipher.setAAD(Buffer.from(context, "utf8"));
        decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
        return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString("utf8");
      } catch {
        throw new DataDecryptionError("the stored value is damaged or belongs to another record");
      }
    },
  };
}
