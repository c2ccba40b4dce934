/** What a workspace tab is given: the workspace, the item the URL names, where to render, when to stop. */
import type { Workspace } from "../api-types";

export interface TabContext {
  workspace: Workspace;
  itemId?: string;
  container: HTMLElement;
  signal: AbortSignal;
}
