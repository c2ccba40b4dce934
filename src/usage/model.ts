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
    limit: t.Integer({
      minimum: 0,
      description: "MONTHLY_TOKEN_LIMIT, or the user's override (mnemo usage set-limit)",
    }),
    remaining: Tokens,
    month: Month,
  },
  { additionalProperties: false },
);

export const DailyUsageResponse = t.Object(
  {
    month: Month,
    days: t.Array(
      t.Object({
        day: t.String({ pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", description: "UTC day, YYYY-MM-DD" }),
        totalTokens: Tokens,
        requestCount: Tokens,
      }),
      { description: "every day of the month up to today (UTC), oldest first" },
    ),
  },
  { additionalProperties: false },
);
