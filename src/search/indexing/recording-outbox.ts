import type { Store } from "../../db/store";
import type { Logger } from "../../lib/log";
import type { SearchSources } from "../types";
import { createOutbox, type Outbox } from "./outbox-repository";
import { createTermStats } from "./term-stats";

/**
 * The outbox of a process that writes records without the search side around it (the
 * CLI's import): it analyses what it records as the server's outbox does, so a running
 * server's searches count and find it at once.
 */
export function createRecordingOutbox(store: Store, sources: SearchSources, log: Logger): Outbox {
  return createOutbox(store, createTermStats({ sources, log }).refresh);
}
