import type { ValidationError } from "elysia";

/** Turns TypeBox's first error into "field: problem", naming the field by its path. */
export function describeValidation(error: ValidationError): string {
  const where = error.type === "body" ? "body" : error.type;
  if (error.type === "body" && error.value === undefined)
    return "body: is required; send a JSON object with Content-Type: application/json";
  const first = safeAll(error)[0] as
    | { path?: string; message?: string; summary?: string; schema?: { description?: string } }
    | undefined;
  if (!first) return `invalid ${where}`;
  const field = (first.path ?? "").replace(/^\//, "").replace(/\//g, ".");
  // Unions report only "Expected union value"; their summary says what was expected.
  const problem =
    (first.message === "Expected union value" ? first.summary : first.message) ?? first.summary ?? "is invalid";
  return field
    ? `${field}: ${problem.charAt(0).toLowerCase()}${problem.slice(1)}`
    : `${where}: ${problem.charAt(0).toLowerCase()}${problem.slice(1)}`;
}

function safeAll(error: ValidationError): unknown[] {
  try {
    return error.all ?? [];
  } catch {
    return [];
  }
}
