/**
 * Child-process entry of a bench server: starts Mnemo with `startServer` on port 0 and
 * answers the parent's operations (server-ops.ts) over Bun's IPC channel. Exits when
 * asked to stop or when the parent goes away.
 */
import { loadConfig } from "../../src/config";
import { startServer } from "../../src/server";
import { createCountingLogger, createOps } from "./server-ops";

interface Request {
  id: number;
  op: string;
  args: unknown[];
}

const { dataDir, env } = JSON.parse(process.env.MNEMO_BENCH_SERVER ?? "{}") as {
  dataDir: string;
  env: Record<string, string>;
};
const send = (message: unknown) => process.send!(message);

try {
  const log = createCountingLogger();
  const config = loadConfig({ dataDir, port: 0, allowMockTokens: true, logLevel: "warn" }, env);
  const server = await startServer(config, { log });
  const ops = createOps(server, log);
  const parent = process.ppid;
  const watchdog = setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      void server.stop().finally(() => process.exit(1));
    }
  }, 1_000);

  process.on("message", async (raw) => {
    const { id, op, args } = raw as Request;
    try {
      if (op === "stop") {
        clearInterval(watchdog);
        await server.stop();
        send({ id, result: null });
        process.exit(0);
      }
      const handler = (ops as unknown as Record<string, (...a: unknown[]) => unknown>)[op];
      if (!handler) throw new Error(`unknown op ${op}`);
      send({ id, result: await handler(...args) });
    } catch (error) {
      send({ id, error: (error as Error).stack ?? String(error) });
    }
  });
  send({ type: "ready", url: server.url, pid: process.pid });
} catch (error) {
  send({ type: "failed", error: (error as Error).stack ?? String(error) });
  process.exit(1);
}
