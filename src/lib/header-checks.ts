/** What a header check sees: the request (its headers) and the route's path parameters, never the body. */
export interface HeaderCheckContext {
  request: Request;
  params: Record<string, string>;
}

/** A route `transform` hook that decides from the headers and the path alone. */
export type HeaderCheck = (context: HeaderCheckContext) => Promise<void>;

const RUNS_BEFORE_BODY = Symbol("runs-before-body");

/**
 * Marks a route's `transform` hook as a check of headers and path only (authentication, a
 * webhook's id), so that the JSON body parser (request-guards.ts) runs it before reading
 * the body: a caller it refuses costs no body read. Elysia parses before `transform`, so
 * without this the body would be read first.
 *
 * The check runs once per request: the parser runs it first and its `transform` slot then
 * awaits the same outcome. Routes whose body is never parsed (no body, or GET) run it in
 * `transform` as any hook.
 *
 * @example
 * .post("/x", handler, { body: Schema, transform: checkBeforeBody(async ({ request }) => authenticate(request)) })
 */
export function checkBeforeBody(check: HeaderCheck): HeaderCheck {
  const outcomes = new WeakMap<Request, Promise<void>>();
  // Destructured, not `(context) =>`: Elysia reads a hook's parameters to decide what to
  // parse. And `async`: Elysia awaits a hook only when it is an async function.
  const once: HeaderCheck = async ({ request, params }) => {
    let outcome = outcomes.get(request);
    if (!outcome) {
      outcome = check({ request, params });
      outcomes.set(request, outcome);
    }
    await outcome;
  };
  return Object.assign(once, { [RUNS_BEFORE_BODY]: true });
}

/** The header checks among a route's `transform` hooks (Elysia's `{ fn }` entries), in order. */
export function headerChecksOf(transform: unknown): HeaderCheck[] {
  const hooks = Array.isArray(transform) ? transform : transform ? [transform] : [];
  return hooks
    .map((hook) => (typeof hook === "function" ? hook : (hook as { fn?: unknown })?.fn))
    .filter((fn): fn is HeaderCheck => typeof fn === "function" && RUNS_BEFORE_BODY in fn);
}
