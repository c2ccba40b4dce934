import { DEFAULT_BODY_LIMITS, jsonLimitsOf, type BodyLimit, type JsonLimits } from "../lib/body-limits";
import { headerChecksOf, type HeaderCheck } from "../lib/header-checks";

/** What the catalog needs of a registered route (Elysia's `app.routes` entries). */
export interface RouteEntry {
  method: string;
  path: string;
  hooks?: { body?: unknown; transform?: unknown; bodyLimit?: BodyLimit };
}

/** The route a request reaches, as the body parser needs it. */
export interface MatchedRoute {
  pattern: string;
  takesBody: boolean;
  /** The path parameters, decoded as Elysia decodes them. */
  params: Record<string, string>;
  /** Checks of headers and path to pass before the body is read (authentication): header-checks.ts. */
  headerChecks: HeaderCheck[];
  /** The route's body limits: its own `bodyLimit` option over the defaults (lib/body-limits.ts). */
  limits: JsonLimits;
  /** The route reads raw bytes under a limit of its own (`bodyLimit: "streamed"`). */
  streamed: boolean;
}

interface Compiled {
  method: string;
  pattern: string;
  match: RegExp;
  /** Literal segments: the router prefers `/v1/memories/search` to `/v1/memories/:id`. */
  literals: number;
  /** The parameter names, in path order (`workspaceId`, `noteId`). */
  names: string[];
  body: unknown;
  headerChecks: HeaderCheck[];
  /** The route's own `bodyLimit` option, as declared. */
  bodyLimit: BodyLimit | undefined;
}

/**
 * Answers questions about the app's own routes at request time: which methods a path
 * has (for 405 `Allow`), whether a route reads a body at all, which checks its headers
 * must pass before it does (header-checks.ts), and how large a body it takes (its
 * `bodyLimit` option, lib/body-limits.ts). Built lazily from the
 * finished app's route list, and rebuilt if routes were added since.
 */
export function createRouteCatalog(routes: () => readonly RouteEntry[]) {
  let compiled: Compiled[] = [];
  let seen = -1;
  const current = () => {
    const list = routes();
    if (list.length !== seen) {
      seen = list.length;
      compiled = list
        .filter((route) => route.method !== "OPTIONS" && !route.path.includes("*"))
        .map((route) => ({
          method: route.method,
          pattern: trimSlash(route.path),
          match: patternToRegExp(route.path),
          literals: route.path.split("/").filter((segment) => segment && !segment.startsWith(":")).length,
          names: trimSlash(route.path)
            .split("/")
            .filter((segment) => segment.startsWith(":"))
            .map((segment) => segment.slice(1)),
          body: route.hooks?.body,
          headerChecks: headerChecksOf(route.hooks?.transform),
          bodyLimit: route.hooks?.bodyLimit,
        }));
    }
    return compiled;
  };
  return {
    /** The methods registered for a concrete path (empty when the path is unknown). */
    allowedMethods(pathname: string): string[] {
      const path = trimSlash(pathname);
      const methods = new Set(
        current()
          .filter((route) => route.match.test(path))
          .map((route) => route.method),
      );
      return [...methods].sort();
    },
    /** The route a request reaches (pattern `/v1/memories/:id`), if any. */
    routeFor(method: string, pathname: string): MatchedRoute | undefined {
      const path = trimSlash(pathname);
      let best: Compiled | undefined;
      for (const route of current()) {
        if (route.method === method && route.match.test(path) && (!best || route.literals > best.literals))
          best = route;
      }
      if (!best) return undefined;
      const values = best.match.exec(path)!.slice(1);
      const params = Object.fromEntries(best.names.map((name, i) => [name, safeDecode(values[i])]));
      return {
        pattern: best.pattern,
        takesBody: !!best.body,
        params,
        headerChecks: best.headerChecks,
        limits: jsonLimitsOf(best.bodyLimit) ?? DEFAULT_BODY_LIMITS,
        streamed: best.bodyLimit === "streamed",
      };
    },
    /** Every route that declares a body limit of its own, with its limits (defaults filled in): the table of the docs. */
    bodyLimitTable(): Array<{ route: string; limits: JsonLimits | "streamed" }> {
      return current()
        .filter((route) => route.bodyLimit !== undefined)
        .map((route) => ({
          route: `${route.method} ${route.pattern}`,
          limits: jsonLimitsOf(route.bodyLimit) ?? "streamed",
        }));
    },
    /** The body schema of a route, if it declares one. */
    bodySchema(method: string, pattern: string): unknown {
      const wanted = trimSlash(pattern);
      return current().find((entry) => entry.method === method && entry.pattern === wanted)?.body;
    },
    /** Whether a route with this method and pattern exists, whatever its parameters are named. */
    has(method: string, pattern: string): boolean {
      const wanted = shape(pattern);
      return current().some((entry) => entry.method === method && shape(entry.pattern) === wanted);
    },
  };
}
export type RouteCatalog = ReturnType<typeof createRouteCatalog>;

const trimSlash = (path: string) => (path.length > 1 ? path.replace(/\/+$/, "") : path);
const shape = (pattern: string) => trimSlash(pattern).replace(/:[^/]+/g, ":");

/** `/v1/workspaces/:workspaceId/notes` → a RegExp matching one concrete path. */
function patternToRegExp(pattern: string): RegExp {
  const source = trimSlash(pattern)
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "([^/]+)" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}$`);
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
