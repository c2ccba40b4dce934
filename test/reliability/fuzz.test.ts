/**
 * Property-based fuzzing (docs/reliability.md#hostile-input) of every route of the OpenAPI document (fast-check):
 * schema-guided and hostile bodies, params, query strings and headers, sent as user B
 * while user A's data exists. For every response: no 5xx (501 only on a pending route),
 * an error is `{error: {code, message}}`, a success matches its declared schema, and
 * nothing of A's comes back. Afterwards A's records are unchanged and the server is
 * healthy. Reduced: 1,000 cases; `npm run stress`: 20,000. The seed is printed;
 * replay with MNEMO_FUZZ_SEED=<seed> (and MNEMO_FUZZ_CASES=<n>).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { connectMcpHttp } from "../helpers/mcp";
import { startTestServer, type TestServer } from "../helpers/server";
import { bodyFor, headersFor, pathParamFor, queryFor, valueFor, type Pools } from "./lib/arbitraries";
import { FULL, SEED, figure, sized } from "./lib/mode";
import { fillPath, loadOperations, schemaViolation, type Operation } from "./lib/openapi";
import { leakIn, ownerView, seedTenant, waitForIndex, type Tenant } from "./lib/tenant";

const CASES = sized("MNEMO_FUZZ_CASES", 1_000, 20_000);
const MCP_CASES = sized("MNEMO_FUZZ_MCP_CASES", 200, 2_000);
/** MNEMO_FUZZ_VERBOSE=1 prints a finding's whole request body (to replay it by hand). */
const VERBOSE = process.env.MNEMO_FUZZ_VERBOSE === "1";

let server: TestServer;
let operations: Operation[];
let alice: Tenant;
let bob: Tenant;
/** Open findings (lib/findings.ts) this run met and tolerated. */
/** A's ids that B wrote into its own records (see judge). */
const bobStored = new Set<string>();

beforeAll(async () => {
  server = await startTestServer();
  operations = await loadOperations(server.url);
  alice = await seedTenant(server.call, "fz-alice");
  bob = await seedTenant(server.call, "fz-bob");
  await waitForIndex(server.call, alice);
});
afterAll(() => server?.destroy());

interface Sent {
  op: Operation;
  path: string;
  headers: Record<string, string>;
  body: { bytes: Uint8Array | null; text: string; contentType: string | null };
}

/** Routes that relay to an upstream (the LLM gateway): 502/504 name an upstream failure. */
const UPSTREAM_ROUTES = new Set(["POST /v1/chat/completions"]);

/** What is wrong with one response, or null. */
function judge(sent: Sent, status: number, contentType: string, text: string): string | null {
  const { op } = sent;
  // First: nothing of A's, whatever the body's format.
  const leak = leakIn(alice, text, `${sent.path} ${sent.body.text}`, status >= 400);
  if (leak && !bobStored.has(leak)) return `A's ${leak} in B's response (status ${status})`;
  // Ids are per user: a write of B's that carried one of A's ids (B's own record under that
  // id, or the id as text) makes it B's data from then on. A's marker never is.
  if (status >= 200 && status < 300 && sent.op.method !== "GET")
    for (const id of Object.values(alice.ids)) if (`${sent.path} ${sent.body.text}`.includes(id)) bobStored.add(id);
  const upstream = UPSTREAM_ROUTES.has(op.key) && (status === 502 || status === 504);
  if (status >= 500 && !(status === 501 && op.pending) && !upstream) return `status ${status}`;
  const isJson = contentType.includes("json");
  if (status < 400 && !isJson) {
    // A download (files) answers bytes; only a route declaring a JSON body must send JSON.
    return op.responses[String(status)] ? `status ${status} declared JSON but sent ${contentType}` : null;
  }
  let body: any;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    return `status ${status} with a body that is not JSON: ${text.slice(0, 120)}`;
  }
  if (status >= 400) {
    // GET /v1/me answers 401 in the spec's own shape `{ok: false, error, details}`.
    const meShape = op.key === "GET /v1/me" && status === 401 && body?.ok === false && typeof body?.error === "string";
    // MCP speaks JSON-RPC: its errors are `{jsonrpc, error: {code: number, message}, id}`.
    const rpcShape =
      op.path === "/mcp" &&
      body?.jsonrpc === "2.0" &&
      typeof body?.error?.code === "number" &&
      typeof body?.error?.message === "string";
    if (!meShape && !rpcShape && (typeof body?.error?.code !== "string" || typeof body?.error?.message !== "string"))
      return `error body is not {error:{code,message}}: ${text.slice(0, 200)}`;
    if (!isJson) return `error with content-type ${contentType}`;
  } else {
    const declared = op.responses[String(status)];
    const violation = declared ? schemaViolation(declared, body) : null;
    if (violation) return `status ${status} does not match its declared schema: ${violation}`;
  }
  return null;
}

describe(`fuzzing every route of the OpenAPI document (${CASES} cases, seed ${SEED})`, () => {
  test(
    "no 5xx, declared shapes, no cross-user leak; A's data unchanged",
    async () => {
      figure(
        "fuzz",
        `seed ${SEED}, ${CASES} cases (replay: MNEMO_FUZZ_SEED=${SEED} MNEMO_FUZZ_CASES=${CASES} bun test test/reliability/fuzz.test.ts)`,
      );
      const before = await ownerView(server.call, operations, alice);
      const ids = [
        ...Object.values(alice.ids),
        ...Object.values(bob.ids),
        "shared-custom-id",
        "mem_00000000000000000000000000",
        "ws_missing",
      ];
      const pools: Pools = { ids, queries: [...ids, alice.marker] };
      const request = fc.constantFrom(...operations).chain((op) =>
        fc.record({
          op: fc.constant(op),
          params: fc.tuple(...op.pathParams.map(() => pathParamFor(pools)), fc.constant("")),
          query: queryFor(op, pools),
          headers: headersFor(op, bob.token),
          // fetch() cannot send a body with GET.
          body:
            op.method === "GET"
              ? fc.constant({ bytes: null, text: "", contentType: null })
              : op.method === "DELETE"
                ? fc.oneof(
                    { weight: 9, arbitrary: fc.constant({ bytes: null, text: "", contentType: null }) },
                    { weight: 1, arbitrary: bodyFor(op, pools, FULL) },
                  )
                : bodyFor(op, pools, FULL),
        }),
      );
      const statuses = new Map<string, number>();
      const findings = new Map<string, string>();
      const undeclared = new Map<string, number>();
      let cases = 0;
      await fc.assert(
        fc.asyncProperty(request, async ({ op, params, query, headers, body }) => {
          const values = Object.fromEntries(op.pathParams.map((name, i) => [name, params[i]]));
          const path = fillPath(op.path, values) + query;
          const sentHeaders = { ...headers, ...(body.contentType ? { "content-type": body.contentType } : {}) };
          let response: Response;
          try {
            response = await fetch(server.url + path, {
              method: op.method,
              headers: sentHeaders,
              body: body.bytes ?? undefined,
              signal: AbortSignal.timeout(30_000),
            });
          } catch (error) {
            // No answer (a hang or a dropped connection) is a finding like a 500.
            const kind = `${op.key}: no answer`;
            if (!findings.has(kind))
              findings.set(
                kind,
                `case ${cases}: ${op.method} ${path.slice(0, 300)} body ${body.text.slice(0, 200)} → ${(error as Error).message}`,
              );
            cases++;
            return;
          }
          const text = await response.text();
          cases++;
          if (cases % 2_000 === 0) process.stderr.write(`  fuzz: ${cases} of ${CASES} cases…\n`);
          const bucket = `${response.status}`;
          statuses.set(bucket, (statuses.get(bucket) ?? 0) + 1);
          if (!op.responses[String(response.status)] && !op.pending && op.path !== "/mcp") {
            const key = `${op.key} → ${response.status}`;
            undeclared.set(key, (undeclared.get(key) ?? 0) + 1);
          }
          const problem = judge(
            { op, path, headers: sentHeaders, body },
            response.status,
            response.headers.get("content-type") ?? "",
            text,
          );
          // Every distinct problem is kept (one example each), so one run reports them all.
          if (problem) {
            const kind = `${op.key}: ${problem.replace(/:.*$/s, "")}`;
            if (!findings.has(kind))
              findings.set(
                kind,
                `case ${cases}: ${op.method} ${path.slice(0, 300)} headers ${JSON.stringify(sentHeaders).slice(0, 400)} body ${body.text.slice(0, VERBOSE ? 100_000 : 300)} → ${problem.slice(0, 400)}`,
              );
          }
        }),
        { numRuns: CASES, seed: SEED, endOnFailure: true, verbose: 0 },
      );
      figure(
        "fuzz",
        `${cases} requests, ${findings.size} distinct problems, statuses ${[...statuses]
          .sort()
          .map(([s, n]) => `${s}×${n}`)
          .join(" ")}`,
      );
      // Not a failure (global guards answer 405/406/413/415 on every route): listed for review.
      for (const finding of findings.values()) console.log(`  finding: ${finding.slice(0, VERBOSE ? 200_000 : 600)}`);
      if (undeclared.size)
        figure(
          "fuzz",
          `statuses a route's OpenAPI entry does not declare: ${[...undeclared.keys()].sort().slice(0, 12).join("; ")}${undeclared.size > 12 ? ` (+${undeclared.size - 12} more)` : ""}`,
        );
      expect([...findings.values()]).toEqual([]);
      const [health] = await server.call("GET", "/health", { token: null });
      expect(health).toBe(200);
      expect(await ownerView(server.call, operations, alice)).toEqual(before);
    },
    FULL ? 3_600_000 : 600_000,
  );

  test(
    `every MCP tool with generated arguments (${MCP_CASES} calls): no internal error, no cross-user leak`,
    async () => {
      if (!operations.some((op) => op.key === "POST /mcp" && !op.pending))
        return console.log("no /mcp route: MCP fuzzing skipped");
      const before = await ownerView(server.call, operations, alice);
      const { client } = await connectMcpHttp(server.url, bob.token, "fuzz");
      const findings = new Map<string, string>();
      let calls = 0;
      try {
        const { tools } = await client.listTools();
        const ids = [...Object.values(alice.ids), ...Object.values(bob.ids), "shared-custom-id"];
        const pools: Pools = { ids, queries: [...ids, alice.marker] };
        // `arguments` is a JSON object by the protocol; inside it anything goes.
        const isObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
        const call = fc
          .constantFrom(...tools)
          .chain((tool) =>
            fc.record({ tool: fc.constant(tool), args: valueFor(tool.inputSchema as any, pools).filter(isObject) }),
          );
        await fc.assert(
          fc.asyncProperty(call, async ({ tool, args }) => {
            calls++;
            const sent = JSON.stringify(args ?? null);
            let outcome: { error: boolean; body: unknown };
            try {
              const result = await client.callTool({ name: tool.name, arguments: args as Record<string, unknown> });
              outcome = { error: !!result.isError, body: result };
            } catch (error) {
              const code = (error as { code?: number }).code;
              // -32602 invalid params is the SDK refusing arguments against the tool's schema; -32603 is a crash.
              if (code === -32603 || code === undefined)
                findings.set(
                  `${tool.name}: ${(error as Error).message.slice(0, 80)}`,
                  `${tool.name} ${sent.slice(0, 300)} → ${(error as Error).message.slice(0, 300)}`,
                );
              outcome = { error: true, body: (error as Error).message };
            }
            const text = JSON.stringify(outcome.body);
            if (/internal error/i.test(text))
              findings.set(
                `${tool.name}: internal error`,
                `${tool.name} ${sent.slice(0, 300)} → ${text.slice(0, 300)}`,
              );
            const leak = leakIn(alice, outcome.body, sent, outcome.error);
            if (!outcome.error) for (const id of Object.values(alice.ids)) if (sent.includes(id)) bobStored.add(id);
            if (leak && !bobStored.has(leak))
              findings.set(`${tool.name}: leak`, `${tool.name} ${sent.slice(0, 300)} → A's ${leak}`);
          }),
          { numRuns: MCP_CASES, seed: SEED, endOnFailure: true, verbose: 0 },
        );
      } finally {
        await client.close();
      }
      figure("fuzz", `MCP: ${calls} tool calls with generated arguments, ${findings.size} distinct problems`);
      for (const finding of findings.values()) console.log(`  finding: ${finding.slice(0, 600)}`);
      expect([...findings.values()]).toEqual([]);
      expect(await ownerView(server.call, operations, alice)).toEqual(before);
    },
    FULL ? 3_600_000 : 600_000,
  );

  test("a string field holding an object with a `toString` key is a 400, not a 500", async () => {
    const answers = [];
    for (const [path, body] of [
      ["/v1/memories", { content: { toString: "x" } }],
      ["/v1/memories/search", { query: { toString: "x" } }],
      ["/v1/workspaces", { name: { valueOf: "x" } }],
    ] as const) {
      answers.push((await server.call("POST", path, { token: bob.token, body }))[0]);
    }
    expect(answers).toEqual([400, 400, 400]);
  });
});
