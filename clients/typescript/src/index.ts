export {
  Mnemo,
  WorkspaceClient,
  type Body,
  type FileInfo,
  type Memory,
  type MemoryVersion,
  type Query,
  type Result,
  type SearchResults,
  type Workspace,
} from "./client.js";
export { MnemoError } from "./errors.js";
export { paginate } from "./pagination.js";
export type { ClientOptions } from "./transport.js";
export * from "./generated.js";
