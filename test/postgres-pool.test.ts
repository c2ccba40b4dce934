import { afterAll, describe, expect, test } from "bun:test";
import { createPostgresPool } from "../src/db/postgres-dialect";
import { StoreUnavailableError, translateError } from "../src/db/errors";
import { TEST_DATABASE_URL } from "./helpers/database";

/**
 * When every connection of the pool stays busy longer than the pool waits for one (a busy
 * machine, a burst of requests), the request is told the store is unavailable (503 with
 * Retry-After, like a dropped connection), never a 500.
 */
const pools: Array<{ end(): Promise<void> }> = [];
afterAll(async () => {
  for (const pool of pools) await pool.end();
});

describe("a PostgreSQL pool with no free connection", () => {
  test.skipIf(!TEST_DATABASE_URL)("the driver's wait that runs out is the store being unavailable", async () => {
    const pool = createPostgresPool({ url: TEST_DATABASE_URL!, poolSize: 1 });
    pools.push(pool);
    // The pool's own wait, made short here; the driver's error is the one it gives at any length.
    (pool.options as { connectionTimeoutMillis: number }).connectionTimeoutMillis = 50;
    const busy = await pool.connect();
    try {
      const error = await pool.connect().then(
        (client) => {
          client.release();
          return null;
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      const translated = translateError(error);
      expect({
        unavailable: translated instanceof StoreUnavailableError,
        message: (translated as Error).message,
      }).toEqual({
        unavailable: true,
        message: "timeout exceeded when trying to connect",
      });
    } finally {
      busy.release();
    }
  });
});
