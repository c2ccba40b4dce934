import { t } from "elysia";

/** 3–32 letters, digits or underscores; unique without regard to case. */
export const USERNAME = /^[a-z0-9_]{3,32}$/i;
export const MAX_DISPLAY_NAME = 100;
export const MAX_AGE = 150;

export const WebhookParams = t.Object({ webhookId: t.String({ minLength: 1, maxLength: 256 }) });

/**
 * Both webhooks share one path, so one body schema lists both shapes' fields; the
 * service checks the ones its webhook needs (messages name the field).
 */
export const WebhookBody = t.Object(
  {
    client_temp_public_key: t.Optional(
      t.Union([t.String(), t.Null(), t.Object({}, { additionalProperties: true })], {
        description:
          "sync: the caller's temporary P-256 public key (base64 SPKI, base64 raw point, or JWK) to wrap the escrowed key for",
      }),
    ),
    userName: t.Optional(t.Unknown({ description: "onboarding: 3–32 of a–z, 0–9, _ (unique without regard to case)" })),
    display_name: t.Optional(t.Unknown({ description: "onboarding: at most 100 characters, or null" })),
    age: t.Optional(t.Unknown({ description: "onboarding: an integer 0–150" })),
    clientKey: t.Optional(
      t.Unknown({ description: "onboarding: a 32-byte client key (64 hex or base64/base64url) to escrow" }),
    ),
  },
  { additionalProperties: true },
);
export type WebhookBody = typeof WebhookBody.static;

const ProfileView = t.Object({
  userName: t.Union([t.String(), t.Null()]),
  display_name: t.Union([t.String(), t.Null()]),
  age: t.Union([t.Integer(), t.Null()], { description: "null until onboarding sets it" }),
});

export const SyncResult = t.Object({
  secret: t.String({ description: "a fresh developer token (svc_dev_…) for this user, valid 24 h" }),
  userId: t.String(),
  status: t.Union([
    t.Literal("new_user"),
    t.Literal("incomplete_profile"),
    t.Literal("missing_key"),
    t.Literal("complete"),
  ]),
  profile: ProfileView,
  wrapped_key: t.Union([t.String(), t.Null()], {
    description:
      "JSON text {v, alg, epk, iv, ct}: the escrowed client key wrapped for client_temp_public_key (see README); null without a key or public key",
  }),
  debug_log: t.String({ description: "the steps taken; never a secret" }),
});
export const OnboardingResult = t.Object({
  ok: t.Literal(true),
  userId: t.String(),
  profile: ProfileView,
  clientKeyEscrowed: t.Boolean({ description: "an escrowed client key exists for this user after the request" }),
  encryptedBlobSaved: t.Boolean({ description: "this request sealed and saved the given clientKey" }),
});
export type SyncResult = typeof SyncResult.static;
export type OnboardingResult = typeof OnboardingResult.static;
