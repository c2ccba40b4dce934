import { t } from "elysia";
import { ALL_SCOPES, KNOWN_SCOPES } from "../auth/scopes";
import { KB, type BodyLimit } from "../lib/body-limits";

export const KEY_BODY_LIMIT: BodyLimit = { bytes: 4 * KB, depth: 3, nodes: 32 };

const Scope = t.UnionEnum(ALL_SCOPES);
/** A key made by the operator (`mnemo keys create --operator`) carries `operator`: listed, never made over HTTP. */
const KnownScope = t.UnionEnum(KNOWN_SCOPES);

export const ApiKey = t.Object({
  id: t.String({ description: "key_…" }),
  name: t.Union([t.String(), t.Null()]),
  prefix: t.String({ description: "the key's public start (its lookup id), to recognise it; never the secret" }),
  scopes: t.Array(KnownScope),
  createdAt: t.String({ format: "date-time" }),
  lastUsedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

export const CreatedKey = t.Composite([
  ApiKey,
  t.Object({ key: t.String({ description: "the secret, shown only in this answer" }) }),
]);

export const KeyList = t.Object({
  data: t.Array(ApiKey, { description: "the caller's live keys, oldest first; revoked keys are not listed" }),
});

export const CreateKeyBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100, description: "a label: what will use the key" }),
    scopes: t.Optional(
      t.Array(Scope, {
        minItems: 1,
        maxItems: ALL_SCOPES.length,
        uniqueItems: true,
        description: "default: every scope",
      }),
    ),
  },
  { additionalProperties: false },
);

export const KeyParams = t.Object({ id: t.String({ minLength: 1, maxLength: 128 }) });
export const RevokedKey = t.Object({ id: t.String(), revoked: t.Literal(true) });

export const DevToken = t.Object({
  id: t.String({ description: "dev_…" }),
  prefix: t.String({ description: "the token's public start (its lookup id), to recognise it; never the secret" }),
  issuedBy: t.Union([t.Literal("sync"), t.Null()], {
    description: "sync: a sign-in through the identity provider (a device); null: `mnemo dev-token create`",
  }),
  createdAt: t.String({ format: "date-time" }),
  expiresAt: t.String({ format: "date-time" }),
});
export const DevTokenList = t.Object({
  data: t.Array(DevToken, {
    description: "the caller's live developer tokens, oldest first; revoked and expired ones are not listed",
  }),
});
export const RevokedDevToken = t.Object({ id: t.String(), revoked: t.Literal(true) });
