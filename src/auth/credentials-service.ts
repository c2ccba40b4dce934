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

/** Issues, lists and revokes credentials (used by the CLI; the secret is returned once). */
export function createCredentialsService({ repo, store }: { repo: CredentialsRepository; store: Store }) {
  return {
    async createApiKey(input: { userId: string; scopes: Scope[]; test?: boolean; name?: string }): Promise<ApiKeyInfo & { key: string }> {
      const body = newCredentialBody();
      const mode = input.test ? "test" : "live";
      const key = (input.test ? PREFIX.testKey : PREFIX.liveKey) + body;
      const row = {
        id: newId("key"), userId: input.userId, name: input.name ?? null, mode, lookup: body.slice(0, LOOKUP_LENGTH),
        secretHash: hashSecret(key), scopes: input.scopes, createdAt: new Date().toISOString(),
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
    async createDevToken(input: { userId: string; ttlMs: number }) {
      const body = newCredentialBody();
      const token = PREFIX.devToken + body;
      const now = Date.now();
      const row = {
        id: newId("dev"), userId: input.userId, lookup: body.slice(0, LOOKUP_LENGTH), secretHash: hashSecret(token),
        expiresAt: new Date(now + input.ttlMs).toISOString(), createdAt: new Date(now).toISOString(),
      };
      await repo.insertDevToken(store.db, row);
      return { id: row.id, userId: row.userId, token, expiresAt: row.expiresAt, createdAt: row.createdAt };
    },
  };
}
export type CredentialsService = ReturnType<typeof createCredentialsService>;

function toInfo(row: ApiKeyRow): ApiKeyInfo {
  return {
    id: row.id, userId: row.userId, name: row.name, mode: row.mode,
    prefix: (row.mode === "test" ? PREFIX.testKey : PREFIX.liveKey) + row.lookup,
    scopes: row.scopes, createdAt: row.createdAt, lastUsedAt: row.lastUsedAt, revokedAt: row.revokedAt,
  };
}
