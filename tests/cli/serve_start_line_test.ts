/**
 * What `serve` says when it starts: each SDK's base URL at the server, the
 * upstream's full base URL (its path too: without `/v1` an OpenAI-compatible
 * upstream gets `/chat/completions`), and both base URLs of each served
 * package (Anthropic's without `/v1`).
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { main as compileMain } from "../../compile.ts";
import { runMain } from "../_cli.ts";
import { tempDir } from "../_helpers.ts";
import { startServe } from "./_serve_process.ts";

const GATEWAY_DONE = /ANTHROPIC_BASE_URL=\S+ → \S+\n/;

Deno.test("serve's start-up names the upstream's whole base URL, path included, and notes an OpenAI upstream without a path", async () => {
  await using dir = await tempDir();
  const lines: Record<string, string> = {};
  for (
    const upstream of ["http://127.0.0.1:8900/v1", "http://127.0.0.1:8900"]
  ) {
    await using serve = await startServe(join(dir.path, "store"), {
      env: {
        HARNESS_UPSTREAM_OPENAI: upstream,
        HARNESS_UPSTREAM_ANTHROPIC: "http://127.0.0.1:8901/anthropic",
      },
      until: GATEWAY_DONE,
    });
    const { code, out } = await serve.stop();
    assertEquals(code, 0, out);
    assertOk(
      out.includes(`  OPENAI_BASE_URL=${serve.url}/v1 → ${upstream}\n`),
      out,
    );
    assertOk(
      out.includes(
        `  ANTHROPIC_BASE_URL=${serve.url} → http://127.0.0.1:8901/anthropic\n`,
      ),
      out,
    );
    lines[upstream] = out;
  }
  assertOk(!/note:/.test(lines["http://127.0.0.1:8900/v1"]));
  assertOk(
    lines["http://127.0.0.1:8900"].includes(
      "note: the OpenAI upstream has no path, so requests go to http://127.0.0.1:8900/chat/completions; most OpenAI-compatible servers answer at http://127.0.0.1:8900/v1",
    ),
    lines["http://127.0.0.1:8900"],
  );
});

Deno.test("serve --package NAME=FILE prints the package's OpenAI and Anthropic base URLs (/p/NAME/v1 and /p/NAME)", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const slice = new URL(
    "../../fixtures/tau2_retail_slice.json",
    import.meta.url,
  ).pathname;
  const imported = await runMain([
    "import",
    "--format",
    "tau2",
    slice,
    "--capture",
    "retail",
    "--root",
    root,
  ]);
  assertEquals(imported.code, 0, imported.err);
  const out = join(dir.path, "out");
  assertEquals(
    await compileMain([
      "--capture",
      "retail",
      "--out",
      out,
      "--name",
      "retail",
      "--root",
      root,
      "--no-tune",
      "--form",
      "agent",
    ]),
    0,
  );
  const file = join(out, "retail.package.json");
  await using serve = await startServe(root, {
    args: ["--package", `retail=${file}`, "--package", file],
    env: {
      HARNESS_UPSTREAM_OPENAI: "http://127.0.0.1:8900/v1",
      HARNESS_UPSTREAM_ANTHROPIC: "http://127.0.0.1:8901",
    },
    until: /serving package .*\n.*serving package .*\n/,
  });
  const said = serve.out();
  const u = serve.url;
  assertOk(
    new RegExp(
      `  serving package retail@\\S+: OPENAI_BASE_URL=${u}/p/retail/v1, ANTHROPIC_BASE_URL=${u}/p/retail[,\n]`,
    ).test(said),
    said,
  );
  assertOk(
    new RegExp(
      `  serving package retail@\\S+: OPENAI_BASE_URL=${u}/v1, ANTHROPIC_BASE_URL=${u}[,\n]`,
    ).test(said),
    said,
  );
  assertEquals((await serve.stop()).code, 0);
});
