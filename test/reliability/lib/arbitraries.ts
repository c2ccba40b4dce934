/**
 * fast-check arbitraries for hostile HTTP requests, generated from an OpenAPI operation:
 * schema-guided bodies with boundary values and type confusion, filter objects whose
 * keys and values are built to break hand-made `where` strings, deep and huge JSON,
 * invalid UTF-8, odd content types, and ids of both users in every id slot.
 */
import fc from "fast-check";
import { encodeLoose, type JsonSchema, type Operation } from "./openapi";

/** Strings that have broken parsers, routers and query builders before. */
export const HOSTILE_STRINGS = [
  "",
  " ",
  "\u0000",
  "\u0000' OR 1=1 --",
  "' OR '1'='1",
  '" OR ""="',
  "'; DROP TABLE memories; --",
  "1) OR (1=1",
  "owner_id",
  "owner_id = 'iso-alice' OR 1",
  "ownerId",
  "$where",
  "$ne",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "metadata.topic",
  "metadata->>'topic'",
  "a.b[0]",
  "key with spaces",
  "%",
  "_",
  "*",
  "\\",
  "\\\\'",
  "`",
  "../../../etc/passwd",
  "..%2f..%2f",
  "%00",
  "%ff%fe",
  "\uD800",
  "\uDFFF\uD800",
  "\uFEFF",
  "\u202Eevil",
  "😀".repeat(50),
  "é".repeat(300),
  "null",
  "undefined",
  "NaN",
  "-1",
  "0",
  "1e309",
  "9007199254740993",
  "true",
  "[]",
  "{}",
  "<script>alert(1)</script>",
  "\u0024{7*7}", // a template-injection probe: the characters `${7*7}`
  "{{7*7}}",
  "\r\nX-Injected: 1",
  "a".repeat(257),
  "a".repeat(1025),
  "x".repeat(70_000),
];

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
);

/** Numbers at and past the edges. */
const boundaryNumber = fc.constantFrom(
  0,
  -1,
  1,
  0.5,
  -0,
  1e-9,
  1e21,
  2 ** 31,
  2 ** 53 + 1,
  -(2 ** 63),
  Number.MAX_VALUE,
  101,
  1001,
  10_001,
);

export interface Pools {
  /** Ids of both users (and made-up ones) to put in id-shaped slots. */
  ids: string[];
  /** What searches look for (the ids and A's marker): never stored, only queried. */
  queries: string[];
}

/** A value for a JSON schema, mostly valid, often at a boundary, sometimes the wrong type. */
export function valueFor(schema: JsonSchema | undefined, pools: Pools, depth = 0, name = ""): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileString, boundaryNumber, fc.constant(null));
  if (!schema || depth > 4) return wrong;
  return fc.oneof({ weight: 8, arbitrary: validish(schema, pools, depth, name) }, { weight: 1, arbitrary: wrong });
}

function validish(schema: JsonSchema, pools: Pools, depth: number, name: string): fc.Arbitrary<unknown> {
  if ("const" in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.oneof(fc.constantFrom(...schema.enum), hostileString);
  const options: JsonSchema[] | undefined = schema.anyOf ?? schema.oneOf;
  if (options) return fc.oneof(...options.map((o) => valueFor(o, pools, depth + 1, name)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  const idLike = /id$|Id$|_id$/.test(name);
  switch (type) {
    case "string": {
      const min = schema.minLength ?? 0;
      const max = schema.maxLength ?? 2_000;
      const arbitraries: fc.Arbitrary<unknown>[] = [
        fc.string({ minLength: min, maxLength: Math.min(max, 60) }),
        hostileString,
        fc.constant("x".repeat(min)),
        fc.constant("x".repeat(Math.min(max, 200_000))),
        fc.constant("y".repeat(Math.min(max + 1, 6_000_000))),
      ];
      if (name === "query") arbitraries.push(fc.constantFrom(...pools.queries), fc.constantFrom(...pools.queries));
      else if (idLike || name === "parentId")
        arbitraries.push(fc.constantFrom(...pools.ids), fc.constantFrom(...pools.ids));
      return fc.oneof(...arbitraries);
    }
    case "integer":
    case "number":
      return fc.oneof(
        type === "integer"
          ? fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 })
          : fc.double({ noNaN: true, noDefaultInfinity: true }),
        boundaryNumber,
        fc.constantFrom(
          ...[schema.minimum, schema.maximum, (schema.minimum ?? 0) - 1, (schema.maximum ?? 0) + 1].filter(
            (n) => n !== undefined,
          ),
        ),
      );
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.oneof(
        fc.array(valueFor(schema.items, pools, depth + 1), { maxLength: 4 }),
        fc.constant([]),
        fc
          .integer({ min: 100, max: 12_000 })
          .map((n) => Array.from({ length: n }, (_, i) => ({ id: `b${i}`, content: "x" }))),
      );
    default:
      return objectFor(schema, pools, depth);
  }
}

/** An object with a random subset of the declared keys, plus hostile extra keys. */
function objectFor(schema: JsonSchema, pools: Pools, depth: number): fc.Arbitrary<unknown> {
  const properties: Record<string, JsonSchema> = schema.properties ?? {};
  const declared = fc.record(
    Object.fromEntries(Object.entries(properties).map(([key, sub]) => [key, valueFor(sub, pools, depth + 1, key)])),
    { requiredKeys: [] },
  );
  const extraValue: JsonSchema | undefined =
    typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
  const extras = fc.dictionary(
    fc.oneof(hostileString, fc.constantFrom("topic", "workspaceId", "owner_id", "metadata", "eq", "ne", "$or")),
    valueFor(extraValue, pools, depth + 1),
    { maxKeys: 6 },
  );
  return fc.oneof(
    { weight: 6, arbitrary: declared },
    { weight: 2, arbitrary: fc.tuple(declared, extras).map(([a, b]) => ({ ...b, ...a })) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 30, max: 200 })
        .map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}' OR 1=1 --`, `v${i}`]))),
    },
  );
}

/** A request body as bytes: most are JSON of a (mutated) schema value, some are raw hostility. */
export function bodyFor(
  op: Operation,
  pools: Pools,
  full: boolean,
): fc.Arbitrary<{ bytes: Uint8Array | null; text: string; contentType: string | null }> {
  const encoder = new TextEncoder();
  const json = (value: unknown) => ({
    bytes: encoder.encode(JSON.stringify(value)),
    text: JSON.stringify(value),
    contentType: "application/json",
  });
  const raw = (text: string, contentType: string | null = "application/json") => ({
    bytes: encoder.encode(text),
    text,
    contentType,
  });
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  const maxDeep = full ? 200_000 : 30_000;
  const hostileBodies = fc.oneof(
    fc
      .integer({ min: 50, max: maxDeep })
      .map((n) => raw(`{"query":"x","content":"x","filters":{"k":${deep(n)}},"metadata":${deep(n)}}`)),
    fc
      .integer({ min: 50, max: maxDeep })
      .map((n) => raw(`{"content":"x","metadata":${'{"a":'.repeat(n)}1${"}".repeat(n)}}`)),
    fc
      .constantFrom(
        "{",
        "}",
        "[",
        '{"content":',
        '{"a":1,"a":2}',
        "\uFEFF{}",
        "null",
        "[]",
        "1",
        '"str"',
        "true",
        "{}".repeat(1000),
        '{"__proto__":{"admin":true}}',
        '{"constructor":{"prototype":{"x":1}}}',
      )
      .map((t) => raw(t)),
    fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => {
      // Invalid UTF-8 inside a JSON string.
      const head = encoder.encode('{"content":"');
      const tail = encoder.encode('","query":"q","title":"t","name":"n"}');
      const all = new Uint8Array(head.length + bytes.length + 2 + tail.length);
      all.set(head);
      all.set([0xc0, 0xaf], head.length);
      all.set(
        bytes.map((b) => (b === 0x22 || b === 0x5c ? 0xff : b)),
        head.length + 2,
      );
      all.set(tail, head.length + 2 + bytes.length);
      return { bytes: all, text: "(invalid utf-8)", contentType: "application/json" };
    }),
    fc
      .constantFrom(
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=utf-16",
        "application/json; charset=latin1",
        "application/merge-patch+json",
        "",
      )
      .map((type) => raw('{"content":"x","query":"x","title":"t","name":"n"}', type || null)),
  );
  // Huge, rarely (a machine shared with other work): past the routes' limits (1 … 20 MB), and
  // in the full form past the 32 MB outer one.
  const huge = fc
    .oneof(fc.integer({ min: 1_000_000, max: 6_000_000 }), fc.constant(full ? 33_000_000 : 2_000_000))
    .map((n) => raw(`{"content":"${"a".repeat(n)}","query":"q","title":"t","name":"n"}`));
  const withSchema = valueFor(op.body ?? { type: "object", properties: {} }, pools).map(json);
  return fc.oneof(
    { weight: op.body ? 60 : 10, arbitrary: withSchema },
    { weight: 30, arbitrary: hostileBodies },
    { weight: 10, arbitrary: fc.constant({ bytes: null, text: "", contentType: null }) },
    { weight: 1, arbitrary: huge },
  );
}

/** A path parameter: an id of either user, a made-up one, or hostility. */
export function pathParamFor(pools: Pools): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...pools.ids) },
    { weight: 2, arbitrary: hostileString.filter((s) => s.length > 0 && s.length < 5_000) },
  );
}

/** Query strings: declared parameters at boundaries, plus unknown ones. */
export function queryFor(op: Operation, pools: Pools): fc.Arbitrary<string> {
  const declared = op.queryParams.map((q) =>
    fc.option(
      fc
        .oneof(
          valueFor(q.schema, pools, 0, q.name).map((v) => (typeof v === "string" ? v : JSON.stringify(v))),
          fc.constantFrom(...pools.ids),
        )
        .map((v) => [q.name, String(v)] as const),
    ),
  );
  const unknown = fc.option(
    fc
      .tuple(
        fc.constantFrom("limit", "cursor", "workspace_id", "owner_id", "__proto__", "filter[eq][x]"),
        hostileString,
      )
      .map(([k, v]) => [k, v] as const),
  );
  return fc.tuple(...declared, unknown).map((pairs) => {
    const text = pairs
      .filter((pair) => pair)
      .map((pair) => `${encodeLoose(pair![0])}=${encodeLoose(pair![1].slice(0, 8_000))}`)
      .join("&");
    return text ? `?${text}` : "";
  });
}

/** Headers: the caller's token, missing, or broken; declared headers with hostile values. */
export function headersFor(op: Operation, token: string): fc.Arbitrary<Record<string, string>> {
  const auth = fc.oneof(
    { weight: 12, arbitrary: fc.constant(`Bearer ${token}`) },
    { weight: 1, arbitrary: fc.constant("") },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "Bearer",
        "Bearer ",
        "Basic YTpi",
        "Bearer mock-token-",
        "Bearer mock-token-iso-alice' OR 1=1",
        `bearer mock-token-${"a".repeat(5000)}`,
        "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJpc28tYWxpY2UifQ.",
        `Bearer mnk_${"0".repeat(40)}`,
      ),
    },
  );
  const extra = fc.record(
    Object.fromEntries(
      [...op.headerParams.map((h) => h.name), "X-Backend-Project", "X-Request-Id", "Accept"].map((name) => [
        name,
        fc.constantFrom("true", "false", "1", "", "x".repeat(300), "' OR 1=1", "../..", "*/*"),
      ]),
    ),
    { requiredKeys: [] },
  );
  return fc.tuple(auth, extra).map(([authorization, rest]) => {
    const headers = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >;
    if (authorization) headers.authorization = authorization;
    return headers;
  });
}
