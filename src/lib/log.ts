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
const SECRET_FIELD = /\b(x-client-key|client_?key|clientkey|master_?key|server_master_key|wrapped_?key|authorization|secret|password|api_?key)("?\s*[:=]\s*"?)((?:Bearer\s+)?[^\s",&}]+)/gi;
/** Bearer tokens, API keys, developer tokens, and bare 32-byte hex keys. */
const SECRET_VALUE = [/\b(Bearer\s+)\S+/gi, /\b(svc_(?:sk_live|sk_test|dev)_)[A-Za-z0-9_-]+/g, /\b()[0-9a-fA-F]{64}\b/g];

/**
 * Every log line passes through here: values of secret-named fields (`clientKey=…`,
 * `"x-client-key":"…"`, `client_key`, master and wrapped keys), bearer credentials and bare
 * 64-hex keys become `[redacted]`, wherever they appear (message, fields, stacks).
 */
export function redactSecrets(line: string): string {
  let out = line.replace(SECRET_FIELD, (_, name: string, sep: string) => `${name}${sep}[redacted]`);
  for (const pattern of SECRET_VALUE) out = out.replace(pattern, (_, prefix: string) => `${prefix}[redacted]`);
  return out;
}

export function createLogger(level: LogLevel = "info", sink: (line: string) => void = (l) => process.stderr.write(l + "\n")): Logger {
  const emit = (at: LogLevel) => (message: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[at] < ORDER[level]) return;
    const extras = Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : v instanceof Error ? JSON.stringify(v.stack ?? v.message) : JSON.stringify(v)}`)
      .join(" ");
    sink(redactSecrets(`${new Date().toISOString()} ${at.toUpperCase()} ${message}${extras ? " " + extras : ""}`));
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}
