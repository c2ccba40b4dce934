import { PREFIX, type AuthService, type Principal } from "../auth/service";
import type { CredentialsService } from "../auth/credentials-service";
import type { Config } from "../config";
import { parseClientKey } from "../crypto/client-key";
import { EscrowReplaceRefused, type EscrowService } from "../crypto/escrow";
import { describeUsage, type KeyUsageCounter } from "../crypto/key-usage";
import { parseTempPublicKey, wrapClientKey } from "../crypto/wrap";
import { ConstraintError } from "../db/errors";
import type { Store } from "../db/store";
import { badRequest, conflict, notFound, unauthorized } from "../shared/app-error";
import type { Logger } from "../lib/log";
import type { Profile, ProfileAccess } from "../profiles/service";
import { MAX_AGE, MAX_DISPLAY_NAME, USERNAME, type OnboardingResult, type SyncResult, type WebhookBody } from "./model";

const DEV_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;
/** Live sign-in tokens one user may hold (a device or browser each); a sync beyond them revokes the oldest. */
export const MAX_SYNC_DEV_TOKENS = 5;
const NOT_ID_TOKEN = [
  PREFIX.mockToken,
  PREFIX.mockKey,
  PREFIX.mockDevToken,
  PREFIX.liveKey,
  PREFIX.testKey,
  PREFIX.devToken,
];

export interface IdentityDeps {
  auth: AuthService;
  store: Store;
  profiles: ProfileAccess;
  escrow: EscrowService;
  /** What a client key sealed, told before a different key replaces it. */
  keyUsage: KeyUsageCounter;
  credentials: CredentialsService;
  webhooks: Config["webhooks"];
  log: Logger;
}

const view = (p: Profile | null) => ({
  userName: p?.userName ?? null,
  display_name: p?.displayName ?? null,
  age: p?.age ?? null,
});

/**
 * The identity-provider webhooks (docs/api.md#identity-and-webhooks): onboarding saves a profile and escrows
 * a client key; sync tells a signed-in client where it stands and hands back its escrowed
 * key wrapped for a temporary public key, with a fresh developer token.
 */
export function createIdentityService({
  auth,
  store,
  profiles,
  escrow,
  keyUsage,
  credentials,
  webhooks,
  log,
}: IdentityDeps) {
  /**
   * Onboarding does not replace an escrowed key (the contract only says it escrows one): what
   * was sealed with that key would no longer open through escrow. Throws a 409 naming
   * `clientKey` and what would become unreadable; the same key again passes.
   */
  async function refuseKeyReplacement(userId: string, key: Buffer): Promise<void> {
    let current: Buffer | null;
    try {
      current = await escrow.get(userId);
    } catch {
      throw conflict(
        "clientKey: this user already has an escrowed client key (it does not open under the server master key); an operator can replace it with `mnemo escrow set --force`",
      );
    }
    if (!current || current.equals(key)) return;
    const usage = describeUsage(await keyUsage.countSealedWith(store.db, userId, current));
    throw conflict(
      `clientKey: a different client key is already escrowed for this user; replacing it would leave ${usage} sealed with it unreadable through escrow. ` +
        "Send the escrowed key, or have an operator replace it with `mnemo escrow set --force`",
    );
  }

  return {
    /** Which webhook an id names; an unknown (or unconfigured) id is a 404. */
    webhookKind(webhookId: string): "sync" | "onboarding" {
      if (webhooks.syncId && webhookId === webhooks.syncId) return "sync";
      if (webhooks.onboardingId && webhookId === webhooks.onboardingId) return "onboarding";
      throw notFound(`webhook '${webhookId}' not found`);
    },

    /** Only identity-provider ID tokens: API keys, developer and mock tokens are refused (401). */
    async authenticate(authorization: string | null): Promise<Principal> {
      const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
      if (token && NOT_ID_TOKEN.some((prefix) => token.startsWith(prefix))) {
        throw unauthorized(
          "this webhook requires an identity-provider ID token; API keys, developer tokens and mock tokens are refused",
        );
      }
      return auth.authenticateIdToken(authorization);
    },

    async onboard(userId: string, body: WebhookBody): Promise<OnboardingResult> {
      const { userName, display_name: displayName, age, clientKey } = body;
      if (typeof userName !== "string" || !USERNAME.test(userName))
        throw badRequest("userName: must be 3–32 characters of a–z, 0–9 and _");
      if (
        displayName !== undefined &&
        displayName !== null &&
        (typeof displayName !== "string" || displayName.length > MAX_DISPLAY_NAME)
      ) {
        throw badRequest(`display_name: must be a string of at most ${MAX_DISPLAY_NAME} characters, or null`);
      }
      if (
        age !== undefined &&
        age !== null &&
        !(Number.isInteger(age) && (age as number) >= 0 && (age as number) <= MAX_AGE)
      ) {
        throw badRequest(`age: must be an integer from 0 to ${MAX_AGE}`);
      }
      const key =
        clientKey === undefined || clientKey === null || clientKey === ""
          ? null
          : parseClientKey(clientKey as string, "clientKey");
      // Before anything is saved: a different key than the escrowed one is refused (409), never swapped in silently.
      if (key) await refuseKeyReplacement(userId, key);
      const taken = () => conflict(`userName: '${userName}' is taken`);
      const profile = await store
        .transaction(async (tx) => {
          const holder = await profiles.userWithName(tx, userName);
          if (holder && holder !== userId) throw taken();
          // Re-onboarding updates: fields left out keep their stored values.
          const current = await profiles.get(tx, userId);
          const next: Profile = {
            userName,
            displayName: displayName === undefined ? (current?.displayName ?? null) : (displayName as string | null),
            age: age === undefined ? (current?.age ?? null) : (age as number | null),
          };
          await profiles.put(tx, userId, next, new Date().toISOString());
          return next;
        })
        .catch((error) => {
          // Two users claiming one name at once: the unique index decides.
          if (error instanceof ConstraintError && error.constraint === "unique") throw taken();
          throw error;
        });
      if (key) {
        await escrow.set(userId, key).catch(async (error) => {
          // Another onboarding escrowed a different key meanwhile.
          if (error instanceof EscrowReplaceRefused) await refuseKeyReplacement(userId, key);
          throw error;
        });
      }
      return {
        ok: true,
        userId,
        profile: view(profile),
        clientKeyEscrowed: key !== null || (await escrow.status(userId)).present,
        encryptedBlobSaved: key !== null,
      };
    },

    async sync(userId: string, body: WebhookBody): Promise<SyncResult> {
      const steps = [`verified the identity-provider ID token (user ${userId})`];
      const publicKeyInput = body.client_temp_public_key;
      const recipient =
        publicKeyInput === undefined || publicKeyInput === null || publicKeyInput === ""
          ? null
          : parseTempPublicKey(publicKeyInput);
      const profile = await profiles.get(store.db, userId);
      steps.push(profile ? `profile found${profile.userName ? "" : " without a username"}` : "no profile yet");
      let clientKey: Buffer | null = null;
      try {
        clientKey = await escrow.get(userId);
      } catch (error) {
        log.warn("escrowed client key does not open", { userId, reason: (error as Error).message });
        steps.push("escrowed key present but does not open under the master key");
      }
      steps.push(clientKey ? "escrowed client key present" : "no escrowed client key");
      const status = !profile
        ? "new_user"
        : !profile.userName
          ? "incomplete_profile"
          : !clientKey
            ? "missing_key"
            : "complete";
      const wrapped = clientKey && recipient ? wrapClientKey(clientKey, recipient) : null;
      steps.push(
        wrapped
          ? "wrapped the client key for the temporary P-256 key (ECDH-ES + HKDF-SHA256 + AES-256-GCM)"
          : recipient
            ? "nothing to wrap"
            : "no temporary public key: key not wrapped",
      );
      const token = await credentials.issueSyncDevToken({ userId, ttlMs: DEV_TOKEN_TTL_MS, keep: MAX_SYNC_DEV_TOKENS });
      steps.push(`issued a developer token valid 24 h (expires ${token.expiresAt})`);
      if (token.revoked) {
        steps.push(
          `removed ${token.revoked} older sign-in token${token.revoked === 1 ? "" : "s"} (beyond ${MAX_SYNC_DEV_TOKENS} live per user, expired or revoked)`,
        );
      }
      return {
        secret: token.token,
        userId,
        status,
        profile: view(profile),
        wrapped_key: wrapped,
        debug_log: steps.join("; "),
      };
    },
  };
}
export type IdentityService = ReturnType<typeof createIdentityService>;
