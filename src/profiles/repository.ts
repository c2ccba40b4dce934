import { first, sql, type Executor } from "../db/store";

export interface Profile {
  userName: string | null;
  displayName: string | null;
  age: number | null;
}

/** User profiles and the presence of an escrowed client key. */
export function createProfileRepository() {
  return {
    async get(tx: Executor, userId: string): Promise<Profile | null> {
      const r = await first<{ user_name: string | null; display_name: string | null; age: number | null }>(
        tx,
        sql`SELECT user_name, display_name, age FROM profiles WHERE user_id = ${userId}`,
      );
      return r ? { userName: r.user_name, displayName: r.display_name, age: r.age } : null;
    },
    async hasEscrowedKey(tx: Executor, userId: string): Promise<boolean> {
      return (await first(tx, sql`SELECT 1 AS one FROM client_key_escrow WHERE user_id = ${userId}`)) !== null;
    },
  };
}
export type ProfileRepository = ReturnType<typeof createProfileRepository>;
