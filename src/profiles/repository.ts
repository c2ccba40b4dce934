import type { Database } from "bun:sqlite";

export interface Profile {
  userName: string | null;
  displayName: string | null;
  age: number | null;
}

/** User profiles and the presence of an escrowed client key. */
export function createProfileRepository(db: Database) {
  return {
    get(userId: string): Profile | null {
      const r = db
        .query<{ user_name: string | null; display_name: string | null; age: number | null }, [string]>(
          "SELECT user_name, display_name, age FROM profiles WHERE user_id = ?",
        )
        .get(userId);
      return r ? { userName: r.user_name, displayName: r.display_name, age: r.age } : null;
    },
    hasEscrowedKey: (userId: string) => db.query("SELECT 1 FROM client_key_escrow WHERE user_id = ?").get(userId) !== null,
  };
}
export type ProfileRepository = ReturnType<typeof createProfileRepository>;
