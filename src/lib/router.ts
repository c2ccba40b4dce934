import { Elysia } from "elysia";

/**
 * Every domain plugin is built through this so all routes share one setting:
 * `normalize: false`. Elysia's normalizers would coerce `"x"` into `{"0":"x"}` or strip
 * nested keys from free-form `metadata`; instead, bodies are validated as sent and
 * responses are built by explicit mappers that list every field.
 */
export function createRouter(options: { prefix?: string; tags?: string[]; name?: string } = {}) {
  const { tags, ...config } = options;
  const router = new Elysia({ ...config, normalize: false });
  return tags ? router.guard({ detail: { tags } }) : router;
}
