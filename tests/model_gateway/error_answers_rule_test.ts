/**
 * The model gateway throws, it does not build error answers: an error it
 * answers itself is a `GatewayError` (an `HttpError` with its status), and
 * `errorAnswer` (`lib/ingest/error_answer.ts`) alone words it in the API's
 * shape. Under `lib/model_gateway/` only two places may hold an error's
 * body: `api_errors.ts` (the wire's shape as `errorAnswer` asks for it, and
 * read back for a record) and each wire's `errors.ts` (its shape function).
 * The relay of an upstream's own answer (its status as it came,
 * `status: res.status`) is forwarding, not an answer of ours, and is not
 * matched.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join, relative } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
const GATEWAY = join(ROOT, "lib/model_gateway");

/** The files that may word an error's body. */
function allowed(file: string): boolean {
  return file === "lib/model_gateway/api_errors.ts" ||
    /^lib\/model_gateway\/wires\/[^/]+\/errors\.ts$/.test(file);
}

/** What building an error answer looks like, each with its name. */
const BUILDS: [RegExp, string][] = [
  [/\bnew Response\s*\(/, "new Response("],
  [/\bResponse\.(json|error)\s*\(/, "Response.json/error("],
  [/\bstatus\s*:\s*[45]\d\d\b/, "an answer with a literal 4xx/5xx status"],
  [/\bapiError\s*\(/, "apiError( (errorAnswer's alone)"],
  [/\.error\s*\(\s*(\d|status\b)/, "a wire's error shape called"],
  [/\b(openai|anthropic|gemini)Error\s*\(/, "a wire's error shape called"],
];

/** Source text without comments (a doc may name what the code may not do). */
function code(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, "").replace(
    /(^|[^:])\/\/.*$/gm,
    "$1",
  );
}

/** Every `.ts` file under `dir`, repository-relative. */
function tsFiles(dir: string): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory) return tsFiles(p);
    return e.name.endsWith(".ts") ? [relative(ROOT, p)] : [];
  }).sort();
}

/** The findings in one file's text: `file:line what`. */
function findings(file: string, src: string): string[] {
  if (allowed(file)) return [];
  const out: string[] = [];
  code(src).split("\n").forEach((line, i) => {
    for (const [re, what] of BUILDS) {
      if (re.test(line)) out.push(`${file}:${i + 1} ${what}`);
    }
  });
  return out;
}

Deno.test("the rule finds what it is for", () => {
  const bad = [
    "return apiError(family, { status: 502, message });",
    "return new Response(body, { status: 404 });",
    "const a = spec.error(status, message);",
    "return openaiError(504, 'slow');",
  ].join("\n");
  assertEquals(findings("lib/model_gateway/x.ts", bad), [
    "lib/model_gateway/x.ts:1 an answer with a literal 4xx/5xx status",
    "lib/model_gateway/x.ts:1 apiError( (errorAnswer's alone)",
    "lib/model_gateway/x.ts:2 new Response(",
    "lib/model_gateway/x.ts:2 an answer with a literal 4xx/5xx status",
    "lib/model_gateway/x.ts:3 a wire's error shape called",
    "lib/model_gateway/x.ts:4 a wire's error shape called",
  ]);
  // Relaying the upstream's answer, throwing, and a comment are not builds.
  const fine = [
    "return { status: res.status, headers: out, body: null, raw };",
    'throw new GatewayError(family, "upstream_timeout", message);',
    "// apiError(family, { status: 502 }) was the old way",
    "ctrl.error(err);",
  ].join("\n");
  assertEquals(findings("lib/model_gateway/x.ts", fine), []);
  assertEquals(findings("lib/model_gateway/api_errors.ts", bad), []);
  assertEquals(findings("lib/model_gateway/wires/gemini/errors.ts", bad), []);
});

Deno.test("lib/model_gateway/ builds no error answer outside api_errors.ts and the wires' errors.ts", () => {
  const files = tsFiles(GATEWAY);
  assertOk(files.length > 30, `saw only ${files.length} files`);
  const found = files.flatMap((f) =>
    findings(f, Deno.readTextFileSync(join(ROOT, f)))
  );
  assertEquals(found, []);
});

Deno.test("only errorAnswer (lib/ingest/error_answer.ts) asks a wire for an error answer", () => {
  // apiError is the wire's shape on request; outside the gateway, only the
  // one error-answer function may call it.
  const callers: string[] = [];
  for (const f of tsFiles(join(ROOT, "lib"))) {
    if (f.startsWith("lib/model_gateway/")) continue;
    const src = code(Deno.readTextFileSync(join(ROOT, f)));
    if (/\bapiError\s*\(/.test(src)) callers.push(f);
  }
  assertEquals(callers, ["lib/ingest/error_answer.ts"]);
});
