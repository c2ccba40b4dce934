import { Type } from "@sinclair/typebox";
import { t } from "elysia";

/** memory.limit defaults to 5 (docs/completions.md#memory-injection). */
export const DEFAULT_MEMORY_LIMIT = 5;
export const MAX_MEMORY_LIMIT = 50;

const Message = t.Object(
  {
    role: t.String({ minLength: 1, description: "system | developer | user | assistant | tool" }),
    content: t.Optional(
      t.Unknown({ description: "a string, an array of content parts, or null (assistant with tool_calls)" }),
    ),
  },
  { additionalProperties: true },
);

/**
 * OpenAI's chat-completions body. Every field but `memory` goes upstream untouched, so
 * the schema lists only what Mnemo reads and lets the rest through (additionalProperties).
 */
export const ChatCompletionBody = t.Object(
  {
    model: t.Optional(t.String({ minLength: 1, description: "default DEFAULT_MODEL" })),
    messages: t.Array(Message, { minItems: 1 }),
    stream: t.Optional(t.Boolean({ description: "true: Server-Sent Events, passed through as they arrive" })),
    memory: t.Optional(
      t.Object(
        {
          enabled: t.Optional(t.Boolean({ description: "default true" })),
          limit: t.Optional(
            Type.Integer({
              minimum: 1,
              maximum: MAX_MEMORY_LIMIT,
              description: `memories (and notes) injected at most; default ${DEFAULT_MEMORY_LIMIT}`,
            }),
          ),
        },
        { additionalProperties: false, description: "Mnemo's own field; never sent upstream" },
      ),
    ),
  },
  { additionalProperties: true },
);
export type ChatCompletionBody = typeof ChatCompletionBody.static;

/** The upstream's completion object, returned as it came. */
export const ChatCompletionResponse = t.Object(
  {},
  {
    additionalProperties: true,
    description: "the upstream's chat.completion object, or an SSE stream of chat.completion.chunk",
  },
);

export const Model = t.Object(
  { id: t.String(), object: t.Literal("model"), owned_by: t.String() },
  { additionalProperties: false },
);
export const ModelList = t.Object({ object: t.Literal("list"), data: t.Array(Model) }, { additionalProperties: false });
export type ModelEntry = typeof Model.static;
