/**
 * A wire is a folder and a registry line (issue 46): the places that name a
 * wire — its recorded name, its upstream's environment variable and `serve`
 * flag, its folder — are listed here, and the test fails when any other
 * file of the product (`lib/`, the entries, `deno.json`; code, not
 * comments) names one. The Gemini wire, added as a folder and one line of
 * `wires/registry.ts`, is named nowhere else; the three wires the gateway
 * spoke before keep the places listed in {@linkcode KNOWN}, each with why
 * (and the test fails when a listed place no longer names it, so the list
 * stays true).
 *
 * @module
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import {
  upstreamEnv,
  upstreamFlag,
  UPSTREAMS,
  WIRE_SPECS,
  wireOf,
} from "../../lib/model_gateway/wires/registry.ts";
import type { WireSpec } from "../../lib/model_gateway/wires/wire_spec.ts";

const ROOT = new URL("../../", import.meta.url);

/** Files that name an older wire outside its folder and the registry, and why. */
const KNOWN: Record<string, Record<string, string>> = {
  "lib/model_gateway/options.ts": {
    openai_chat:
      "DEFAULT_UPSTREAM_OPENAI and the upstreamOpenai option, kept for the code and tests that name them",
    anthropic_messages:
      "DEFAULT_UPSTREAM_ANTHROPIC and the upstreamAnthropic option, likewise",
  },
  "lib/models/openai_chat.ts": {
    openai_chat:
      "the OpenAI SDK binding writes its body and reads its answer through the wire's chat.ts",
  },
  "lib/models/anthropic_messages.ts": {
    anthropic_messages:
      "the Anthropic SDK binding writes its body and reads its answer through the wire's chat.ts",
  },
  "lib/cli/_install_gateway.ts": {
    openai_chat:
      "OpenCode's advice for a custom provider (--upstream-openai): a host's, not the gateway's",
    anthropic_messages: "the same advice (--upstream-anthropic)",
  },
};

/** Each wire's folder: the one whose `mod.ts` exports its spec. */
const FOLDERS = new Map<WireSpec, string>();
for (
  const e of Deno.readDirSync(new URL("lib/model_gateway/wires/", ROOT))
) {
  if (!e.isDirectory) continue;
  const mod = await import(
    new URL(`lib/model_gateway/wires/${e.name}/mod.ts`, ROOT).href
  );
  for (const v of Object.values(mod)) {
    if (WIRE_SPECS.includes(v as WireSpec)) {
      FOLDERS.set(v as WireSpec, `lib/model_gateway/wires/${e.name}/`);
    }
  }
}

function folderOf(spec: WireSpec): string {
  const f = FOLDERS.get(spec);
  ok(f, `a folder exports ${spec.wire}`);
  return f;
}

/** What names a wire in code. */
function namesOf(spec: WireSpec): string[] {
  const u = spec.upstream;
  const own = WIRE_SPECS.filter((s) => s.upstream.name === u.name);
  // An upstream shared by several wires is named by each of them.
  return [
    `"${spec.wire}"`,
    `wires/${folderOf(spec).split("/").at(-2)}/`,
    ...(own[own.length - 1] === spec || own.length === 1
      ? [upstreamEnv(u), `--${upstreamFlag(u)}`]
      : []),
  ];
}

/** A file's code without its comments (doc examples are comments). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(
    /(^|[^:"'`\\])\/\/.*$/gm,
    "$1",
  );
}

function productFiles(): string[] {
  const out: string[] = [
    "ingest.ts",
    "compile.ts",
    "proxy.ts",
    "mod.ts",
    "deno.json",
  ];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(new URL(dir, ROOT))) {
      const p = `${dir}${e.name}`;
      if (e.isDirectory) walk(`${p}/`);
      else if (p.endsWith(".ts")) out.push(p);
    }
  };
  walk("lib/");
  return out;
}

Deno.test("a wire is named by its folder and one registry line, and nowhere else", () => {
  const files = productFiles().map((f) => ({
    f,
    text: code(Deno.readTextFileSync(new URL(f, ROOT))),
  }));
  for (const spec of WIRE_SPECS) {
    const folder = folderOf(spec);
    const names = namesOf(spec);
    const naming = files.filter(({ f, text }) =>
      !f.startsWith(folder) && f !== "lib/model_gateway/wires/registry.ts" &&
      names.some((n) => text.includes(n))
    ).map(({ f }) => f).sort();
    const known = Object.keys(KNOWN).filter((f) => spec.wire in KNOWN[f])
      .sort();
    deepEqual(
      naming,
      known,
      `${spec.wire} (${
        names.join(", ")
      }) is named only in ${folder}, the registry and its known places (found: ${
        naming.join(", ")
      })`,
    );
  }
  // The registry names each wire once.
  const registry = Deno.readTextFileSync(
    new URL("lib/model_gateway/wires/registry.ts", ROOT),
  );
  for (const spec of WIRE_SPECS) {
    const dir = folderOf(spec).split("/").at(-2);
    equal(registry.split(`./${dir}/mod.ts`).length - 1, 1, `${dir} once`);
  }
});

Deno.test("the registry: every path claimed by one wire, upstreams each once, flags and variables from their names", () => {
  const none = () => null;
  deepEqual(
    [
      wireOf("POST", "/v1/chat/completions", none).spec.wire,
      wireOf("POST", "/v1/responses", none).spec.wire,
      wireOf("POST", "/v1/messages", none).spec.wire,
      wireOf("POST", "/v1beta/models/m:generateContent", none).spec.wire,
      wireOf("POST", "/v1/models/m:streamGenerateContent", none).spec.wire,
    ],
    [
      "openai_chat",
      "openai_responses",
      "anthropic_messages",
      "gemini_generate_content",
      "gemini_generate_content",
    ],
  );
  // A header of one API's clients does not take another's recorded path.
  const all = (h: string) =>
    ["x-api-key", "anthropic-version", "x-goog-api-key"].includes(h)
      ? "k"
      : null;
  equal(wireOf("POST", "/v1/chat/completions", all).spec.wire, "openai_chat");
  equal(wireOf("POST", "/v1/chat/completions", all).route.recorded, true);
  equal(wireOf("GET", "/v1/models", none).spec.upstream.name, "openai");
  equal(
    wireOf("GET", "/v1/models", (h) => h === "x-api-key" ? "k" : null).spec
      .upstream.name,
    "anthropic",
  );
  equal(
    wireOf("GET", "/v1/models", (h) => h === "x-goog-api-key" ? "k" : null)
      .spec.upstream.name,
    "gemini",
  );
  deepEqual(UPSTREAMS.map((u) => u.name), ["openai", "anthropic", "gemini"]);
  deepEqual(UPSTREAMS.map(upstreamEnv), [
    "HARNESS_UPSTREAM_OPENAI",
    "HARNESS_UPSTREAM_ANTHROPIC",
    "HARNESS_UPSTREAM_GEMINI",
  ]);
  ok(WIRE_SPECS.every((s) => s.paths.length > 0 && s.prefixes.length > 0));
});
