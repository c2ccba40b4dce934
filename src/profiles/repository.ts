import type { OwnedTable } from "../db/owned-tables";
import { first, run, sql, type Executor } from "../db/store";

export interface Profile {
  userName: string | null;
  displayName: string | null;
  age: number | null;
}

/** User profiles. */
export function createProfileRepository() {
  return {
    async get(tx: Executor, userId: string): Promise<Profile | null> {
      const r = await first<{ user_name: string | null; display_name: string | null; age: number | null }>(
        tx,
        sql`SELECT user_name, display_name, age FROM profiles WHERE user_id = ${userId}`,
      );
      return r
        ? { userName: r.user_name, displayName: r.display_name, age: r.age === null ? null : Number(r.age) }
        : null;
    },
    /** The user holding a username, compared without regard to case (a unique index enforces it). */
    async userWithName(tx: Executor, userName: string): Promise<string | null> {
      const r = await first<{ user_id: string }>(
        tx,
        sql`SELECT user_id FROM profiles WHERE lower(user_name) = ${userName.toLowerCase()}`,
      );
      return r?.user_id ?? null;
    },
    /** Creates or replaces a user's profile. */
    async put(tx: Executor, userId: string, profile: Profile, now: string): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO profiles (user_id, user_name, display_name, age, created_at, updated_at)
            VALUES (${userId}, ${profile.userName}, ${profile.displayName}, ${profile.age}, ${now}, ${now})
            ON CONFLICT (user_id) DO UPDATE SET user_name = ${profile.userName}, display_name = ${profile.displayName}, age = ${profile.age}, updated_at = ${now}`,
      );
    },
  };
}
export type ProfileRepository = ReturnType<typeof createProfileRepository>;

/** User profiles, as a user's export carries them. */
export const PROFILE_TABLE: OwnedTable = {
  table: "profiles",
  owner: "user_id",
  columns: ["user_id", "user_name", "display_name", "age", "created_at", "updated_at"],
  orderBy: "user_id",
  idColumns: ["user_id"],
};
