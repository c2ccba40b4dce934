import { Elysia } from "elysia";
import { bodyLimitOption } from "./body-limits";

/**
 * Every domain plugin is built through this so all routes share one setting:
 * `normalize: false`. Elysia's normalizers would coerce `"x"` into `{"0":"x"}` or strip
 * nested keys from free-form `metadata`; instead, bodies are validated as sent and
 * responses are built by explicit mappers that list every field. Every route may declare
 * its own `bodyLimit` (lib/body-limits.ts).
 */
export function createRouter(options: { prefix?: string; tags?: string[]; name?: string } = {}) {
  const { tags, ...config } = options;
  const router = new Elysia({ ...config, normalize: false }).use(bodyLimitOption);
  return tags ? router.guard({ detail: { tags } }) : router;
}
