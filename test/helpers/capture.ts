import { expect } from "bun:test";
import type { FakeUpstream } from "./fake-upstream";
import { mock, type TestServer } from "./server";
import { waitFor } from "./wait";

/** A fact as the decisions call showed it to the memory model: the memories under their refs. */
export type Shown = { fact: number; text: string; memories: Array<{ ref: string; content: string }> };
/** The decisions call's data as the model received it. */
export const shownIn = (body: any): Shown[] => JSON.parse(body.messages[1].content).facts;

export type Decision = { fact: number; action: "add" | "update" | "delete" | "none"; ref?: string; content?: string };

/**
 * A chat completion captured with `X-Svc-Remember: true` (in `workspace` when given), its
 * extraction job run to the end: the fake memory model answers `facts`, then the decisions
 * `decide` makes of what it was shown. Resolves with the thread and what the model was shown.
 */
export async function captureWith(
  server: TestServer,
  fake: FakeUpstream,
  user: string,
  options: { message: string; facts: string[]; decide: (shown: Shown[]) => Decision[]; workspace?: string },
): Promise<{ thread: string; shown: Shown[] }> {
  let shown: Shown[] = [];
  fake.script.push("Noted.", { facts: options.facts }, (body) => {
    shown = shownIn(body);
    return { decisions: options.decide(shown) };
  });
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${mock(user)}`,
      "content-type": "application/json",
      "x-svc-remember": "true",
      ...(options.workspace ? { "x-svc-workspace": options.workspace } : {}),
    },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: options.message }] }),
  });
  expect(response.status).toBe(200);
  await response.text();
  const thread = response.headers.get("x-svc-thread")!;
  await server.services.capture.idle();
  await waitFor(
    async () => {
      // The worker runs every due job; no clock is involved.
      await server.services.capture.runDue();
      const [, jobs] = await server.call("GET", "/v1/memories/extract/jobs", { token: mock(user) });
      const job = jobs.data.find((j: { threadId: string }) => j.threadId === thread);
      if (job?.status === "failed") throw new Error(`the extraction job failed: ${job.lastError}`);
      return job?.status === "done";
    },
    { what: "the capture's extraction job" },
  );
  return { thread, shown };
}

/** The ref shown with fact `i` for the memory whose content contains `text`. */
export const refOf = (shown: Shown[], i: number, text: string) =>
  shown[i]?.memories.find((m) => m.content.includes(text))?.ref;

/** Stores a memory over the API; its id. */
export async function remember(
  server: TestServer,
  user: string,
  content: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const [status, body] = await server.call("POST", "/v1/memories", { token: mock(user), body: { content, ...extra } });
  expect(status).toBe(201);
  return body.id;
}
