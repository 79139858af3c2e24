/**
 * Compiling coding sessions honestly (issue #36): real Claude Code
 * (host_a) sessions from `fixtures/hosts/host_a/` through the real
 * adapter into a real store, compiled as `compile.ts` does. A scenario
 * repeated N times is the same recorded session under N session ids (each
 * marked successful), as a user who ran the same task N times would have.
 */
import {
  assertEquals,
  assertOk,
  assertRejects,
  assertThrows,
} from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { inspectCapture } from "../../lib/store/inspect.ts";
import { hostAToEvents } from "../../lib/adapters/claude_code.ts";
import { ToolCallCorrelator } from "../../lib/adapters/correlator.ts";
import { SessionMemory } from "../../lib/adapters/session_memory.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import type { Episode } from "../../lib/lineage/records.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { EmptyPackageError } from "../../lib/package/empty_package.ts";
import { runPackage } from "../../lib/forms/run_package.ts";
import { explainPackage } from "../../lib/forms/explain_package.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioFiles } from "../_server.ts";
import { markSucceeded } from "./_outcome.ts";

/**
 * Record a host_a scenario `times` times into one capture, each session
 * marked successful when `success`.
 */
async function record(
  store: HarnessStore,
  scenario: string,
  options: { times: number; success: boolean },
): Promise<Episode[]> {
  const sink = store.sink("cap");
  const adapter = {
    captureId: "cap",
    correlator: new ToolCallCorrelator(),
    sessions: new SessionMemory(),
  };
  for (let i = 0; i < options.times; i++) {
    for (const f of scenarioFiles(`${HOSTS_DIR}/host_a/${scenario}`)) {
      const p = f.body as { session_id: string };
      p.session_id = `${p.session_id.slice(0, -2)}${
        String(i).padStart(2, "0")
      }`;
      for (const ev of hostAToEvents(p, adapter)) sink.emit(ev);
    }
  }
  const episodes = await loadEpisodes(store, "cap");
  if (options.success) markSucceeded(sink, episodes);
  return await loadEpisodes(store, "cap");
}

Deno.test("compileBehavior() stamps the capture's own fidelity: F2 for Claude Code sessions (tool calls, no state), as capture inspect says, not F3", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const episodes = await record(store, "basic", { times: 4, success: true });
  const inspected = await inspectCapture(store, "cap");
  assertEquals(inspected.fidelity, "F2");
  const pkg = compileBehavior(episodes, { name: "basic" }).package;
  assertEquals(pkg.manifest.capture_fidelity, "F2");
  // A caller's value still wins.
  assertEquals(
    compileBehavior(episodes, { name: "basic", captureFidelity: "F1" })
      .package.manifest.capture_fidelity,
    "F1",
  );
});

Deno.test("compileBehavior() refuses an MCP session that would compile to a package doing nothing, and says why; runPackage refuses such a package", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const episodes = await record(store, "mcp", { times: 1, success: false });
  const err = assertThrows(
    () => compileBehavior(episodes, { name: "mcp" }),
    EmptyPackageError,
  );
  assertOk(
    /Nothing to compile: the 1 episode \(5 tool calls/.test(err.message),
    err.message,
  );
  assertOk(/capture more sessions of the same task/.test(err.message));
  assertOk(/capture outcome/.test(err.message), "none was marked successful");

  await using other = await tempDir();
  using basicStore = new HarnessStore(other.path);
  const pkg = compileBehavior(
    await record(basicStore, "basic", { times: 3, success: true }),
    { name: "basic" },
  ).package;
  const empty = {
    ...pkg,
    ir: {
      ...pkg.ir,
      root: "root",
      nodes: { root: { id: "root", kind: "sequence" as const, children: [] } },
    },
  };
  await assertRejects(
    () => runPackage(empty, { tools: {} }),
    EmptyPackageError,
  );
});

Deno.test("compileBehavior(): refused calls (denied) are no step to reproduce: four sessions whose every call was refused compile to nothing, with the reason", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const episodes = await record(store, "denied", { times: 4, success: true });
  const err = assertThrows(
    () => compileBehavior(episodes, { name: "denied" }),
    EmptyPackageError,
  );
  assertOk(
    /8 tool calls, 8 of them refused or failed/.test(err.message),
    err.message,
  );
});

Deno.test("compileBehavior(): a call that failed (exit 1) is evidence, not a step: both forms replay their own training clean and never make the failing command", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const episodes = await record(store, "basic", { times: 4, success: true });
  const failing = episodes[0].events.find((e) => e.kind === "tool.call.failed");
  assertOk(failing, "the recorded session has a failed call");
  const command = (failing.payload.arguments as { command: string }).command;
  assertOk(/exit 1/.test(command), command);
  for (const form of ["tree", "agent"] as const) {
    const r = compileBehavior(episodes, { name: "basic", form });
    assertEquals(r.verification.episodes_clean, 4, form);
    assertEquals(r.verification.problems, [], form);
    assertOk(
      !JSON.stringify(r.package.ir).includes(command),
      `${form}: the failing command is not in the package`,
    );
    // The evidence stays: the package's episodes are all four, calls and all.
    assertEquals(r.normalized.length, 4);
    assertOk(r.normalized[0].steps.some((s) => !s.ok));
  }
});

Deno.test("explainPackage() starts in a Claude Code user's words: which steps run without the model, which need it, and why, before the compiler's terms", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const episodes = await record(store, "basic", { times: 4, success: true });
  for (const form of ["tree", "agent"] as const) {
    const text = explainPackage(
      compileBehavior(episodes, { name: "basic", form }).package,
    );
    const [plain, compiler] = text.split("In the compiler's terms");
    assertOk(compiler, text);
    const words = plain.slice(plain.indexOf("What basic does"));
    assertOk(
      words.startsWith("What basic does, learned from 4 recorded sessions:"),
      words,
    );
    assertOk(
      !/residual|\bE[0-4]\b|variety|contested|sequence of/.test(words),
      words,
    );
    if (form === "tree") {
      assertOk(/1\. Bash: needs the model/.test(words), words);
      assertOk(
        /every session used the same value \("echo hi", "Say hi"\), but 4 sessions are too few/
          .test(words),
        words,
      );
      assertOk(
        /2\. Write: .*file_path is built from the working folder/.test(words),
        words,
      );
    } else {
      assertOk(
        /Read is called without asking the model, as soon as its arguments are known/
          .test(words),
        words,
      );
      assertOk(
        /Bash \(it changes things\): the model decides when/.test(words),
      );
    }
  }
});
