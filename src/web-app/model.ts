import { t } from "elysia";
import { KB, type BodyLimit } from "../lib/body-limits";

/** A sign-in link's token or a pasted credential (an identity provider's ID token is the longest, a few KB). */
export const SESSION_BODY_LIMIT: BodyLimit = { bytes: 16 * KB, depth: 2, nodes: 8 };

export const CreateSessionBody = t.Object(
  {
    token: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 256,
        description:
          "the one-time token of a sign-in link (`mnemo open` prints the link; the token follows `#signin=`)",
      }),
    ),
    apiKey: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 12_000,
        description:
          "an API key (or any bearer credential the server accepts), exchanged for a session of the same user and scopes",
      }),
    ),
  },
  { additionalProperties: false, description: "exactly one of token and apiKey" },
);
export type CreateSessionBody = typeof CreateSessionBody.static;

export const SessionInfo = t.Object({
  userId: t.String(),
  scopes: t.Array(t.String()),
  expiresAt: t.String({
    format: "date-time",
    description: "the session's end at the latest; it ends sooner after 12 hours unused, or at sign-out",
  }),
});

export const LinkBody = t.Object(
  { token: t.String({ minLength: 1, maxLength: 256, description: "the one-time token of a sign-in link" }) },
  { additionalProperties: false },
);
export const LinkInfo = t.Object({
  userId: t.String({ description: "the user the link signs in" }),
  expiresAt: t.String({ format: "date-time", description: "when the unused link stops working" }),
});

export const SessionEnded = t.Object({ signedOut: t.Literal(true) });
