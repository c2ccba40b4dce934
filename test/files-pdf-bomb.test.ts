import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { cliDataDirs, killSpawnedServers, spawnServer } from "./helpers/cli";
import { BOMB_WORDS, pdfBomb, textPdf, waitForText } from "./helpers/pdf";

const dirs = cliDataDirs("mnemo-pdf-bomb-");
afterEach(killSpawnedServers);
const linux = process.platform === "linux";

/** A `/proc/<pid>/status` field in bytes: `VmRSS` now, `VmHWM` the peak since the last reset. */
const statusBytes = (pid: number, field: "VmRSS" | "VmHWM") =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
const MB = 1024 * 1024;

describe("a PDF decompression bomb uploaded to a running server", () => {
  // The server runs as `mnemo serve`, a process of its own, so that its RSS is its alone.
  test.skipIf(!linux)(
    "is stored and downloadable, not indexed (text_too_large, one warn line), and the server's RSS stays within idle + 100 MB",
    async () => {
      const dataDir = dirs.dataDir("bomb");
      const server = await spawnServer(["--data", dataDir, "--allow-mock-tokens"]);
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${server.url}${path}`, {
          method,
          body: body === undefined ? undefined : JSON.stringify(body),
          headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
        });
        return [response.status, await response.json()] as [number, any];
      };
      const upload = async (ws: string, name: string, bytes: Uint8Array) => {
        const [, issued] = await call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
          filename: name,
          contentType: "application/pdf",
        });
        const put = await fetch(issued.url, {
          method: "PUT",
          body: bytes,
          headers: { "content-type": "application/pdf" },
        });
        expect(put.status).toBe(201);
        return issued.key as string;
      };
      const listFiles = (ws: string) => async () => (await call("GET", `/v1/workspaces/${ws}/files`))[1].files;

      const [, workspace] = await call("POST", "/v1/workspaces", { name: "Bombs" });
      // Warm: one small PDF through the whole path (upload, child, index, search) before idle is measured.
      const small = await upload(workspace.id, "small.pdf", textPdf("the albatross census"));
      expect(await waitForText(listFiles(workspace.id), small)).toEqual({ status: "indexed" });
      const [, warm] = await call("POST", "/v1/documents/query", {
        workspace_id: workspace.id,
        query: "albatross",
        include: { files: true },
      });
      expect(warm.items.map((item: { sourceId: string }) => item.sourceId)).toEqual([small]);

      const idle = statusBytes(server.proc.pid, "VmRSS");
      // Resets VmHWM to the current RSS (proc(5), clear_refs "5"): the peak from here on is the bomb's.
      writeFileSync(`/proc/${server.proc.pid}/clear_refs`, "5");
      const bomb = pdfBomb();
      const key = await upload(workspace.id, "bomb.pdf", bomb);
      const indexing = await waitForText(listFiles(workspace.id), key);
      const peak = statusBytes(server.proc.pid, "VmHWM");

      expect((peak - idle) / MB).toBeLessThanOrEqual(100);
      expect(indexing).toEqual({
        status: "not_indexed",
        reason: "text_too_large",
        message: "its text is over 5 MB, the most a PDF may have to be indexed",
      });
      const download = await fetch(`${server.url}/v1/workspaces/${workspace.id}/files/${key}`, {
        headers: { authorization: "Bearer mock-token-alice" },
      });
      expect([download.status, Buffer.from(await download.arrayBuffer()).equals(Buffer.from(bomb))]).toEqual([
        200,
        true,
      ]);
      const [, found] = await call("POST", "/v1/documents/query", {
        workspace_id: workspace.id,
        query: "dull boy",
        include: { files: true },
      });
      expect(found.items).toEqual([]);

      server.proc.kill("SIGTERM");
      expect(await server.proc.exited).toBe(0);
      const warnings = (await server.stderr())
        .split("\n")
        .filter((line) => line.includes(" WARN ") && line.includes("text not indexed"));
      expect(warnings).toEqual([expect.stringContaining(`key="${key}" reason="text_too_large"`)]);
      expect(warnings[0]).not.toContain(BOMB_WORDS);
      expect(warnings[0]).not.toContain("bomb.pdf");
    },
  );
});
