import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { errorResponses } from "../shared/error-body";
import { decryptPlugin, type EncryptionOptions } from "../crypto/plugin";
import { createRouter } from "../lib/router";
import { WorkspaceParams } from "../shared/schemas";
import { PageQuery } from "../shared/pagination";
import {
  ARTIFACT_BODY_LIMIT,
  BlockIndexBody,
  BlockIndexEnvelope,
  ClearResult,
  DerivedBlockIndex,
  EdgesBody,
  EdgesEnvelope,
  LegacyIndexStatus,
  ManifestBody,
  ManifestEnvelope,
  ReindexResult,
} from "./model";
import type { DerivedIndexService } from "./service";

const tags = ["derived index"];
const base = "/v1/workspaces/:workspaceId";
const params = WorkspaceParams;

/** Routes of the derived index and manifests (docs/api.md#derived-index-and-manifests) (files come with the files feature). */
export function derivedIndexRoutes(auth: AuthService, index: DerivedIndexService, encryption: EncryptionOptions) {
  return createRouter()
    .use(authPlugin(auth))
    .use(decryptPlugin(encryption))
    .get(`${base}/index/status`, async ({ principal, params }) => index.status(principal.userId, params.workspaceId), {
      auth: "memory:read",
      decrypt: true,
      params,
      response: { 200: LegacyIndexStatus, ...errorResponses() },
      detail: { tags, summary: "Index status of the workspace (LegacyIndexStatus)" },
    })
    .get(
      `${base}/index/raw`,
      async ({ principal, params, query }) => index.raw(principal.userId, params.workspaceId, query),
      {
        auth: "memory:read",
        decrypt: true,
        params,
        query: PageQuery,
        response: { 200: DerivedBlockIndex, ...errorResponses() },
        detail: {
          tags,
          summary:
            "The raw index, a page of documents at a time (?limit= default 50, at most 200; ?cursor=): every block the server indexes",
        },
      },
    )
    .post(`${base}/index/clear`, async ({ principal, params }) => index.clear(principal.userId, params.workspaceId), {
      auth: "memory:write",
      decrypt: true,
      params,
      response: { 200: ClearResult, ...errorResponses() },
      detail: { tags, summary: "Remove the workspace's documents from the index (documents stay stored)" },
    })
    .post(`${base}/reindex`, async ({ principal, params }) => index.reindex(principal.userId, params.workspaceId), {
      auth: "memory:write",
      decrypt: true,
      params,
      response: { 200: ReindexResult, ...errorResponses() },
      detail: { tags, summary: "Rebuild the workspace's index from its stored documents" },
    })
    .get(
      `${base}/vector-manifest`,
      async ({ principal, params }) => ({ manifest: await index.manifest(principal.userId, params.workspaceId) }),
      {
        auth: "memory:read",
        decrypt: true,
        params,
        response: { 200: ManifestEnvelope, ...errorResponses() },
        detail: { tags, summary: "The stored vector manifest, else a derived one" },
      },
    )
    .put(
      `${base}/vector-manifest`,
      async ({ principal, params, body }) => ({
        manifest: await index.putManifest(principal.userId, params.workspaceId, body.manifest),
      }),
      {
        auth: "memory:write",
        decrypt: true,
        params,
        body: ManifestBody,
        bodyLimit: ARTIFACT_BODY_LIMIT,
        response: { 200: ManifestEnvelope, ...errorResponses() },
        detail: { tags, summary: "Store the vector manifest (at most 5 MB)" },
      },
    )
    .get(
      `${base}/search/block-index`,
      async ({ principal, params }) => ({ index: await index.blockIndex(principal.userId, params.workspaceId) }),
      {
        auth: "memory:read",
        decrypt: true,
        params,
        response: { 200: BlockIndexEnvelope, ...errorResponses() },
        detail: { tags, summary: "The stored block index, else the derived one" },
      },
    )
    .put(
      `${base}/search/block-index`,
      async ({ principal, params, body }) => ({
        index: await index.putBlockIndex(principal.userId, params.workspaceId, body.index),
      }),
      {
        auth: "memory:write",
        decrypt: true,
        params,
        body: BlockIndexBody,
        bodyLimit: ARTIFACT_BODY_LIMIT,
        response: { 200: BlockIndexEnvelope, ...errorResponses() },
        detail: { tags, summary: "Store the block index (at most 5 MB)" },
      },
    )
    .get(
      `${base}/graph/block-edges`,
      async ({ principal, params }) => ({ edges: await index.edges(principal.userId, params.workspaceId) }),
      {
        auth: "memory:read",
        decrypt: true,
        params,
        response: { 200: EdgesEnvelope, ...errorResponses() },
        detail: { tags, summary: "The stored block edges, else edges derived from [[wiki links]] and ((block refs))" },
      },
    )
    .put(
      `${base}/graph/block-edges`,
      async ({ principal, params, body }) => ({
        edges: await index.putEdges(principal.userId, params.workspaceId, body.edges),
      }),
      {
        auth: "memory:write",
        decrypt: true,
        params,
        body: EdgesBody,
        bodyLimit: ARTIFACT_BODY_LIMIT,
        response: { 200: EdgesEnvelope, ...errorResponses() },
        detail: { tags, summary: "Store the block edges (at most 5 MB)" },
      },
    );
}
