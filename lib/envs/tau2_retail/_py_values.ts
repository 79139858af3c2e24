/**
 * How Python sees the JSON values a model sends as tool arguments: type
 * names, `str()` and `repr()`, keyword-argument binding with CPython's
 * messages, dict membership, iteration of a list argument, and the
 * pydantic message for an address field that is not a string.
 *
 * @module
 */
import { pyFloatRepr } from "./py_json.ts";

/** The pydantic minor version named in validation-error links. */
const PYDANTIC_DOCS_VERSION = "2.13";

/**
 * Python's type name of a JSON value (`str`, `int`, `float`, `bool`,
 * `list`, `dict`, `NoneType`).
 *
 * @param v The value.
 * @returns The name.
 */
export function pyTypeName(v: unknown): string {
  if (v === null || v === undefined) return "NoneType";
  if (typeof v === "string") return "str";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (Array.isArray(v)) return "list";
  return "dict";
}

/**
 * Python's `repr()` of a JSON value.
 *
 * @param v The value.
 * @returns Its repr (`'a'`, `1`, `None`, `[1, 'a']`).
 */
export function pyRepr(v: unknown): string {
  if (typeof v === "string") {
    const q = v.includes("'") && !v.includes('"') ? '"' : "'";
    const body = v.replaceAll("\\", "\\\\").replaceAll("\n", "\\n")
      .replaceAll("\r", "\\r").replaceAll("\t", "\\t");
    return q + (q === "'" ? body.replaceAll("'", "\\'") : body) + q;
  }
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  if (v !== null && typeof v === "object") {
    return `{${
      Object.entries(v).map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(
        ", ",
      )
    }}`;
  }
  return pyStr(v);
}

/**
 * Python's `str()` (what an f-string shows) of a JSON value.
 *
 * @param v The value.
 * @returns Its text.
 */
export function pyStr(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === null || v === undefined) return "None";
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") {
    return Number.isInteger(v) ? String(v) : pyFloatRepr(v);
  }
  return pyRepr(v);
}

function nameList(names: string[]): string {
  const q = names.map((n) => `'${n}'`);
  if (q.length === 1) return q[0];
  if (q.length === 2) return `${q[0]} and ${q[1]}`;
  return `${q.slice(0, -1).join(", ")}, and ${q[q.length - 1]}`;
}

/**
 * Bind keyword arguments as CPython does for `RetailTools.<tool>(**kwargs)`.
 *
 * @param tool The tool (method) name.
 * @param params Its parameter names in order.
 * @param args The model's arguments.
 * @returns The arguments in parameter order.
 * @throws {Error} CPython's message for an unexpected or missing argument.
 */
export function bindArgs(
  tool: string,
  params: readonly string[],
  args: Record<string, unknown>,
): unknown[] {
  for (const k of Object.keys(args)) {
    if (!params.includes(k)) {
      throw new Error(
        `RetailTools.${tool}() got an unexpected keyword argument '${k}'`,
      );
    }
  }
  const missing = params.filter((p) => !(p in args));
  if (missing.length > 0) {
    throw new Error(
      `RetailTools.${tool}() missing ${missing.length} required positional argument${
        missing.length > 1 ? "s" : ""
      }: ${nameList(missing)}`,
    );
  }
  return params.map((p) => args[p]);
}

/**
 * Python's `key in d` for a dict with string keys.
 *
 * @param d The dict.
 * @param key The key the model sent.
 * @returns Whether `d` holds it (never for a non-string key).
 * @throws {Error} `unhashable type` for a list or dict key.
 */
export function pyHas(d: Record<string, unknown>, key: unknown): key is string {
  if (key !== null && typeof key === "object") {
    throw new Error(`unhashable type: '${pyTypeName(key)}'`);
  }
  return typeof key === "string" && Object.hasOwn(d, key);
}

/**
 * The items Python iterates for a list argument (a string's characters,
 * a dict's keys).
 *
 * @param v The argument.
 * @returns Its items.
 * @throws {Error} `'int' object is not iterable` and the like.
 */
export function pyList(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (typeof v === "string") return [...v];
  if (v !== null && typeof v === "object") return Object.keys(v);
  throw new Error(`'${pyTypeName(v)}' object is not iterable`);
}

/**
 * Python's `s.lower()` on an argument.
 *
 * @param v The argument.
 * @returns It in lower case.
 * @throws {Error} `'int' object has no attribute 'lower'` and the like.
 */
export function pyLower(v: unknown): string {
  if (typeof v !== "string") {
    throw new Error(`'${pyTypeName(v)}' object has no attribute 'lower'`);
  }
  return v.toLowerCase();
}

/**
 * Python's `sorted()` of a list of strings (by code point).
 *
 * @param items The items.
 * @returns A sorted copy.
 * @throws {Error} `'<' not supported` when the items are not all strings.
 */
export function pySorted(items: unknown[]): unknown[] {
  const bad = items.find((x) => typeof x !== "string");
  if (bad !== undefined && items.length > 1) {
    const other = items.find((x) => pyTypeName(x) !== pyTypeName(bad)) ?? bad;
    throw new Error(
      `'<' not supported between instances of '${pyTypeName(other)}' and '${
        pyTypeName(bad)
      }'`,
    );
  }
  return [...items].sort((a, b) =>
    String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0
  );
}

/**
 * The pydantic message when some fields of a string-only model are not
 * strings, or null when all are.
 *
 * @param model The model name (`UserAddress`).
 * @param fields The fields and their values, in declaration order.
 * @returns The validation error text, or null.
 */
export function stringFieldsError(
  model: string,
  fields: [string, unknown][],
): string | null {
  const bad = fields.filter(([, v]) => typeof v !== "string");
  if (bad.length === 0) return null;
  const lines = bad.map(([k, v]) =>
    `${k}\n  Input should be a valid string [type=string_type, input_value=${
      pyRepr(v)
    }, input_type=${
      pyTypeName(v)
    }]\n    For further information visit https://errors.pydantic.dev/${PYDANTIC_DOCS_VERSION}/v/string_type`
  );
  return `${bad.length} validation error${
    bad.length > 1 ? "s" : ""
  } for ${model}\n${lines.join("\n")}`;
}
