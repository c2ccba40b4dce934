import { randomBytes } from "node:crypto";
import { first, run, sql, type Store } from "./store";

/**
 * A random server secret kept in the store of record, created by whichever process asks
 * first (replicas starting together agree: the first insert wins, everyone reads it).
 */
export async function serverSecret(store: Store, name: string, bytes = 32): Promise<Buffer> {
  const key = `secret:${name}`;
  await run(
    store.db,
    sql`INSERT INTO settings (key, value) VALUES (${key}, ${randomBytes(bytes).toString("base64")}) ON CONFLICT (key) DO NOTHING`,
  );
  const row = await first<{ value: string }>(store.db, sql`SELECT value FROM settings WHERE key = ${key}`);
  return Buffer.from(row!.value, "base64");
}
