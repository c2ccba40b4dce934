import type { EscrowService } from "../crypto/escrow";
import type { Store } from "../db/store";
import type { Profile, ProfileRepository } from "./repository";

export type { Profile } from "./repository";

/** What another domain may do with profiles, inside its own transaction: identity's webhooks write them at sign-up. */
export type ProfileAccess = Pick<ProfileRepository, "get" | "put" | "userWithName">;

/** What `GET /v1/me` tells a user about themself. */
export interface OwnProfile {
  profile: Profile | null;
  /** Whether a client key of theirs is escrowed (never the key). */
  clientKeyEscrowed: boolean;
}

/** The user's own profile (written by the identity webhooks, see identity/service.ts). */
export function createProfileService(d: {
  store: Store;
  repo: ProfileRepository;
  escrow: Pick<EscrowService, "status">;
}) {
  return {
    async own(userId: string): Promise<OwnProfile> {
      const profile = await d.repo.get(d.store.db, userId);
      return { profile, clientKeyEscrowed: (await d.escrow.status(userId)).present };
    },
  };
}
export type ProfileService = ReturnType<typeof createProfileService>;
