import { expect, test } from "bun:test";
import { join } from "node:path";
import type { IndexChildRequest } from "../src/shared/index-child-protocol";
import { isRunning } from "./helpers/processes";
import { waitFor } from "./helpers/wait";

test("an index child whose server is killed stops at once instead of running its work to the end", async () => {
  // An object store that takes every request and never answers: the child's build
  // waits on it for as long as the child lives (its client's own timeouts run to minutes).
  let requests = 0;
  const store = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => {
      requests++;
      return new Promise<Response>(() => {});
    },
  });
  const request: IndexChildRequest = {
    op: "vector-index",
    location: {
      uri: "s3://mnemo-test/index",
      storageOptions: {
        aws_endpoint: `http://127.0.0.1:${store.port}`,
        allow_http: "true",
        aws_virtual_hosted_style_request: "false",
        aws_region: "us-east-1",
        aws_access_key_id: "test",
        aws_secret_access_key: "test",
      },
    },
    table: "mem_gone",
    column: "wvec",
    hnsw: { numPartitions: 1, m: 16, efConstruction: 150 },
  };
  // The server's part, in a process of its own that is then killed: it starts the child as
  // the index writer does and prints the child's pid.
  const module = join(import.meta.dir, "..", "src", "search", "lance", "index-child-process.ts");
  const server = Bun.spawn(
    [
      process.execPath,
      "-e",
      `const { runInIndexChild } = await import(${JSON.stringify(module)});
       const children = new Set();
       const work = runInIndexChild(${JSON.stringify(request)}, children);
       for (const child of children) console.log(child.pid);
       await work.catch(() => {});`,
    ],
    { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "" } },
  );
  let child = 0;
  try {
    const reader = server.stdout.getReader();
    let printed = "";
    while (!printed.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the server's part ended early: ${await new Response(server.stderr).text()}`);
      printed += new TextDecoder().decode(value);
    }
    child = Number(printed.trim());
    expect(isRunning(child)).toBe(true);
    // The child is inside its work (opening the table), waiting on the object store.
    await waitFor(() => requests > 0, { what: "the child's first request to the object store" });
    server.kill("SIGKILL");
    await server.exited;
    await waitFor(() => !isRunning(child), { what: "the orphaned index child to end" });
  } finally {
    server.kill("SIGKILL");
    if (child && isRunning(child)) process.kill(child, "SIGKILL");
    store.stop(true);
  }
});
