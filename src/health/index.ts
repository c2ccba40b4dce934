import { t } from "elysia";
import { createRouter } from "../lib/router";

/** `GET /health`, public. */
export const healthRoutes = () =>
  createRouter().get("/health", () => ({ status: "ok" as const }), {
    response: { 200: t.Object({ status: t.Literal("ok") }) },
    detail: { tags: ["health"], summary: "Liveness" },
  });
