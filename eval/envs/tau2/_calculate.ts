/**
 * The arithmetic τ²'s `calculate` tool evaluates with Python's `eval`:
 * numbers, `+ - * / // **`, unary signs and parentheses, with Python's
 * int/float distinction (true division gives a float) and its messages.
 *
 * @module
 */

/** A Python number: its value and whether it is a float. */
interface PyNum {
  v: number;
  float: boolean;
}

/** A failure Python's `eval` would raise, with its message. */
export class PyEvalError extends Error {
  /**
   * Create a `PyEvalError`.
   *
   * @param message Python's message.
   */
  constructor(message: string) {
    super(message);
    this.name = "PyEvalError";
  }
}

const SYNTAX = "invalid syntax (<string>, line 1)";

/** Tokens: numbers, operators, parentheses. */
function tokenize(src: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === " ") {
      i++;
    } else if (/[0-9.]/.test(c)) {
      const m = /^(?:\d+\.?\d*|\.\d+)/.exec(src.slice(i));
      if (!m) throw new PyEvalError(SYNTAX);
      out.push(m[0]);
      i += m[0].length;
    } else if (src.startsWith("**", i) || src.startsWith("//", i)) {
      out.push(src.slice(i, i + 2));
      i += 2;
    } else {
      out.push(c);
      i++;
    }
  }
  return out;
}

/** Parse a number literal as Python does. */
function literal(tok: string): PyNum {
  if (tok.includes(".")) return { v: Number(tok), float: true };
  if (/^0\d/.test(tok) && /[1-9]/.test(tok)) {
    throw new PyEvalError(
      "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)",
    );
  }
  return { v: Number(tok), float: false };
}

/** Binary operation with Python's semantics. */
function apply(op: string, a: PyNum, b: PyNum): PyNum {
  const float = a.float || b.float;
  switch (op) {
    case "+":
      return { v: a.v + b.v, float };
    case "-":
      return { v: a.v - b.v, float };
    case "*":
      return { v: a.v * b.v, float };
    case "/":
      if (b.v === 0) {
        throw new PyEvalError(
          float ? "float division by zero" : "division by zero",
        );
      }
      return { v: a.v / b.v, float: true };
    case "//":
      if (b.v === 0) {
        throw new PyEvalError(
          float
            ? "float floor division by zero"
            : "integer division or modulo by zero",
        );
      }
      return { v: Math.floor(a.v / b.v), float };
    default: { // "**"
      if (a.v === 0 && b.v < 0) {
        throw new PyEvalError("0.0 cannot be raised to a negative power");
      }
      const v = a.v ** b.v;
      return { v, float: float || b.v < 0 };
    }
  }
}

/**
 * Evaluate an arithmetic expression as Python's `eval` would.
 *
 * @param src The expression (only digits, `+-*\/().` and spaces).
 * @returns The value.
 * @throws {PyEvalError} Python's message for a syntax or arithmetic error.
 */
export function evaluateArithmetic(src: string): number {
  const toks = tokenize(src);
  let pos = 0;
  const peek = () => toks[pos];
  const expr = (): PyNum => {
    let left = term();
    while (peek() === "+" || peek() === "-") {
      const op = toks[pos++];
      left = apply(op, left, term());
    }
    return left;
  };
  const term = (): PyNum => {
    let left = unary();
    while (peek() === "*" || peek() === "/" || peek() === "//") {
      const op = toks[pos++];
      left = apply(op, left, unary());
    }
    return left;
  };
  const unary = (): PyNum => {
    if (peek() === "+" || peek() === "-") {
      const op = toks[pos++];
      const x = unary();
      return op === "-" ? { v: -x.v, float: x.float } : x;
    }
    return power();
  };
  const power = (): PyNum => {
    const base = atom();
    if (peek() === "**") {
      pos++;
      return apply("**", base, unary());
    }
    return base;
  };
  const atom = (): PyNum => {
    const t = toks[pos++];
    if (t === undefined) throw new PyEvalError(SYNTAX);
    if (t === "(") {
      const x = expr();
      if (toks[pos++] !== ")") throw new PyEvalError(SYNTAX);
      return x;
    }
    if (/^[0-9.]/.test(t)) return literal(t);
    throw new PyEvalError(SYNTAX);
  };
  const value = expr();
  if (pos !== toks.length) throw new PyEvalError(SYNTAX);
  return value.v;
}
