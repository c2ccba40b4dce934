import { Type, type IntegerOptions } from "@sinclair/typebox";
import { t } from "elysia";
import { badRequest } from "./app-error";

/**
 * An integer query parameter. It arrives as a string and is checked by
 * `parseIntegerParam`, which knows the range and names it in the message
 * ("limit: must be an integer between 1 and 1000"); a schema pattern here would answer
 * first with TypeBox's "expected string to match '^[0-9]{1,9}$'".
 */
export const IntegerParam = (description: string) =>
  t.String({ description: `an integer; ${description}`, maxLength: 32 });

/**
 * An integer in a JSON body. Elysia's `t.Integer` also accepts the string "3"; TypeBox's
 * own type does not, so a mistyped field is a 400 naming it.
 */
export const StrictInteger = (options: IntegerOptions) => Type.Integer(options);

export function parseIntegerParam(
  name: string,
  value: string | undefined,
  range: { min: number; max: number; fallback: number },
): number {
  if (value === undefined) return range.fallback;
  const number = /^[0-9]{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(number >= range.min && number <= range.max))
    throw badRequest(`${name}: must be an integer between ${range.min} and ${range.max}`);
  return number;
}
