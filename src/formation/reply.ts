import { Type as T, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { AppError } from "../shared/app-error";
import { pick } from "../lib/json-path";

/** Facts one extraction may yield, and characters of each: a longer reply is refused whole. */
export const MAX_FACTS = 20;
export const MAX_FACT_CHARS = 500;
/** Characters of a model reply read at all. */
export const MAX_REPLY_CHARS = 64_000;

export const FactsReply = T.Object(
  { facts: T.Array(T.String({ minLength: 1, maxLength: MAX_FACT_CHARS }), { maxItems: MAX_FACTS }) },
  { additionalProperties: false },
);

export const DecisionsReply = T.Object(
  {
    decisions: T.Array(
      T.Object(
        {
          fact: T.Integer({ minimum: 0, maximum: MAX_FACTS - 1 }),
          action: T.Union([T.Literal("add"), T.Literal("update"), T.Literal("delete"), T.Literal("none")]),
          ref: T.Optional(T.Union([T.String({ maxLength: 16 }), T.Null()])),
          content: T.Optional(T.Union([T.String({ minLength: 1, maxLength: MAX_FACT_CHARS }), T.Null()])),
        },
        { additionalProperties: false },
      ),
      { maxItems: MAX_FACTS },
    ),
  },
  { additionalProperties: false },
);
export type Decision = Static<typeof DecisionsReply>["decisions"][number];

/** The memory model's reply could not be used: nothing of it is applied. The upstream's text is never quoted. */
export const invalidReply = (why: string) =>
  new AppError(502, "upstream_error", `the memory model's reply was not usable (${why}); nothing was changed`);

/** The JSON object of a chat completion's first choice, checked against `schema`; throws `invalidReply` otherwise. */
export function parseReply<S extends typeof FactsReply | typeof DecisionsReply>(
  completionText: string,
  schema: S,
): Static<S> {
  let completion: unknown;
  try {
    completion = JSON.parse(completionText);
  } catch {
    throw invalidReply("not a chat completion");
  }
  const content = pick(completion, "choices", 0, "message", "content");
  if (typeof content !== "string") throw invalidReply("no message content");
  if (content.length > MAX_REPLY_CHARS) throw invalidReply(`longer than ${MAX_REPLY_CHARS} characters`);
  // A model may wrap its JSON in a Markdown code fence; nothing else around it is accepted.
  const text = content
    .trim()
    .replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/, "$1")
    .trim();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidReply("not JSON");
  }
  if (!Value.Check(schema, value)) {
    const first = Value.Errors(schema, value).First();
    throw invalidReply(`does not match the expected shape${first ? ` at ${first.path || "/"}` : ""}`);
  }
  if ("facts" in (value as object) && (value as { facts: string[] }).facts.some((fact) => !fact.trim()))
    throw invalidReply("a fact is blank");
  return value as Static<S>;
}
