import { t } from "elysia";
import { AppError } from "../shared/app-error";
import type { AuthService } from "../auth/service";
import { createRouter } from "../lib/router";
import type { ProfileService } from "./service";

const Me = t.Object({
  ok: t.Literal(true),
  userId: t.String(),
  profile: t.Object({
    userName: t.Union([t.String(), t.Null()]),
    display_name: t.Union([t.String(), t.Null()]),
    age: t.Union([t.Integer(), t.Null()], { description: "null until onboarding sets it" }),
  }),
  clientKeyEscrow: t.Object({ present: t.Boolean() }),
  verifiedAt: t.String({ format: "date-time" }),
});
const MeFailure = t.Object({
  ok: t.Literal(false),
  error: t.Union([t.Literal("Missing Token"), t.Literal("Invalid token")]),
  details: t.String(),
});

/**
 * `GET /v1/me`. Its 401s use their own shape (docs/api.md#errors), not the common error
 * body, so it authenticates by hand instead of through the auth macro.
 */
export function meRoutes(auth: AuthService, profiles: ProfileService) {
  return createRouter().get(
    "/v1/me",
    async ({ request, set }) => {
      const authorization = request.headers.get("authorization");
      try {
        const principal = await auth.authenticateRequest(request.headers);
        const { profile, clientKeyEscrowed } = await profiles.own(principal.userId);
        return {
          ok: true as const,
          userId: principal.userId,
          profile: {
            userName: profile?.userName ?? null,
            display_name: profile?.displayName ?? null,
            age: profile?.age ?? null,
          },
          clientKeyEscrow: { present: clientKeyEscrowed },
          verifiedAt: principal.verifiedAt.toISOString(),
        };
      } catch (error) {
        if (!(error instanceof AppError) || error.status !== 401) throw error;
        set.status = 401;
        const missing = !authorization;
        return {
          ok: false as const,
          error: missing ? ("Missing Token" as const) : ("Invalid token" as const),
          details: error.message,
        };
      }
    },
    { response: { 200: Me, 401: MeFailure }, detail: { tags: ["identity"], summary: "Who am I" } },
  );
}

/** Profiles as a user's export carries them. */
export { PROFILE_TABLE } from "./repository";
