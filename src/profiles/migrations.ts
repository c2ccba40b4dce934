/** Profiles, this domain's part of the first migration (`0001_core`, in `src/migrations.ts`). */
export const profileCoreTables = `
      CREATE TABLE profiles (
        user_id TEXT PRIMARY KEY,
        user_name TEXT UNIQUE,
        display_name TEXT,
        age INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
`;
