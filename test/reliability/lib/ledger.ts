/**
 * What the crash loop's writers were told: every write is "pending" while in flight,
 * "acked" once the server answered 2xx, and "uncertain" when the server died first
 * (it may or may not have happened). After a restart, what the server holds is compared
 * with this ledger, and uncertain entries are settled to what the server shows.
 */

export type State = "acked" | "uncertain";

export interface MemoryEntry {
  content: string;
  token: string;
  created: State;
  deleted?: State;
}

export interface DocumentEntry {
  workspaceId: string;
  created: State;
  /** Versions written: the last acked one must be what the server holds, unless a later uncertain one landed. */
  versions: Array<{ token: string; state: State }>;
  deleted?: State;
}

export interface ThreadEntry {
  workspaceId: string;
  acked: Set<string>;
  uncertain: number;
}

export class Ledger {
  memories = new Map<string, MemoryEntry>();
  documents = new Map<string, DocumentEntry>();
  threads = new Map<string, ThreadEntry>();
  acked = 0;

  /** Runs a write: acked on 2xx, uncertain when the connection died, thrown on a 4xx/5xx. */
  async write(
    send: () => Promise<Response>,
    onAck: (body: any) => void,
    onUncertain: () => void,
    allowed: number[] = [],
  ): Promise<void> {
    let response: Response;
    try {
      response = await send();
    } catch {
      onUncertain();
      return;
    }
    let body: any = null;
    try {
      body = await response.json();
    } catch {
      // the server died while sending the body: the write may have committed
      onUncertain();
      return;
    }
    if (response.status >= 200 && response.status < 300) {
      this.acked++;
      onAck(body);
      return;
    }
    if (allowed.includes(response.status)) return;
    // 503 while the store of record is briefly away is a clean refusal: not acknowledged.
    if (response.status === 503) {
      onUncertain();
      return;
    }
    throw new Error(`write answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
}
