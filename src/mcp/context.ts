import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ValidationError } from "elysia";
import type { Scope } from "../auth/scopes";
import { ALL_SCOPES } from "../auth/scopes";
import { AppError, badRequest, forbidden } from "../shared/app-error";
import { describeValidation } from "../shared/validation";
import type { Logger } from "../lib/log";
import { findNul, NUL_PROBLEM } from "../lib/nul-text";
import type { ChatService } from "../chats/service";
import type { Config } from "../config";
import type { ContextService } from "../context/service";
import type { ClientKeys } from "../crypto/client-keys";
import type { DocumentService } from "../documents/service";
import type { DocumentsQueryService } from "../documents-query/service";
import type { FormationService } from "../formation/service";
import type { MemoryService } from "../memories/service";
import type { WorkspaceService } from "../workspaces/service";

/** What an MCP tool handler is given besides its arguments (the SDK's `extra`, narrowed to what we read). */
export interface ToolExtra {
  authInfo?: { scopes: string[] };
}

/** The services the MCP server calls directly (never over HTTP). */
export interface McpServices {
  memories: MemoryService;
  /** Memory formation (extract_memories). */
  formation: FormationService;
  context: ContextService;
  documentsQuery: DocumentsQueryService;
  documents: DocumentService;
  chats: ChatService;
  workspaces: WorkspaceService;
  clientKeys: ClientKeys;
  config: Config;
}

/**
 * The key a writing tool seals with: none, unless the server runs in reverse-proxy mode
 * (`MNEMO_PROXY_ENCRYPTION=1`), where every payload is stored encrypted with the user's
 * escrowed key and a user without one cannot write (as over REST without `X-Client-Key`).
 */
export async function proxyWriteKey(services: McpServices, userId: string): Promise<Buffer | undefined> {
  if (!services.config.encryption.proxyMode) return undefined;
  const key = await services.clientKeys.resolve(userId, null);
  if (!key)
    throw badRequest(
      "this server encrypts every write (reverse-proxy mode); escrow a client key first (mnemo escrow set)",
    );
  return key;
}

/**
 * Who one MCP session acts for. Over HTTP the scopes are those of the bearer credential of
 * the request being served (re-checked on every request, so a revoked key stops at once);
 * over stdio the local user who started the process holds them all.
 */
export interface McpPrincipal {
  userId: string;
  /** `--workspace`: used by every tool whose `workspace_id` is omitted. */
  defaultWorkspaceId?: string;
  /** How the session is served: what a caller can do about a missing workspace differs. */
  via: "stdio" | "http";
  scopesOf(extra: ToolExtra): ReadonlySet<Scope>;
}

export const ALL = new Set<Scope>(ALL_SCOPES);
/** Over HTTP: the scopes the transport plugin put into `authInfo`, none when absent. */
export const scopesFromAuthInfo = (extra: ToolExtra): ReadonlySet<Scope> =>
  new Set((extra.authInfo?.scopes ?? []) as Scope[]);

export interface McpContext {
  services: McpServices;
  principal: McpPrincipal;
  log: Logger;
}

/** Same check and message as the REST auth macro's `requireScope`. */
export function requireScopes(principal: McpPrincipal, extra: ToolExtra, scopes: readonly Scope[]): void {
  const held = principal.scopesOf(extra);
  const missing = scopes.find((scope) => !held.has(scope));
  if (missing) throw forbidden(`this credential lacks the '${missing}' scope`);
}

/**
 * Checks a REST body built from tool arguments against the REST route's own TypeBox
 * schema, so limits and messages are those of the REST API (400 naming the field).
 */
export function checkBody<S extends TSchema>(schema: S, body: unknown): S["static"] {
  if (!Value.Check(schema, body)) throw badRequest(describeValidation(new ValidationError("body", schema, body)));
  return body;
}

/** The REST error body of an error: an AppError as it is, anything else as a generic 500 that leaks nothing. */
export function errorBody(error: unknown, log: Logger, where: string): { code: string; message: string } {
  if (error instanceof AppError) return { code: error.errorCode, message: error.message };
  log.error("mcp handler failed", { where, error: error as Error });
  return { code: "error", message: "internal error" };
}

/**
 * Runs a tool: a failure becomes an MCP error result carrying the REST error body
 * (`{"error":{"code","message"}}`), so the session carries on. Arguments holding U+0000
 * are refused first, as REST refuses them (nul-text.ts), naming the argument.
 */
export async function runTool<T extends Record<string, unknown>>(
  ctx: McpContext,
  name: string,
  args: unknown,
  fn: () => Promise<T>,
): Promise<CallToolResult> {
  try {
    const nulAt = findNul(args, "arguments");
    if (nulAt !== null) throw badRequest(`${nulAt}: ${NUL_PROBLEM}`);
    const result = await fn();
    return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
  } catch (error) {
    // No structuredContent on errors: the client checks it against the tool's output schema.
    return {
      isError: true,
      content: [{ type: "text", text: JSON.stringify({ error: errorBody(error, ctx.log, name) }) }],
    };
  }
}

/** Resource reads answer JSON-RPC errors; the REST code and message travel in `data`. */
export function toMcpError(error: unknown, log: Logger, where: string): McpError {
  if (error instanceof McpError) return error;
  const body = errorBody(error, log, where);
  const code =
    body.code === "not_found"
      ? -32002 /* resource not found, per the MCP spec */
      : body.code === "error"
        ? ErrorCode.InternalError
        : ErrorCode.InvalidRequest;
  return new McpError(code, `${body.code}: ${body.message}`, { error: body });
}

/** The workspace of a call: the argument, else the session's `--workspace`, else none. */
export function workspaceOf(principal: McpPrincipal, given: string | undefined): string | undefined {
  return given ?? principal.defaultWorkspaceId;
}

/** The workspace of a call that needs one. */
export function requireWorkspace(principal: McpPrincipal, given: string | undefined): string {
  const id = workspaceOf(principal, given);
  if (id) return id;
  throw badRequest(
    principal.via === "stdio"
      ? "workspace_id: is required (or start `mnemo mcp` with --workspace)"
      : "workspace_id: is required; this session has no default workspace, so pass the id of one of your workspaces (resources/list names them)",
  );
}
