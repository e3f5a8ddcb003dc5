/**
 * fast-check generators of hostile requests: JSON bodies built as raw text (so they can carry
 * duplicate keys, `__proto__`/`constructor`/`prototype` keys, numbers no JavaScript number
 * holds, deep nesting), invalid UTF-8, odd content types and charsets, odd Authorization and
 * Idempotency-Key headers, odd path ids and query strings.
 */
import fc from "fast-check";

/** A JSON document as raw text pieces: objects keep duplicate and prototype keys as written. */
export type RawJson = { lit: string } | { obj: Array<[string, RawJson]> } | { arr: RawJson[] };

export function serialize(value: RawJson): string {
  if ("lit" in value) return value.lit;
  if ("arr" in value) return `[${value.arr.map(serialize).join(",")}]`;
  return `{${value.obj.map(([key, child]) => `${JSON.stringify(key)}:${serialize(child)}`).join(",")}}`;
}

/** Turns a plain JSON value into RawJson. */
export function toRaw(value: unknown): RawJson {
  if (Array.isArray(value)) return { arr: value.map(toRaw) };
  if (value !== null && typeof value === "object") return { obj: Object.entries(value).map(([k, v]) => [k, toRaw(v)]) };
  return { lit: JSON.stringify(value) ?? "null" };
}

export const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];

/** Number literals valid in JSON text that no double holds exactly, or at all. */
const numberLiterals = fc.constantFrom(
  "1e999", "-1e999", "1e-999", "123456789012345678901234567890", "-0", "0.00000000000000000000000000001",
  "1E+400", "9007199254740993", "-9007199254740993", "4.9e-324", "1.7976931348623157e309", "0", "31.5",
);
/** Number-ish literals that are not JSON at all. */
const invalidLiterals = fc.constantFrom("NaN", "Infinity", "-Infinity", "0x10", "01", ".5", "1.", "+1", "undefined", "'x'", "tru", "nul");

export const oddString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("", " ", "\u0000", "\ud800", "\udfff", "\u202e", "%00", "' OR 1=1 --", "${jndi:ldap://x/a}", "../../etc/passwd", "<script>alert(1)</script>", "true", "false", "31.5", "-1", "null"),
  fc.integer({ min: 90, max: 3000 }).map((n) => "x".repeat(n)),
  fc.integer({ min: 1, max: 300 }).map((n) => "😀".repeat(n)),
);

const oddLeaf: fc.Arbitrary<RawJson> = fc.oneof(
  oddString.map((s) => ({ lit: JSON.stringify(s) })),
  numberLiterals.map((lit) => ({ lit })),
  fc.double().map((d) => ({ lit: JSON.stringify(d) ?? "0" })),
  fc.integer().map((n) => ({ lit: String(n) })),
  fc.constantFrom({ lit: "true" }, { lit: "false" }, { lit: "null" }, { lit: "{}" }, { lit: "[]" }),
);

const oddKey = fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.string({ maxLength: 12 }), fc.constantFrom("sendValue", "documentValue", "SENDVALUE", ""));

/** Arbitrary JSON trees with odd keys and leaves, up to a small depth. */
export const rawTree: fc.Arbitrary<RawJson> = fc.letrec<{ node: RawJson }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    oddLeaf,
    fc.array(fc.tuple(oddKey, tie("node")), { maxLength: 5 }).map((obj) => ({ obj })),
    fc.array(tie("node"), { maxLength: 5 }).map((arr) => ({ arr })),
  ),
})).node;

/** Structured mutations of a valid body: the requests that get deepest into a route. */
export function mutatedBody(base: Record<string, unknown>): fc.Arbitrary<string> {
  const keys = Object.keys(base);
  const edit = fc.oneof(
    fc.record({ op: fc.constant("replace" as const), key: fc.constantFrom(...keys), value: rawTree }),
    fc.record({ op: fc.constant("replaceInner" as const), key: fc.constantFrom(...keys), inner: oddKey, value: rawTree }),
    fc.record({ op: fc.constant("delete" as const), key: fc.constantFrom(...keys) }),
    fc.record({ op: fc.constant("add" as const), key: oddKey, value: rawTree }),
    fc.record({ op: fc.constant("duplicate" as const), key: fc.constantFrom(...keys), value: rawTree }),
    fc.record({ op: fc.constant("recase" as const), key: fc.constantFrom(...keys), upper: fc.boolean() }),
    fc.record({ op: fc.constant("rawNumber" as const), key: fc.constantFrom(...keys), lit: fc.oneof(numberLiterals, invalidLiterals) }),
  );
  return fc.array(edit, { minLength: 0, maxLength: 4 }).map((edits) => {
    const entries: Array<[string, RawJson]> = Object.entries(base).map(([k, v]) => [k, toRaw(v)]);
    for (const e of edits) {
      const index = entries.findIndex(([k]) => k === e.key);
      switch (e.op) {
        case "replace":
          if (index >= 0) entries[index] = [e.key, e.value];
          break;
        case "replaceInner": {
          const current = index >= 0 ? entries[index]![1] : undefined;
          if (current && "obj" in current) current.obj.push([e.inner, e.value]);
          break;
        }
        case "delete":
          if (index >= 0) entries.splice(index, 1);
          break;
        case "add":
          entries.push([e.key, e.value]);
          break;
        case "duplicate":
          entries.push([e.key, e.value]);
          break;
        case "recase":
          if (index >= 0) entries[index] = [e.upper ? e.key.toUpperCase() : e.key.toLowerCase(), entries[index]![1]];
          break;
        case "rawNumber":
          if (index >= 0) entries[index] = [e.key, { lit: e.lit }];
          break;
      }
    }
    return serialize({ obj: entries });
  });
}

/** Nesting deep enough to trouble a recursive parser or validator. */
export const deepNesting = fc.tuple(fc.integer({ min: 10, max: 4000 }), fc.constantFrom("arr", "obj", "mixed", "unclosed")).map(([depth, kind]) => {
  if (kind === "arr") return `${"[".repeat(depth)}${"]".repeat(depth)}`;
  if (kind === "obj") return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
  if (kind === "mixed") return `{"customerReference":"x","productName":${'{"sendValue":['.repeat(depth)}${"]}".repeat(depth)}}`;
  return "[".repeat(depth);
});

/** Bytes that are not UTF-8, placed inside an otherwise valid body. */
export function invalidUtf8(base: string): fc.Arbitrary<Buffer> {
  const bad = fc.constantFrom([0xff], [0xfe, 0xff], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xc3], [0xf4, 0x90, 0x80, 0x80]);
  return fc.tuple(fc.nat({ max: Math.max(0, base.length - 1) }), bad).map(([at, bytes]) => {
    const text = Buffer.from(base, "utf8");
    return Buffer.concat([text.subarray(0, at), Buffer.from(bytes), text.subarray(at)]);
  });
}

/** Valid JSON text broken in one place. */
export function garbled(base: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.nat({ max: base.length }).map((at) => base.slice(0, at)),
    fc.tuple(fc.nat({ max: base.length }), fc.string({ maxLength: 5 })).map(([at, junk]) => base.slice(0, at) + junk + base.slice(at)),
    fc.constantFrom("", " ", "null", "true", "42", '"text"', "[]", "[{}]", "{", "}", "{}{}", '{"a":1}garbage', "\ufeff{}", "{'a':1}", '{"a":1,}', "{a:1}"),
  );
}

export const contentTypes = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON", 'application/json; charset="utf-8"') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "application/json; charset=iso-8859-1", "application/json; charset=utf-16", "application/json; charset=bogus", "application/json; boundary=x",
      "text/plain", "text/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz", "application/xml",
      "application/vnd.api+json", "application/problem+json", "application/json-patch+json", "*/*", "application/*", "",
      "application/json, text/plain", "application/json\u0000", "json", ";", "application/json; charset",
    ),
  },
);

export const contentEncodings = fc.option(fc.constantFrom("gzip", "br", "deflate", "identity", "x-unknown", "gzip, gzip", "chunked"), { nil: undefined });

/** Header values as they can travel on the wire: visible Latin-1, no CR/LF. */
export const headerValue = fc.oneof(
  fc.string({ maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, "")),
  fc.stringMatching(/^[\x20-\x7e\x80-\xff]{0,80}$/),
  fc.integer({ min: 200, max: 20_000 }).map((n) => "h".repeat(n)),
);

export const idempotencyKeys = fc.option(
  fc.oneof(fc.uuid(), fc.constantFrom("", " ", "   ", "a,b", "key; with; semicolons", "\t"), fc.integer({ min: 250, max: 2000 }).map((n) => "k".repeat(n)), headerValue),
  { nil: undefined, freq: 2 },
);

export function authorizations(validToken: string): fc.Arbitrary<string | undefined> {
  const [header, payload, signature] = validToken.split(".");
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(`Bearer ${validToken}`) },
    {
      weight: 3,
      arbitrary: fc.oneof(
        fc.constantFrom(
          undefined, "", "Bearer", "Bearer ", `bearer ${validToken}`, `BEARER  ${validToken}  `, `Bearer ${validToken} extra`,
          `Bearer ${validToken},Bearer ${validToken}`, `Basic ${Buffer.from("a:b").toString("base64")}`, `Token ${validToken}`,
          `Bearer ${header}.${payload}`, `Bearer ${header}.${payload}.`, `Bearer ..`, `Bearer ${header}..${signature}`, `Bearer ${validToken.slice(0, -1)}x`,
          `Bearer ${"a".repeat(5000)}`, `Bearer ${"a.".repeat(3000)}a`, "Bearer \u00ff\u00fe", "Negotiate abc",
        ),
        headerValue.map((v) => `Bearer ${v}`),
        headerValue,
      ),
    },
  );
}

/** Path segments where an id belongs. */
export function pathIds(validIds: number[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...validIds.map(String)) },
    { weight: 2, arbitrary: fc.integer({ min: -(2 ** 31), max: 2 ** 31 }).map(String) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "0", "-1", "1.5", "1e3", "0x10", "+1", "01", "%201", "1%20", "1;2", "1,2", "Infinity", "NaN", "null", "true", "9007199254740993",
        "99999999999999999999999999999", "%00", "%2e%2e%2f", "..", ".", "%", "%zz", "%ff", "%c0%af", "%ed%a0%80", "%D9%A1%D9%A2", "%EF%BC%91",
        "__proto__", "constructor", "1%3Fa=b", "1%23frag", "-0", "1_000",
      ),
    },
    { weight: 2, arbitrary: oddString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ""))) },
    { weight: 1, arbitrary: fc.integer({ min: 20, max: 2000 }).map((n) => "9".repeat(n)) },
  );
}

/** Query strings: known names with odd values, odd names, raw junk. */
export function queryStrings(knownNames: string[]): fc.Arbitrary<string> {
  const name = fc.oneof(
    fc.constantFrom(...knownNames, ...knownNames.map((n) => n.toUpperCase())),
    fc.constantFrom("__proto__", "constructor", "constructor[prototype][x]", "__proto__[polluted]", "a[b]", "", "=", "limit[]", "status[0]"),
    fc.string({ maxLength: 8 }).map(encodeURIComponent),
  );
  const value = fc.oneof(
    fc.constantFrom("", "0", "-1", "1", "200", "201", "1e309", "NaN", "1.5", "New", "new", "Successful", "Bogus", "%zz", "%00", "%ff", "null", "[]", "{}", "a".repeat(5000)),
    oddString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ""))),
    fc.base64String({ maxLength: 40 }),
  );
  return fc.array(fc.tuple(name, value), { maxLength: 6 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join("&"));
}

/**
 * One query parameter in every shape a single value should not come in (SPEC §24): repeated (in
 * one letter case and in two), bracketed as a list (`a[]`, `a[0]`), very long, empty, bare.
 * `value` is one the parameter could take; the shapes are listed so that a sweep covers each.
 */
export function parameterShapes(name: string, value: string): string[] {
  const v = encodeURIComponent(value);
  return [
    `${name}=${v}&${name}=${v}`,
    `${name}=${v}&${name.toUpperCase()}=${v}`,
    `${name}=&${name}=${v}&${name}=${"9".repeat(300)}`,
    `${name}[]=${v}`,
    `${name}[]=${v}&${name}[]=${v}`,
    `${name}[0]=${v}&${name}[1]=${v}`,
    `${name}=${"x".repeat(20_000)}`,
    `${name}=${"%F0%9F%98%80".repeat(2_000)}`,
    `${name}=`,
    name,
  ];
}

/** A value for one parameter: one it could take (most of the time), or an odd one. */
export const parameterValue = (plausible: string) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(plausible) }, { weight: 2, arbitrary: oddString.map((s) => s.replace(/[\ud800-\udfff]/g, "")) });
