import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createScheduler, type ScheduledTask, type Scheduler } from "../lib/scheduler";

export interface McpSession {
  id: string;
  userId: string;
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
}

export interface SessionLimits {
  /** Open sessions one user may hold; opening one more closes that user's least recently used. */
  maxPerUser: number;
  /** Open sessions in all; opening one more closes the least recently used of anyone's. */
  maxTotal: number;
  /** A session without a request for this long is closed. */
  idleMs: number;
}

/**
 * What one open session keeps in memory: its MCP server with every tool, resource and
 * prompt registered, and its transport. Measured at 43 KB of heap and 59 KB of RSS per
 * session (1,000 sessions of 100 users, after a full GC); rounded up.
 */
export const SESSION_BYTES_ESTIMATE = 64 * 1024;
/** The memory all open sessions may take together: with the estimate above, 1,024 sessions. */
export const SESSION_MEMORY_BUDGET = 64 * 1024 * 1024;
/** How often idle sessions are looked for (at most; sooner when the idle limit is shorter). */
const SWEEP_EVERY_MS = 60_000;

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  maxPerUser: 16,
  maxTotal: Math.floor(SESSION_MEMORY_BUDGET / SESSION_BYTES_ESTIMATE),
  idleMs: 30 * 60_000,
};

/**
 * The open HTTP sessions, each bound to the user that opened it. A session id is only
 * found for that user: presented by anyone else it does not exist.
 *
 * Bounded per user and in all (by memory, see SESSION_BYTES_ESTIMATE): the least recently
 * used session goes first. Its idle sweeper is a task of `scheduler` (the server's one
 * owner of timers; a registry of its own when none is given), scheduled only while
 * sessions are open and cancelled for good at `close`.
 */
export function createSessionRegistry(
  limits: SessionLimits,
  now: () => number = Date.now,
  scheduler: Scheduler = createScheduler(),
) {
  // In order of last use, oldest first: a touched session is moved to the end.
  const sessions = new Map<string, McpSession>();
  const perUser = new Map<string, number>();
  let sweeper: ScheduledTask | null = null;
  let closed = false;

  function forget(id: string): McpSession | undefined {
    const session = sessions.get(id);
    if (!session) return undefined;
    sessions.delete(id);
    const left = (perUser.get(session.userId) ?? 1) - 1;
    if (left > 0) perUser.set(session.userId, left);
    else perUser.delete(session.userId);
    if (sessions.size === 0) stopSweeping();
    return session;
  }

  async function close(session: McpSession): Promise<void> {
    forget(session.id);
    await session.server.close().catch(() => {});
  }

  function oldest(userId?: string): McpSession | undefined {
    for (const session of sessions.values()) if (userId === undefined || session.userId === userId) return session;
    return undefined;
  }

  async function sweep(): Promise<number> {
    const cutoff = now() - limits.idleMs;
    const idle = [...sessions.values()].filter((s) => s.lastSeen < cutoff);
    for (const session of idle) await close(session);
    return idle.length;
  }

  function startSweeping(): void {
    if (sweeper || closed) return;
    sweeper = scheduler.every(Math.min(SWEEP_EVERY_MS, limits.idleMs), "mcp-session-sweep", () =>
      sweep().catch(() => {}),
    );
  }

  function stopSweeping(): void {
    sweeper?.cancel();
    sweeper = null;
  }

  return {
    get size() {
      return sessions.size;
    },

    /** What the open sessions are estimated to hold in memory. */
    get estimatedBytes() {
      return sessions.size * SESSION_BYTES_ESTIMATE;
    },

    /** Whether the idle sweeper is scheduled (only while sessions are open, never after `close`). */
    get sweeping() {
      return sweeper !== null;
    },

    /** The session of this id, if it is this user's; touching it keeps it alive. */
    find(id: string, userId: string): McpSession | undefined {
      const session = sessions.get(id);
      if (!session || session.userId !== userId) return undefined;
      session.lastSeen = now();
      sessions.delete(id);
      sessions.set(id, session);
      return session;
    },

    /** Adds a session, first closing the least recently used ones beyond the user's and the total bound. */
    async add(session: Omit<McpSession, "lastSeen">): Promise<void> {
      if (closed) {
        await session.server.close().catch(() => {});
        return;
      }
      while ((perUser.get(session.userId) ?? 0) >= limits.maxPerUser) await close(oldest(session.userId)!);
      while (sessions.size >= limits.maxTotal) await close(oldest()!);
      sessions.set(session.id, { ...session, lastSeen: now() });
      perUser.set(session.userId, (perUser.get(session.userId) ?? 0) + 1);
      startSweeping();
    },

    /** Forgets a session whose transport closed (DELETE, or closed here). */
    forget(id: string): void {
      forget(id);
    },

    /** Closes every session idle for longer than the limit; returns how many. */
    sweep,

    /** Stops the sweeper and closes every session; a session added afterwards is closed at once. */
    async close(): Promise<void> {
      closed = true;
      stopSweeping();
      for (const session of [...sessions.values()]) await close(session);
    },
  };
}
export type SessionRegistry = ReturnType<typeof createSessionRegistry>;
