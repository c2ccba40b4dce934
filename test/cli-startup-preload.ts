/**
 * Preloaded (`bun --preload`) by test/cli-startup.test.ts: on exit, writes every module
 * the process loaded to the file named by MNEMO_LOADED_MODULES_OUT. Bun lists ES modules
 * in `require.cache` too.
 */
import { writeFileSync } from "node:fs";

const out = process.env.MNEMO_LOADED_MODULES_OUT;
if (out) process.on("exit", () => writeFileSync(out, JSON.stringify(Object.keys(require.cache))));
