import type { Logger } from "../../lib/log";
import type { JobRunner } from "./job-runner";
import type { LanceStore } from "../lance/lance-store";

/**
 * ANN index builds of owners' vector tables, one at a time, beside the serial index
 * writes (a build takes seconds; the text stage goes on meanwhile). A table is
 * considered once it has been written and holds `minRows` vectors.
 */
export class VectorIndexBuilds {
  private build: Promise<void> | null = null;

  constructor(
    private readonly o: {
      lance: LanceStore;
      log: Logger;
      runner: JobRunner;
      minRows: number;
      onDone: () => void;
      building: (table: string | null) => void;
    },
    /** Vector tables written since they were last considered. */
    private readonly written: Set<string>,
  ) {}

  get running(): boolean {
    return this.build !== null;
  }

  /** Starts a build for the first written table that needs one, unless one runs. */
  async maybeStart(): Promise<void> {
    const { lance, log, runner } = this.o;
    if (this.build) return;
    let table: string | null = null;
    for (const name of this.written) {
      this.written.delete(name);
      if ((await lance.countRows(name)) >= this.o.minRows && !(await lance.hasVectorIndex(name))) {
        table = name;
        break;
      }
    }
    if (!table) return;
    log.info("building a vector index", { table });
    const started = Date.now();
    const build = runner.runBeside(() => lance.createVectorIndex(table));
    if (!build) return;
    this.o.building(table);
    this.build = build
      .then(() => log.info("vector index ready", { table, seconds: (Date.now() - started) / 1000 }))
      .catch((error) => log.warn("vector index build failed; exact search continues", { error }))
      .finally(() => {
        this.build = null;
        this.o.building(null);
        this.o.onDone();
      });
  }

  /** Resolves when no build runs and no written table needs one (builds run one after another). */
  async settled(): Promise<void> {
    for (;;) {
      while (this.build) await this.build;
      await this.maybeStart();
      if (!this.build) return;
    }
  }
}
