/**
 * SQL text with bound values, written as a tagged template: `sql\`… WHERE id = ${id}\``.
 * Values are never spliced into the text: each becomes a `$n` placeholder, which both
 * engines accept (PostgreSQL natively; SQLite as a numbered parameter). A value that is
 * itself an `Sql` fragment is inlined with its own values. Compiling is a single pass
 * over the fragments, so repositories pay microseconds, not a query builder's AST walk.
 */
export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}

  /** The text with `$1…$n` placeholders and its parameters, in order. */
  compile(): { text: string; params: unknown[] } {
    const params: unknown[] = [];
    const text = this.render(params);
    return { text, params };
  }

  private render(params: unknown[]): string {
    let text = this.strings[0];
    for (let i = 0; i < this.values.length; i++) {
      const value = this.values[i];
      if (value instanceof Sql) text += value.render(params);
      else {
        params.push(value);
        text += `$${params.length}`;
      }
      text += this.strings[i + 1];
    }
    return text;
  }
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  return new Sql(strings, values);
}

/** Values (or fragments) separated by `separator`, e.g. for `IN (…)` and multi-row `VALUES`. */
sql.join = (values: readonly unknown[], separator = ", "): Sql => {
  if (values.length === 0) return new Sql([""], []);
  return new Sql(["", ...values.slice(1).map(() => separator), ""], values);
};

/** Text taken as it is: only for code constants (column lists, migration statements), never input. */
sql.raw = (text: string): Sql => new Sql([text], []);

/** A table name from a code constant, quoted. */
sql.table = (name: string): Sql => sql.raw(`"${name.replace(/"/g, '""')}"`);
