export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A small structured logger: one line per event on stderr, fields as `key=value`. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel = "info", sink: (line: string) => void = (l) => process.stderr.write(l + "\n")): Logger {
  const emit = (at: LogLevel) => (message: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[at] < ORDER[level]) return;
    const extras = Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : v instanceof Error ? JSON.stringify(v.stack ?? v.message) : JSON.stringify(v)}`)
      .join(" ");
    sink(`${new Date().toISOString()} ${at.toUpperCase()} ${message}${extras ? " " + extras : ""}`);
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}
