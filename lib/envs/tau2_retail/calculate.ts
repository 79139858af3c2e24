/**
 * τ²'s `calculate` tool: Python's `eval` of an arithmetic expression over
 * the characters `0-9 + - * / ( ) .` and spaces, then
 * `str(round(float(result), 2))`. Python semantics: integers are exact
 * (`bigint`), `/` is true division, `//` floors, `**` binds tighter than a
 * unary sign on its left, and errors carry Python's messages.
 *
 * @module
 */
import { pyFloatRepr, pyRound2 } from "./py_json.ts";
import { pyTypeName } from "./_py_values.ts";

type Num = { int: bigint } | { float: number };

const SYNTAX = "invalid syntax (<string>, line 1)";

function toFloat(n: Num): number {
  if ("float" in n) return n.float;
  const f = Number(n.int);
  if (!Number.isFinite(f)) throw new Error("int too large to convert to float");
  return f;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

function trueDiv(a: Num, b: Num): Num {
  if ("int" in a && "int" in b) {
    if (b.int === 0n) throw new Error("division by zero");
    return { float: toFloat(a) / toFloat(b) };
  }
  const d = toFloat(b);
  if (d === 0) throw new Error("float division by zero");
  return { float: toFloat(a) / d };
}

function power(a: Num, b: Num): Num {
  if ("int" in a && "int" in b && b.int >= 0n) {
    if (b.int > 100_000n && a.int !== 0n && a.int !== 1n && a.int !== -1n) {
      throw new Error("exponent too large for calculate");
    }
    return { int: a.int ** b.int };
  }
  const x = toFloat(a);
  const y = toFloat(b);
  if (x === 0 && y < 0) {
    throw new Error("0.0 cannot be raised to a negative power");
  }
  if (x < 0 && !Number.isInteger(y)) {
    throw new Error(
      "float() argument must be a string or a real number, not 'complex'",
    );
  }
  const r = x ** y;
  if (!Number.isFinite(r) && Number.isFinite(x) && Number.isFinite(y)) {
    throw new Error("(34, 'Numerical result out of range')");
  }
  return { float: r };
}

function binary(op: string, a: Num, b: Num): Num {
  if (op === "/") return trueDiv(a, b);
  if (op === "**") return power(a, b);
  if ("int" in a && "int" in b) {
    if (op === "+") return { int: a.int + b.int };
    if (op === "-") return { int: a.int - b.int };
    if (op === "*") return { int: a.int * b.int };
    if (b.int === 0n) throw new Error("integer division or modulo by zero");
    return { int: floorDiv(a.int, b.int) };
  }
  const x = toFloat(a);
  const y = toFloat(b);
  if (op === "+") return { float: x + y };
  if (op === "-") return { float: x - y };
  if (op === "*") return { float: x * y };
  if (y === 0) throw new Error("float floor division by zero");
  return { float: Math.floor(x / y) };
}

function tokenize(src: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === " ") {
      i++;
    } else if (/[0-9.]/.test(c)) {
      const m = /^(\d+\.?\d*|\.\d+)/.exec(src.slice(i));
      if (!m) throw new Error(SYNTAX);
      const lit = m[0];
      if (/^0\d*[1-9]/.test(lit) && !lit.includes(".")) {
        throw new Error(
          "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)",
        );
      }
      tokens.push(lit);
      i += lit.length;
    } else if ((c === "*" || c === "/") && src[i + 1] === c) {
      tokens.push(c + c);
      i += 2;
    } else {
      tokens.push(c);
      i++;
    }
  }
  return tokens;
}

/** A recursive-descent parser over Python's arithmetic grammar. */
class Parser {
  #t: string[];
  #i = 0;
  constructor(tokens: string[]) {
    this.#t = tokens;
  }
  #peek(): string | undefined {
    return this.#t[this.#i];
  }
  parseAll(): Num {
    const v = this.#arith();
    if (this.#i !== this.#t.length) throw new Error(SYNTAX);
    return v;
  }
  #arith(): Num {
    let v = this.#term();
    while (this.#peek() === "+" || this.#peek() === "-") {
      const op = this.#t[this.#i++];
      v = binary(op, v, this.#term());
    }
    return v;
  }
  #term(): Num {
    let v = this.#factor();
    for (let p = this.#peek(); p === "*" || p === "/" || p === "//";) {
      this.#i++;
      v = binary(p, v, this.#factor());
      p = this.#peek();
    }
    return v;
  }
  #factor(): Num {
    const p = this.#peek();
    if (p === "+" || p === "-") {
      this.#i++;
      const v = this.#factor();
      if (p === "+") return v;
      return "int" in v ? { int: -v.int } : { float: -v.float };
    }
    return this.#power();
  }
  #power(): Num {
    const base = this.#atom();
    if (this.#peek() === "**") {
      this.#i++;
      return binary("**", base, this.#factor());
    }
    return base;
  }
  #atom(): Num {
    const p = this.#t[this.#i++];
    if (p === undefined) throw new Error(SYNTAX);
    if (p === "(") {
      if (this.#peek() === ")") {
        throw new Error(
          "float() argument must be a string or a real number, not 'tuple'",
        );
      }
      const v = this.#arith();
      if (this.#t[this.#i++] !== ")") throw new Error(SYNTAX);
      return this.#calls(v);
    }
    if (/^[0-9.]/.test(p)) {
      return this.#calls(
        p.includes(".") ? { float: Number(p) } : { int: BigInt(p) },
      );
    }
    throw new Error(SYNTAX);
  }
  /** A number followed by `(…)` is a call: Python evaluates the arguments, then fails. */
  #calls(v: Num): Num {
    if (this.#peek() !== "(") return v;
    this.#i++;
    if (this.#peek() !== ")") this.#arith();
    if (this.#t[this.#i++] !== ")") throw new Error(SYNTAX);
    throw new Error(`'${"int" in v ? "int" : "float"}' object is not callable`);
  }
}

/**
 * τ²'s `calculate`: evaluate and give `str(round(float(value), 2))`.
 *
 * @param expression The expression, e.g. `"155.33 - 147.05"`.
 * @returns The result's Python text, e.g. `"8.28"`.
 * @throws {Error} Python's message: `Invalid characters in expression`, `division by zero`, a syntax error.
 */
export function calculate(expression: string): string {
  if (typeof expression !== "string") {
    throw new Error(`'${pyTypeName(expression)}' object is not iterable`);
  }
  for (const ch of expression) {
    if (!"0123456789+-*/(). ".includes(ch)) {
      throw new Error("Invalid characters in expression");
    }
  }
  if (expression.trim() === "") {
    throw new Error("invalid syntax (<string>, line 0)");
  }
  let depth = 0;
  for (const ch of expression) {
    if (ch === "(") depth++;
    if (ch === ")" && --depth < 0) {
      throw new Error("unmatched ')' (<string>, line 1)");
    }
  }
  if (depth > 0) throw new Error("'(' was never closed (<string>, line 1)");
  const value = new Parser(tokenize(expression)).parseAll();
  return pyFloatRepr(pyRound2(toFloat(value)));
}
