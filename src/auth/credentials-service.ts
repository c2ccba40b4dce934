import type { Store } from "../db/store";
import { newId } from "../lib/ids";
import type { ApiKeyRow, CredentialsRepository } from "./credentials-repository";
import type { Scope } from "./scopes";
import { hashSecret, LOOKUP_LENGTH, newCredentialBody } from "./secrets";
import { PREFIX } from "./service";

/** An API key as shown to its owner: everything but the secret. */
export interface ApiKeyInfo {
  id: string;
  userId: string;
  name: string | null;
  mode: "live" | "test";
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** A developer token as shown to its owner or the operator: everything but the secret. */
export interface DevTokenInfo {
  id: string;
  userId: string;
  prefix: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  issuedBy: "sync" | null;
}

/** Issues, lists and revokes credentials (used by the CLI; the secret is returned once). */
export function createCredentialsService({ repo, store }: { repo: CredentialsRepository; store: Store }) {
  return {
    async createApiKey(input: {
      userId: string;
      scopes: Scope[];
      test?: boolean;
      name?: string;
    }): Promise<ApiKeyInfo & { key: string }> {
      const body = newCredentialBody();
      const mode = input.test ? "test" : "live";
      const key = (input.test ? PREFIX.testKey : PREFIX.liveKey) + body;
      const row = {
        id: newId("key"),
        userId: input.userId,
        name: input.name ?? null,
        mode,
        lookup: body.slice(0, LOOKUP_LENGTH),
        secretHash: hashSecret(key),
        scopes: input.scopes,
        createdAt: new Date().toISOString(),
      } as const;
      await repo.insertApiKey(store.db, row);
      return { ...toInfo({ ...row, scopes: [...row.scopes], lastUsedAt: null, revokedAt: null }), key };
    },
    async listApiKeys(userId?: string): Promise<ApiKeyInfo[]> {
      return (await repo.listApiKeys(store.db, userId)).map(toInfo);
    },
    /** Revokes a key; `not_found` when the id is unknown, `already_revoked` when it was. */
    async revokeApiKey(id: string): Promise<"revoked" | "not_found" | "already_revoked"> {
      if (await repo.revokeApiKey(store.db, id, new Date().toISOString())) return "revoked";
      return (await repo.apiKeyExists(store.db, id)) ? "already_revoked" : "not_found";
    },
    /** Revokes one of the user's live keys; false when the user has none with this id (another user's key is as unknown). */
    async revokeOwnApiKey(userId: string, id: string): Promise<boolean> {
      return repo.revokeOwnApiKey(store.db, userId, id, new Date().toISOString());
    },
    /** Developer tokens (never their secrets), oldest first; a user's only with `userId`. */
    async listDevTokens(userId?: string): Promise<DevTokenInfo[]> {
      return (await repo.listDevTokens(store.db, userId)).map(({ lookup, secretHash, ...info }) => ({
        ...info,
        prefix: PREFIX.devToken + lookup,
      }));
    },
    /**
     * Revokes a developer token (with `userId`, only one of that user's: another user's
     * answers as unknown). Web app sessions made from it end with it.
     */
    async revokeDevToken(id: string, userId?: string): Promise<"revoked" | "not_found" | "already_revoked"> {
      if (await repo.revokeDevToken(store.db, id, new Date().toISOString(), userId)) return "revoked";
      if (userId !== undefined) return "not_found";
      return (await repo.devTokenExists(store.db, id)) ? "already_revoked" : "not_found";
    },
    async createDevToken(input: { userId: string; ttlMs: number }) {
      const row = newDevToken(input.userId, input.ttlMs);
      await repo.insertDevToken(store.db, row);
      return { id: row.id, userId: row.userId, token: row.token, expiresAt: row.expiresAt, createdAt: row.createdAt };
    },
    /**
     * A developer token for the sign-in (sync) webhook. A user holds at most `keep` live
     * ones (a device each): issuing one revokes the oldest beyond that by deleting it, and
     * the user's expired or revoked ones go too, so syncing again and again leaves no pile of rows.
     * Tokens made with `createDevToken` (the CLI) are neither counted nor touched.
     */
    async issueSyncDevToken(input: { userId: string; ttlMs: number; keep: number }) {
      const row = newDevToken(input.userId, input.ttlMs);
      const revoked = await store.transaction(async (tx) => {
        await repo.insertDevToken(tx, row, "sync");
        // The token being issued is never the one revoked, whatever the clocks of replicas say.
        return repo.deleteDevTokensBeyond(tx, input.userId, "sync", row.id, input.keep - 1, row.createdAt);
      });
      return {
        id: row.id,
        userId: row.userId,
        token: row.token,
        expiresAt: row.expiresAt,
        createdAt: row.createdAt,
        revoked,
      };
    },
  };
}
export type CredentialsService = ReturnType<typeof createCredentialsService>;

function newDevToken(userId: string, ttlMs: number) {
  const body = newCredentialBody();
  const token = PREFIX.devToken + body;
  const now = Date.now();
  return {
    id: newId("dev"),
    userId,
    token,
    lookup: body.slice(0, LOOKUP_LENGTH),
    secretHash: hashSecret(token),
    expiresAt: new Date(now + ttlMs).toISOString(),
    createdAt: new Date(now).toISOString(),
  };
}

function toInfo(row: ApiKeyRow): ApiKeyInfo {
  return {
    id: row.id,
    userId: row.userId,
    name: row.name,
    mode: row.mode,
    prefix: (row.mode === "test" ? PREFIX.testKey : PREFIX.liveKey) + row.lookup,
    scopes: row.scopes,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
  };
}
