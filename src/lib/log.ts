export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A small structured logger: one line per event on stderr, fields as `key=value`. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Field names whose values are secrets (client and master keys, wrapped keys, credentials). */
const SECRET_NAME =
  "mnemo_session|cookie|x-client-key|client_?key|clientkey|master_?key|server_master_key|wrapped_?key|authorization|secret|password|api_?key";
/**
 * A secret-named field and what follows it: the separator (with the quote that opens a
 * quoted value, escaped too when the line holds JSON inside a string) and the value, an
 * auth scheme included (`Bearer abc`, `Basic abc`).
 */
const SECRET_FIELD = new RegExp(
  String.raw`\b(${SECRET_NAME})(\\?"?\s*[:=]\s*)(\\?"|')?((?:(?:Bearer|Basic)\s+)?[^\s",&}'\\]+)`,
  "gi",
);
/** Bearer tokens, API keys, developer tokens, and bare 32-byte hex keys. */
const SECRET_VALUE = [
  /\b(Bearer\s+)\S+/gi,
  /\b(svc_(?:sk_live|sk_test|dev)_)[A-Za-z0-9_-]+/g,
  /\b()[0-9a-fA-F]{64}\b/g,
];
/** A word of prose: letters only, capitalised at most ("unexpected", "Expected"). Key material never looks like this. */
const PROSE_WORD = /^[A-Za-z][a-z]*$/;

/**
 * Every log line passes through here: values of secret-named fields (`clientKey=…`,
 * `"x-client-key":"…"`, `client_key: …`, master and wrapped keys), bearer credentials and
 * bare 64-hex keys become `[redacted]`, wherever they appear (message, fields, stacks).
 * Values are redacted, never the words of a message: in `clientKey: unexpected property`
 * (a validation message naming the field) the word after the colon is prose, left as is.
 * A value counts as prose only when it is unquoted, follows `: ` and is a plain word.
 */
export function redactSecrets(line: string): string {
  let out = line.replace(
    SECRET_FIELD,
    (match, name: string, separator: string, quote: string | undefined, value: string) => {
      const prose = !quote && !separator.includes("=") && /:\s/.test(separator) && PROSE_WORD.test(value);
      return prose ? match : `${name}${separator}${quote ?? ""}[redacted]`;
    },
  );
  for (const pattern of SECRET_VALUE) out = out.replace(pattern, (_, prefix: string) => `${prefix}[redacted]`);
  return out;
}

export function createLogger(
  level: LogLevel = "info",
  sink: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Logger {
  const emit =
    (at: LogLevel) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      if (ORDER[at] < ORDER[level]) return;
      const extras = Object.entries(fields)
        .map(
          ([k, v]) =>
            `${k}=${typeof v === "string" ? JSON.stringify(v) : v instanceof Error ? JSON.stringify(v.stack ?? v.message) : JSON.stringify(v)}`,
        )
        .join(" ");
      sink(redactSecrets(`${new Date().toISOString()} ${at.toUpperCase()} ${message}${extras ? ` ${extras}` : ""}`));
    };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}
