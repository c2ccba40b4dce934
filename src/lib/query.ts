import { Type, type IntegerOptions } from "@sinclair/typebox";
import { t } from "elysia";
import { badRequest } from "../errors/app-error";

/**
 * Integer query parameters arrive as strings. Elysia's coercion reports range errors
 * without the parameter's name, so they are validated as digit strings by TypeBox and
 * range-checked here, with a message that names the parameter.
 */
export const IntegerParam = (description: string) => t.String({ pattern: "^[0-9]{1,9}$", description });

/**
 * An integer in a JSON body. Elysia's `t.Integer` also accepts the string "3"; TypeBox's
 * own type does not, so a mistyped field is a 400 naming it.
 */
export const StrictInteger = (options: IntegerOptions) => Type.Integer(options);

export function parseIntegerParam(name: string, value: string | undefined, range: { min: number; max: number; fallback: number }): number {
  if (value === undefined) return range.fallback;
  const number = Number(value);
  if (number < range.min || number > range.max) throw badRequest(`${name}: must be an integer from ${range.min} to ${range.max}`);
  return number;
}
