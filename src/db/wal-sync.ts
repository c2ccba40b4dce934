import { closeSync, fsync, openSync, statSync } from "node:fs";

/**
 * Makes the SQLite write-ahead log durable off the event loop. The store runs with
 * `synchronous = NORMAL` (a COMMIT writes the WAL but does not fsync it) and then fsyncs
 * the WAL file itself through Node's thread pool before it acknowledges the commit: every
 * acknowledged commit is on disk, as with `synchronous = FULL`, without the main thread
 * blocked in the fsync (docs/performance.md#why-the-code-is-tuned-as-it-is). Other statements may
 * read a committed write while its fsync runs, before its writer is answered.
 */
export class WalSync {
  private fd: number | null = null;
  private inode = 0;
  private inFlight = 0;
  private closeWhenIdle = false;

  constructor(private readonly path: string) {}

  /** Resolves once everything written to the WAL so far is on disk. */
  sync(): Promise<void> {
    let fd: number;
    try {
      fd = this.open();
    } catch (error) {
      // No WAL file: nothing was written since it was last checkpointed and removed.
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return Promise.resolve();
      return Promise.reject(error);
    }
    this.inFlight++;
    return new Promise<void>((resolve, reject) =>
      fsync(fd, (error) => {
        this.inFlight--;
        if (this.closeWhenIdle && this.inFlight === 0) this.close();
        if (error) reject(error);
        else resolve();
      }),
    );
  }

  /** The WAL file's descriptor, opened again when SQLite replaced the file (another inode). */
  private open(): number {
    const inode = statSync(this.path).ino;
    if (this.fd !== null && inode === this.inode) return this.fd;
    if (this.fd !== null && this.inFlight === 0) closeSync(this.fd);
    this.fd = openSync(this.path, "r+");
    this.inode = inode;
    return this.fd;
  }

  close(): void {
    if (this.inFlight > 0) {
      this.closeWhenIdle = true;
      return;
    }
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
