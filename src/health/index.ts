import { t } from "elysia";
import { createRouter } from "../lib/router";

export interface HealthInfo {
  status: "ok";
  store: "sqlite" | "postgres";
  index: { uri: string; writer: boolean; replicaId: string; writerId: string | null };
}

const HealthInfo = t.Object({
  status: t.Literal("ok"),
  store: t.Union([t.Literal("sqlite"), t.Literal("postgres")], { description: "the engine of the store of record" }),
  index: t.Object({
    uri: t.String({ description: "where the search index lives (a directory or s3://…)" }),
    writer: t.Boolean({ description: "whether this process writes the search index" }),
    replicaId: t.String({ description: "this process's id in the index writer election" }),
    writerId: t.Nullable(t.String({ description: "the id of the process that writes the index now" })),
  }),
});

/** `GET /health`, public: liveness, and which replica writes the search index. */
export const healthRoutes = (info: () => Promise<HealthInfo>) =>
  createRouter().get("/health", () => info(), {
    response: { 200: HealthInfo },
    detail: { tags: ["health"], summary: "Liveness and the index writer", security: [] },
  });
