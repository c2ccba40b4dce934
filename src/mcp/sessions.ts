import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

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
  /** A session without a request for this long is closed. */
  idleMs: number;
}

/**
 * The open HTTP sessions, each bound to the user that opened it. A session id is only
 * found for that user: presented by anyone else it does not exist.
 */
export function createSessionRegistry(limits: SessionLimits, now: () => number = Date.now) {
  const sessions = new Map<string, McpSession>();

  async function close(session: McpSession): Promise<void> {
    sessions.delete(session.id);
    await session.server.close().catch(() => {});
  }

  return {
    get size() {
      return sessions.size;
    },

    /** The session of this id, if it is this user's; touching it keeps it alive. */
    find(id: string, userId: string): McpSession | undefined {
      const session = sessions.get(id);
      if (!session || session.userId !== userId) return undefined;
      session.lastSeen = now();
      return session;
    },

    /** Adds a session, first closing the user's least recently used ones beyond the bound. */
    async add(session: Omit<McpSession, "lastSeen">): Promise<void> {
      const mine = [...sessions.values()].filter((s) => s.userId === session.userId).sort((a, b) => a.lastSeen - b.lastSeen);
      for (const old of mine.slice(0, Math.max(0, mine.length - limits.maxPerUser + 1))) await close(old);
      sessions.set(session.id, { ...session, lastSeen: now() });
    },

    /** Forgets a session whose transport closed (DELETE, or closed here). */
    forget(id: string): void {
      sessions.delete(id);
    },

    /** Closes every session idle for longer than the limit; returns how many. */
    async sweep(): Promise<number> {
      const cutoff = now() - limits.idleMs;
      const idle = [...sessions.values()].filter((s) => s.lastSeen < cutoff);
      for (const session of idle) await close(session);
      return idle.length;
    },

    async closeAll(): Promise<void> {
      for (const session of [...sessions.values()]) await close(session);
    },
  };
}
export type SessionRegistry = ReturnType<typeof createSessionRegistry>;
