import { t } from "elysia";

const Month = t.String({ pattern: "^[0-9]{4}-[0-9]{2}$", description: "UTC month, YYYY-MM" });
const Tokens = t.Integer({ minimum: 0 });

export const UsageResponse = t.Object(
  {
    month: Month,
    usage: t.Object({
      totalTokens: t.Integer({ minimum: 0, description: "prompt + completion tokens this month" }),
      requestCount: t.Integer({ minimum: 0, description: "completions answered by the upstream this month" }),
      uid: t.String(),
      month: Month,
    }),
  },
  { additionalProperties: false },
);

export const CreditsResponse = t.Object(
  {
    used: Tokens,
    limit: t.Integer({ minimum: 0, description: "MONTHLY_TOKEN_LIMIT, or the user's override (mnemo usage set-limit)" }),
    remaining: Tokens,
    month: Month,
  },
  { additionalProperties: false },
);
