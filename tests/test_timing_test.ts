/**
 * Tests wait for conditions, not for time, and assert no wall-clock bound:
 * a test must pass on a busy machine, and how fast something is belongs to
 * a benchmark under `bench/`. The rule, checked on every `.ts` file under
 * `tests/`:
 *
 * - a line that starts a timer or reads the clock (`setTimeout(`,
 *   `setInterval(`, `delay(`, `sleep(`, `performance.now()`, `Date.now()`)
 *   is allowed only in `tests/_wait.ts` (`waitFor` polls a condition,
 *   `hangGuard` and `guarded` turn a hang into a failure) or when
 *   {@link EXCEPTIONS} names it with its reason: the timer is the stimulus
 *   (an error thrown from a timer, a server slow to start), the clock is the
 *   subject (a timestamp, a date), or the subject is a time-out;
 * - every exception still matches a line (the list does not go stale);
 * - the folders other helpers own are held at what they have now
 *   ({@link THEIRS}): no new timer or clock there either.
 *
 * Comments are not read. That `tests/` mirrors `lib/` folder for folder is
 * `tests/test_layout_test.ts`'s to check.
 */
import { assertEquals } from "./_assert.ts";
import { join, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const TESTS = join(ROOT, "tests");

/** Files not read: the helper that owns the timers, and this rule. */
const UNREAD = ["tests/_wait.ts", "tests/test_timing_test.ts"];

/** A timer or a clock read. */
const TIMING =
  /\bsetTimeout\s*\(|\bsetInterval\s*\(|\bdelay\s*\(|\bsleep\s*\(|\bperformance\.now\s*\(|\bDate\.now\s*\(/;

/** A line allowed a timer or a clock, and why. */
interface Exception {
  /** The file, repository-relative. */
  file: string;
  /** Part of the line's text (enough to name it in its file). */
  line: string;
  /** Why a condition cannot take its place. */
  why: string;
}

/** The named exceptions in the folders this rule's owner keeps. */
const EXCEPTIONS: Exception[] = [
  {
    file: "tests/installers/_gemini_record.ts",
    line: "const t = performance.timeOrigin + performance.now();",
    why:
      "the clock is the subject: each hook payload's wall time, to merge it with the model exchanges in the order things happened (a recording script, not a test)",
  },
  {
    file: "tests/model_gateway/_gemini_model.ts",
    line: "const t = performance.timeOrigin + performance.now();",
    why:
      "the clock is the subject: each model exchange's wall time, merged with the hook payloads by time in the host_b gateway recording",
  },
  {
    file: "tests/tool_gateway/tool_gateway_test.ts",
    line: "setTimeout(r, 1)",
    why: "the stimulus: a tool that answers on a later turn of the event loop",
  },
  {
    file: "tests/team/replicator_guard_test.ts",
    line: "setTimeout(() => {",
    why: "the stimulus: the subject is an error thrown from a timer",
  },
  {
    file: "tests/forwarder/forwarder_test.ts",
    line: "setTimeout(() => res(null), 200)",
    why:
      "a probe: a connect still pending after 200 ms is taken for a full accept queue; taken too soon, the hook meets a silent server and must still exit 0",
  },
  {
    file: "tests/cli/prune_age_test.ts",
    line: "Date.now() - sixMonths",
    why: "the subject is a date (the cut-off --older-than computes)",
  },
  {
    file: "tests/ingest/restore_during_listen_test.ts",
    line: "heldBy = Date.now()",
    why: "the subject is the timestamp a held hook keeps",
  },
  {
    file: "tests/ingest/restore_during_listen_test.ts",
    line: "Date.now() > heldBy + 5",
    why: "a wait for the clock itself to move past the held hooks",
  },
  {
    file: "tests/package/_hostile_check.ts",
    line: "const t = performance.now()",
    why:
      "bench/_reliability_packages.ts reads the figure; the test shows it only in a failure message",
  },
  {
    file: "tests/package/_hostile_check.ts",
    line: "ms: performance.now() - t",
    why: "the same figure",
  },
  {
    file: "tests/proxy/_flaky_server.ts",
    line: "setTimeout(r, Number(Deno.args[delay + 1]))",
    why: "the stimulus: a server slow to start (`--start-delay`)",
  },
  {
    file: "tests/proxy/_hostile_server.ts",
    line: "setTimeout(",
    why: "the stimulus: a tool that answers on a later turn, after its noise",
  },
];

/**
 * Folders and files other helpers own, with the timer and clock lines they
 * hold now: no more may come. Their owners replace them (the proposed
 * changes are in the tests helper's report); a count that falls stays
 * allowed.
 */
const THEIRS: Record<string, number> = {
  // Stimuli, dates and stamps, to stay: the kill at a chosen moment, prune
  // dates, the recorded sessions' timestamps, a scripted upstream's chunk
  // pacing, a load test's pacing, lower bounds a busy machine cannot break.
  "tests/store/crash_test.ts": 1,
  "tests/store/delete_capture_test.ts": 2,
  "tests/installers/_opencode_record.ts": 1,
  "tests/installers/_opencode_model.ts": 1,
  "tests/models/openai_chat_test.ts": 4,
  "tests/models/anthropic_messages_test.ts": 2,
  "tests/model_gateway/_upstreams.ts": 3,
  "tests/model_gateway/faults_upstream_test.ts": 1,
  "tests/model_gateway/load_memory_test.ts": 1,
  // The slow head's byte pacing (the stimulus) and the client's own guard.
  "tests/ingest/http1_test.ts": 2,
};

/** The lines of `src` that start a timer or read the clock (not comments). */
function timingLines(src: string): string[] {
  return src.split("\n").map((l) => l.trim()).filter((l) =>
    !/^(\/\/|\/\*|\*)/.test(l) && TIMING.test(l)
  );
}

function files(dir: string): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) =>
    e.isDirectory ? files(join(dir, e.name)) : [join(dir, e.name)]
  ).sort();
}

/** What breaks the rule: lines no exception names, and stale entries. */
function breaches(
  found: Map<string, string[]>,
  exceptions: Exception[],
  theirs: Record<string, number>,
): string[] {
  const out: string[] = [];
  const used = new Set<Exception>();
  for (const [file, lines] of found) {
    const left = lines.filter((l) => {
      const e = exceptions.find((x) => x.file === file && l.includes(x.line));
      if (e) used.add(e);
      return !e;
    });
    if (file in theirs) {
      if (left.length > theirs[file]) {
        out.push(
          `${file}: ${left.length} timer or clock lines, at most ${
            theirs[file]
          } (a new one: wait for a condition, tests/_wait.ts)`,
        );
      }
    } else {
      for (const l of left) {
        out.push(
          `${file}: "${l}": wait for a condition (tests/_wait.ts), move the figure to bench/, or name the line in EXCEPTIONS with its reason`,
        );
      }
    }
  }
  for (const e of exceptions) {
    if (!used.has(e)) out.push(`stale exception: ${e.file}: "${e.line}"`);
  }
  return out;
}

Deno.test("tests/: no fixed sleep and no wall-clock bound, but in tests/_wait.ts and the named exceptions", () => {
  const found = new Map<string, string[]>();
  for (const f of files(TESTS)) {
    const rel = relative(ROOT, f);
    if (!rel.endsWith(".ts") || UNREAD.includes(rel)) continue;
    const lines = timingLines(Deno.readTextFileSync(f));
    if (lines.length) found.set(rel, lines);
  }
  assertEquals(breaches(found, EXCEPTIONS, THEIRS), []);
});

Deno.test("the timing rule fails a new sleep or clock bound, reads no comment or type, and names a stale exception", () => {
  const sleep = "await new Promise((r) => setTimeout(r, 100));";
  const bound = "assertOk(performance.now() - t0 < 5000);";
  const src = [
    sleep,
    "let timer: ReturnType<typeof setTimeout> | undefined;",
    "// await new Promise((r) => setTimeout(r, 100));",
    " * sleeps with setTimeout(r, 100) in a doc comment",
    bound,
  ].join("\n");
  assertEquals(timingLines(src), [sleep, bound]);
  const found = new Map([["tests/cli/x_test.ts", timingLines(src)]]);
  assertEquals(breaches(found, [], {}).length, 2);
  const named = [{ file: "tests/cli/x_test.ts", line: "setTimeout", why: "" }];
  assertEquals(breaches(found, named, {}), [
    `tests/cli/x_test.ts: "${bound}": wait for a condition (tests/_wait.ts), move the figure to bench/, or name the line in EXCEPTIONS with its reason`,
  ]);
  assertEquals(breaches(found, [], { "tests/cli/x_test.ts": 2 }), []);
  assertEquals(breaches(found, [], { "tests/cli/x_test.ts": 1 }).length, 1);
  assertEquals(
    breaches(new Map(), named, {}),
    ['stale exception: tests/cli/x_test.ts: "setTimeout"'],
  );
});
