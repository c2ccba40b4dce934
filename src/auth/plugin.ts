import { Elysia } from "elysia";
import { checkBeforeBody } from "../lib/header-checks";
import type { Scope } from "./scopes";
import type { AuthService, Principal } from "./service";

/**
 * The auth plugin: a route declares `auth: 'memory:read'` (or `auth: true` for any
 * authenticated caller) and receives `principal` in its context.
 *
 * Authentication and the scope check look at the headers only, so they run before the
 * body is read (a header check, see header-checks.ts: the body parser runs it first) and
 * before body validation: an unauthenticated or unauthorised caller costs no body read
 * and learns nothing about the route's schema (401/403 come before 400 or 413).
 * `resolve` then only hands the principal over, typed.
 */
export function authPlugin(auth: AuthService) {
  const principals = new WeakMap<Request, Principal>();
  return new Elysia({ name: "auth", seed: auth }).macro({
    auth: (scope: Scope | true) => ({
      // Reads the header from `request`, not the `headers` context field: Elysia decides
      // what to parse by reading a hook's source text, which minification rewrites.
      transform: checkBeforeBody(async ({ request }) => {
        const principal = await auth.authenticateRequest(request.headers);
        if (scope !== true) auth.requireScope(principal, scope);
        principals.set(request, principal);
      }),
      resolve({ request }) {
        return { principal: principals.get(request)! };
      },
    }),
  });
}
