/**
 * The web app's sign-in over HTTP: one-time links (`mnemo open`), pasted keys, the session
 * cookie's flags, the header that keeps it CSRF-safe, expiry, sign-out, isolation, and that
 * no secret reaches the store or the logs. Also what the app calls besides: /app itself,
 * /v1/keys, PATCH /v1/memories/:id and the memory list's filters.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createAppSessions, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from "../src/auth/app-sessions";
import { hashSecret } from "../src/auth/secrets";
import { all, run, sql } from "../src/db/store";
import { createLogger } from "../src/lib/log";
import { APP_CSP } from "../src/web-app/assets";
import { ensureWebApp } from "../scripts/build-app";
import { runCli } from "./helpers/cli";
import { databaseEnvFor, dropDatabaseFor, TEST_DATABASE_URL } from "./helpers/database";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";
const APP = { "x-mnemo-app": "1" };
const logLines: string[] = [];
let server: TestServer;

beforeAll(async () => {
  await ensureWebApp();
  server = await startTestServer({ log: createLogger("debug", (line) => logLines.push(line)) });
});
afterAll(() => server?.destroy());

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function request(
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  const response = await fetch(server.url + path, {
    method,
    headers: { ...(options.body !== undefined ? { "content-type": "application/json" } : {}), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    redirect: "manual",
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, body, headers: response.headers };
}

/** Signs in with a link or a key; returns the cookie pair (`mnemo_session=…`) and the answer. */
async function signIn(body: { token?: string; apiKey?: string }, headers: Record<string, string> = {}) {
  const answer = await request("POST", "/v1/app/session", { headers: { ...APP, ...headers }, body });
  const setCookie = answer.headers.get("set-cookie") ?? "";
  return { ...answer, setCookie, cookie: setCookie.split(";")[0] };
}
const link = async (user: string) => (await server.services.appSessions.createLink(user)).token;
const asSession = (cookie: string, extra: Record<string, string> = {}) => ({ cookie, ...APP, ...extra });

describe(`the app at /app on ${backend}`, () => {
  test("/ sends a browser to /app/; every /app path is the app's page or file, under the strict headers", async () => {
    const root = await request("GET", "/");
    expect([root.status, root.headers.get("location")]).toEqual([302, "/app/"]);
    for (const [path, type] of [
      ["/app", "text/html"],
      ["/app/", "text/html"],
      ["/app/memories/mem_1", "text/html"],
      ["/app/app.js", "text/javascript"],
      ["/app/app.css", "text/css"],
    ]) {
      const answer = await request("GET", path);
      expect([path, answer.status, answer.headers.get("content-type")?.split(";")[0]]).toEqual([path, 200, type]);
      expect({
        csp: answer.headers.get("content-security-policy"),
        nosniff: answer.headers.get("x-content-type-options"),
        referrer: answer.headers.get("referrer-policy"),
        frames: answer.headers.get("x-frame-options"),
      }).toEqual({ csp: APP_CSP, nosniff: "nosniff", referrer: "no-referrer", frames: "DENY" });
    }
    expect(APP_CSP).toContain("frame-ancestors 'none'");
    expect(APP_CSP).toStartWith("default-src 'self'");
  });
});

describe(`web app sessions on ${backend}`, () => {
  test("a sign-in link works once, for a cookie that is HttpOnly, SameSite=Strict, for the whole origin", async () => {
    const token = await link("alice");
    const first = await signIn({ token });
    expect([first.status, first.body.userId, first.body.scopes.length]).toEqual([200, "alice", 5]);
    const attributes = first.setCookie.split(";").map((part) => part.trim());
    expect(attributes[0]).toMatch(/^mnemo_session=[A-Za-z0-9]{43}$/);
    expect(attributes.slice(1).sort()).toEqual(["HttpOnly", "Max-Age=604800", "Path=/", "SameSite=Strict"]);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect((await request("GET", "/v1/me", { headers: asSession(first.cookie) })).body.userId).toBe("alice");

    const again = await signIn({ token });
    expect([again.status, again.body.error.message, again.setCookie]).toEqual([
      401,
      expect.stringContaining("already used"),
      "",
    ]);
    const unknown = await signIn({ token: "not-a-token" });
    expect([unknown.status, unknown.body.error.message]).toEqual([401, expect.stringContaining("not known")]);
  });

  test("an expired link is refused, saying so", async () => {
    const past = createAppSessions(server.services.store, () => Date.now() - 6 * 60_000);
    const { token } = await past.createLink("alice");
    const answer = await signIn({ token });
    expect([answer.status, answer.body.error.message]).toEqual([401, expect.stringContaining("expired")]);
  });

  test("behind an https proxy the cookie is Secure", async () => {
    const answer = await signIn({ token: await link("alice") }, { "x-forwarded-proto": "https" });
    expect(answer.setCookie).toContain("; Secure");
  });

  test("a cookie without the app's header, or from a cross-site request, is refused; so is a sign-in without it", async () => {
    const { cookie } = await signIn({ token: await link("alice") });
    const bare = await request("GET", "/v1/memories", { headers: { cookie } });
    expect([bare.status, bare.body.error.message]).toEqual([403, expect.stringContaining("X-Mnemo-App: 1")]);
    const wrongValue = await request("GET", "/v1/memories", { headers: { cookie, "x-mnemo-app": "yes" } });
    expect(wrongValue.status).toBe(403);
    for (const site of ["cross-site", "same-site"]) {
      expect(
        (await request("GET", "/v1/memories", { headers: asSession(cookie, { "sec-fetch-site": site }) })).status,
      ).toBe(403);
    }
    expect(
      (await request("GET", "/v1/memories", { headers: asSession(cookie, { "sec-fetch-site": "same-origin" }) }))
        .status,
    ).toBe(200);
    // A form posting to the sign-in from elsewhere (login CSRF) cannot add the header.
    const token = await link("alice");
    const forged = await request("POST", "/v1/app/session", { body: { token } });
    expect(forged.status).toBe(403);
    // The link was not used up by the refused attempt.
    expect((await signIn({ token })).status).toBe(200);
    // A write with the cookie alone does nothing.
    const write = await request("POST", "/v1/memories", { headers: { cookie }, body: { content: "forged" } });
    expect(write.status).toBe(403);
    expect((await server.call("GET", "/v1/memories"))[1].data.map((m: { content: string }) => m.content)).not.toContain(
      "forged",
    );
  });

  test("a pasted key makes a session of the same user and scopes, which ends when the key is revoked", async () => {
    const created = await server.services.credentials.createApiKey({
      userId: "kim",
      scopes: ["memory:read"],
      name: "reader",
    });
    const bad = await signIn({ apiKey: "svc_sk_live_notakeyatall0000000000000000000000" });
    expect([bad.status, bad.body.error.message]).toEqual([401, expect.stringMatching(/^apiKey: /)]);
    const { status, body, cookie } = await signIn({ apiKey: created.key });
    expect([status, body.userId, body.scopes]).toEqual([200, "kim", ["memory:read"]]);
    expect((await request("GET", "/v1/memories", { headers: asSession(cookie) })).status).toBe(200);
    const write = await request("POST", "/v1/memories", { headers: asSession(cookie), body: { content: "x" } });
    expect([write.status, write.body.error.message]).toEqual([403, expect.stringContaining("memory:write")]);
    await server.services.credentials.revokeApiKey(created.id);
    expect((await request("GET", "/v1/memories", { headers: asSession(cookie) })).status).toBe(401);
  });

  test("a session from a developer token ends when the token would (its cookie too)", async () => {
    const dev = await server.services.credentials.createDevToken({ userId: "kim", ttlMs: 60_000 });
    const { status, body, setCookie } = await signIn({ apiKey: dev.token });
    expect([status, body.userId, body.expiresAt]).toEqual([200, "kim", dev.expiresAt]);
    const maxAge = Number(/Max-Age=(\d+)/.exec(setCookie)![1]);
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(60);
  });

  test("a page on another origin cannot add the app's header: the CORS preflight does not allow it", async () => {
    const preflight = await fetch(`${server.url}/v1/memories`, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:5999",
        "access-control-request-method": "GET",
        "access-control-request-headers": "x-mnemo-app",
      },
    });
    expect((preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase()).not.toContain("x-mnemo-app");
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
  });

  test("a session sees only its own user's data", async () => {
    const [, secret] = await server.call("POST", "/v1/memories", {
      token: "mock-token-carol",
      body: { content: "Carol's locker code is 4312" },
    });
    const { cookie } = await signIn({ token: await link("dave") });
    const list = await request("GET", "/v1/memories", { headers: asSession(cookie) });
    expect(list.body.data.map((m: { id: string }) => m.id)).not.toContain(secret.id);
    expect((await request("GET", `/v1/memories/${secret.id}`, { headers: asSession(cookie) })).status).toBe(404);
    expect((await request("DELETE", `/v1/memories/${secret.id}`, { headers: asSession(cookie) })).status).toBe(404);
    expect(
      (
        await request("PATCH", `/v1/memories/${secret.id}`, {
          headers: asSession(cookie),
          body: { content: "mine now" },
        })
      ).status,
    ).toBe(404);
    expect((await server.call("GET", `/v1/memories/${secret.id}`, { token: "mock-token-carol" }))[1].content).toBe(
      "Carol's locker code is 4312",
    );
  });

  test("sign-out ends the session on the server: the old cookie is refused afterwards", async () => {
    const { cookie } = await signIn({ token: await link("erin") });
    const out = await request("DELETE", "/v1/app/session", { headers: asSession(cookie) });
    expect([out.status, out.body, out.headers.get("set-cookie")]).toEqual([
      200,
      { signedOut: true },
      "mnemo_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0",
    ]);
    const after = await request("GET", "/v1/memories", { headers: asSession(cookie) });
    expect([after.status, after.body.error.message]).toEqual([401, expect.stringContaining("session has ended")]);
    expect((await request("DELETE", "/v1/app/session", { headers: asSession(cookie) })).status).toBe(401);
    // A bearer caller has no session to end.
    expect((await server.call("DELETE", "/v1/app/session"))[0]).toBe(400);
  });

  test("signing in again ends the browser's previous session; a tab expecting another user is refused", async () => {
    const first = await signIn({ token: await link("quinn") });
    const second = await signIn({ token: await link("ruth") }, { cookie: first.cookie });
    expect(second.body.userId).toBe("ruth");
    expect((await request("GET", "/v1/memories", { headers: asSession(first.cookie) })).status).toBe(401);
    // The older tab still believes it is quinn's: its requests with ruth's cookie are refused, not served as ruth.
    const stale = await request("GET", "/v1/memories", {
      headers: asSession(second.cookie, { "x-mnemo-user": "quinn" }),
    });
    expect([stale.status, stale.body.error.message]).toEqual([
      401,
      expect.stringContaining("signed in again as another user"),
    ]);
    expect(
      (await request("GET", "/v1/memories", { headers: asSession(second.cookie, { "x-mnemo-user": "ruth" }) })).status,
    ).toBe(200);
  });

  test("a session ends after 12 hours unused, and 7 days after sign-in whatever its use", async () => {
    const idle = await createAppSessions(server.services.store, () => Date.now() - SESSION_IDLE_MS - 60_000).create({
      userId: "finn",
      scopes: ["memory:read"],
      via: "link",
    });
    expect((await request("GET", "/v1/memories", { headers: asSession(`mnemo_session=${idle.id}`) })).status).toBe(401);

    const old = await createAppSessions(server.services.store, () => Date.now() - SESSION_ABSOLUTE_MS - 60_000).create({
      userId: "finn",
      scopes: ["memory:read"],
      via: "link",
    });
    // Used a minute ago: only its absolute end is past.
    const recent = new Date(Date.now() - 60_000).toISOString();
    await run(
      server.services.store.db,
      sql`UPDATE app_sessions SET last_seen_at = ${recent} WHERE id_hash = ${hashSecret(old.id)}`,
    );
    expect((await request("GET", "/v1/memories", { headers: asSession(`mnemo_session=${old.id}`) })).status).toBe(401);

    const live = await createAppSessions(server.services.store, () => Date.now() - SESSION_IDLE_MS + 60_000).create({
      userId: "finn",
      scopes: ["memory:read"],
      via: "link",
    });
    expect((await request("GET", "/v1/memories", { headers: asSession(`mnemo_session=${live.id}`) })).status).toBe(200);
  });

  test("the store keeps only hashes, and no session secret, link token or pasted key reaches a log line", async () => {
    const token = await link("gus");
    const key = (await server.services.credentials.createApiKey({ userId: "gus", scopes: ["memory:read"] })).key;
    const fromLink = await signIn({ token });
    const fromKey = await signIn({ apiKey: key });
    const secrets = [token, key, fromLink.cookie.split("=")[1], fromKey.cookie.split("=")[1]];
    // Failures too: a reused link, a bad body, a refused cookie.
    await signIn({ token });
    await request("POST", "/v1/app/session", { headers: APP, body: { token, apiKey: key } });
    await request("GET", "/v1/memories", { headers: { cookie: fromLink.cookie } });
    const rows = [
      ...(await all(server.services.store.db, sql`SELECT * FROM app_sessions WHERE user_id = ${"gus"}`)),
      ...(await all(server.services.store.db, sql`SELECT * FROM app_sign_in_links WHERE user_id = ${"gus"}`)),
    ];
    expect(rows.length).toBe(3);
    const stored = JSON.stringify(rows);
    expect(stored).toContain(hashSecret(secrets[2]));
    expect(secrets.filter((secret) => stored.includes(secret))).toEqual([]);
    expect(logLines.length).toBeGreaterThan(0);
    expect(secrets.filter((secret) => logLines.some((line) => line.includes(secret)))).toEqual([]);
  });

  test("the body takes exactly one of token and apiKey, and nothing else", async () => {
    for (const body of [{}, { token: "a", apiKey: "b" }, { token: "a", extra: 1 }, { token: "" }]) {
      const answer = await request("POST", "/v1/app/session", { headers: APP, body });
      expect([JSON.stringify(body), answer.status, answer.body.error.code]).toEqual([
        JSON.stringify(body),
        400,
        "invalid_request",
      ]);
    }
  });

  test("`mnemo open` prints a link to /app whose token (in the fragment) signs in once", async () => {
    const { exitCode, stdout, stderr } = await runCli([
      "open",
      "--user",
      "hana",
      "--data",
      server.dataDir,
      "--url",
      server.url,
    ]);
    expect([exitCode, stderr]).toEqual([0, expect.stringContaining("works once")]);
    const match = new RegExp(`^${server.url.replace(/[.]/g, "\\.")}/app/#signin=([A-Za-z0-9]{43})\\n$`).exec(stdout);
    expect(match).not.toBeNull();
    expect((await signIn({ token: match![1] })).body.userId).toBe("hana");
    expect((await signIn({ token: match![1] })).status).toBe(401);
    const json = await runCli([
      "open",
      "--user",
      "hana",
      "--data",
      server.dataDir,
      "--url",
      `${server.url}/app/`,
      "--json",
    ]);
    expect(JSON.parse(json.stdout)).toEqual({
      userId: "hana",
      url: expect.stringMatching(new RegExp(`^${server.url}/app/#signin=`)),
      expiresAt: expect.any(String),
    });
    expect((await runCli(["open", "--user", "hana", "--url", "ftp://x", "--data", server.dataDir])).stderr).toContain(
      "--url",
    );
  });
});

describe(`\`mnemo serve\` and \`mnemo open\` on ${backend}`, () => {
  test("serve prints the app's URL and the open command for it; that command's link signs in", async () => {
    const dataDir = tempDir("mnemo-serve-app-");
    const proc = Bun.spawn(
      [process.execPath, join(import.meta.dir, "..", "cli", "mnemo.ts"), "serve", "--port", "0", "--data", dataDir],
      {
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/tmp",
          EMBEDDINGS_PROVIDER: "none",
          MNEMO_LOG_LEVEL: "warn",
          ...(await databaseEnvFor(dataDir)),
        },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    try {
      const reader = proc.stdout.getReader();
      let out = "";
      while (!/Web app: .*\n/.test(out)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`serve exited: ${await new Response(proc.stderr).text()}`);
        out += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      const url = /listening on (\S+)/.exec(out)![1];
      const line = /Web app: (\S+)\s+\(sign in: (mnemo open .*)\)\n/.exec(out)!;
      expect(line[1]).toBe(`${url}/app/`);
      expect(line[2]).toBe(`mnemo open --user <id> --data ${dataDir} --url ${url}`);
      const args = line[2].replace("<id>", "pia").split(" ").slice(1);
      const opened = await runCli([...args, "--json"]);
      const token = new URL(JSON.parse(opened.stdout).url).hash.replace("#signin=", "");
      const answer = await fetch(`${url}/v1/app/session`, {
        method: "POST",
        headers: { "content-type": "application/json", ...APP },
        body: JSON.stringify({ token }),
      });
      expect([answer.status, ((await answer.json()) as { userId: string }).userId]).toEqual([200, "pia"]);
      expect((await fetch(`${url}/app/`)).status).toBe(200);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dataDir, { recursive: true, force: true });
      await dropDatabaseFor(dataDir);
    }
  });
});

describe(`what the app calls on ${backend}`, () => {
  test("API keys: a link session lists, creates (secret once) and revokes its own; an API key cannot manage keys", async () => {
    const { cookie } = await signIn({ token: await link("ivy") });
    const headers = asSession(cookie);
    const created = await request("POST", "/v1/keys", {
      headers,
      body: { name: "laptop agent", scopes: ["memory:read", "memory:write"] },
    });
    expect([created.status, created.body.name, created.body.scopes, created.body.key]).toEqual([
      201,
      "laptop agent",
      ["memory:read", "memory:write"],
      expect.stringMatching(/^svc_sk_live_/),
    ]);
    expect((await server.call("GET", "/v1/memories", { token: created.body.key }))[0]).toBe(200);
    const listed = await request("GET", "/v1/keys", { headers });
    expect(listed.body.data.map((k: { id: string }) => k.id)).toEqual([created.body.id]);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);

    // Neither the key itself nor a session made from it manages keys.
    expect((await server.call("GET", "/v1/keys", { token: created.body.key }))[0]).toBe(403);
    expect((await server.call("POST", "/v1/keys", { token: created.body.key, body: { name: "successor" } }))[0]).toBe(
      403,
    );
    const keySession = await signIn({ apiKey: created.body.key });
    expect(
      (await request("POST", "/v1/keys", { headers: asSession(keySession.cookie), body: { name: "successor" } }))
        .status,
    ).toBe(403);

    // Another user's key is unknown to jack.
    const jack = await signIn({ token: await link("jack") });
    expect((await request("GET", "/v1/keys", { headers: asSession(jack.cookie) })).body.data).toEqual([]);
    expect((await request("DELETE", `/v1/keys/${created.body.id}`, { headers: asSession(jack.cookie) })).status).toBe(
      404,
    );
    expect((await server.call("GET", "/v1/memories", { token: created.body.key }))[0]).toBe(200);

    expect((await request("DELETE", `/v1/keys/${created.body.id}`, { headers })).body).toEqual({
      id: created.body.id,
      revoked: true,
    });
    expect((await server.call("GET", "/v1/memories", { token: created.body.key }))[0]).toBe(401);
    expect((await request("GET", "/v1/keys", { headers })).body.data).toEqual([]);
    expect((await request("POST", "/v1/keys", { headers, body: { name: "x", scopes: ["admin"] } })).status).toBe(400);
  });

  test("PATCH /v1/memories/:id edits content and metadata; search finds the new text", async () => {
    const [, memory] = await server.call("POST", "/v1/memories", {
      token: "mock-token-lena",
      body: { content: "The heron nests by the mill", metadata: { topic: "birds" } },
    });
    const [status, edited] = await server.call("PATCH", `/v1/memories/${memory.id}`, {
      token: "mock-token-lena",
      body: { content: "The egret nests by the weir" },
    });
    // updatedAt moves (or stays, within the same millisecond); createdAt stays.
    expect([status, edited.content, edited.metadata, edited.createdAt, edited.updatedAt >= memory.updatedAt]).toEqual([
      200,
      "The egret nests by the weir",
      { topic: "birds" },
      memory.createdAt,
      true,
    ]);
    const [, meta] = await server.call("PATCH", `/v1/memories/${memory.id}`, {
      token: "mock-token-lena",
      body: { metadata: { topic: "wading birds" } },
    });
    expect([meta.content, meta.metadata]).toEqual(["The egret nests by the weir", { topic: "wading birds" }]);
    for (const body of [{}, { content: "   " }, { status: "archived" }]) {
      expect([
        JSON.stringify(body),
        (await server.call("PATCH", `/v1/memories/${memory.id}`, { token: "mock-token-lena", body }))[0],
      ]).toEqual([JSON.stringify(body), 400]);
    }
    // At once: a search includes the edit whether or not the index has it yet; the old text is gone.
    const search = async (query: string) =>
      (
        await server.call("POST", "/v1/memories/search", {
          token: "mock-token-lena",
          body: { query, signals: ["text"] },
        })
      )[1].results.map((h: { id: string }) => h.id);
    expect(await search("egret")).toEqual([memory.id]);
    expect(await search("heron")).toEqual([]);
  });

  test("the memory list filters by workspace, session and time", async () => {
    const token = "mock-token-mona";
    const [, workspace] = await server.call("POST", "/v1/workspaces", { token, body: { name: "Garden" } });
    // Times of their own, an hour apart: the bounds below never depend on how fast the writes ran.
    const [, a] = await server.call("POST", "/v1/memories", {
      token,
      body: { content: "a", workspaceId: workspace.id, session_id: "s1", timestamp: "2026-03-01T10:00:00Z" },
    });
    const [, b] = await server.call("POST", "/v1/memories", {
      token,
      body: { content: "b", workspaceId: workspace.id, timestamp: "2026-03-01T11:00:00Z" },
    });
    const [, c] = await server.call("POST", "/v1/memories", {
      token,
      body: { content: "c", session_id: "s1", timestamp: "2026-03-01T12:00:00Z" },
    });
    const ids = async (query: string) =>
      (await server.call("GET", `/v1/memories?${query}`, { token }))[1].data.map((m: { id: string }) => m.id);
    expect(await ids(`workspaceId=${workspace.id}`)).toEqual([b.id, a.id]);
    expect(await ids("session_id=s1")).toEqual([c.id, a.id]);
    expect(await ids(`workspaceId=${workspace.id}&session_id=s1`)).toEqual([a.id]);
    expect(await ids(`from=${encodeURIComponent(b.createdAt)}`)).toEqual([c.id, b.id]);
    expect(await ids(`to=${encodeURIComponent(b.createdAt)}`)).toEqual([b.id, a.id]);
    const today = a.createdAt.slice(0, 10);
    expect(await ids(`from=${today}&to=${today}`)).toEqual([c.id, b.id, a.id]);
    expect(await ids("to=2000-01-01")).toEqual([]);
    // Paging keeps the filter.
    const [, page] = await server.call("GET", `/v1/memories?session_id=s1&limit=1`, { token });
    expect(
      (await server.call("GET", `/v1/memories?session_id=s1&limit=1&cursor=${page.nextCursor}`, { token }))[1].data.map(
        (m: { id: string }) => m.id,
      ),
    ).toEqual([a.id]);
    for (const bad of ["from=yesterday", "to=2024-13-45", `from=${today}T10:00:00Z&to=2000-01-01`]) {
      const [status, body] = await server.call("GET", `/v1/memories?${bad}`, { token });
      expect([bad, status, body.error.message]).toEqual([bad, 400, expect.stringMatching(/^(from|to): /)]);
    }
    // Another user's workspace answers as a missing one.
    expect(
      (await server.call("GET", `/v1/memories?workspaceId=${workspace.id}`, { token: "mock-token-nina" }))[0],
    ).toBe(404);
    expect((await server.call("GET", "/v1/memories?workspaceId=ws_missing", { token }))[0]).toBe(404);
  });

  test("GET /v1/usage/daily answers every day of the month so far, zero without use", async () => {
    const [status, body] = await server.call("GET", "/v1/usage/daily", { token: "mock-token-olga" });
    const today = new Date().toISOString().slice(0, 10);
    expect([status, body.month, body.days.length, body.days.at(-1)]).toEqual([
      200,
      today.slice(0, 7),
      Number(today.slice(8)),
      { day: today, totalTokens: 0, requestCount: 0 },
    ]);
  });
});
