import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { main as compileMain } from "../../compile.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import { runMain } from "../_cli.ts";
import { tempDir } from "../_helpers.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import { withoutDeadEnds } from "../../lib/forms/core_steps.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { summarizePackage } from "../../lib/package/summary.ts";
import { validateAgentForm } from "../../lib/forms/agent/self_validation.ts";
import {
  tuneAgentForm,
  TUNING_STEPS,
} from "../../lib/forms/agent/self_tuning.ts";
import { EXTRA_LOOKUP_COST } from "../../lib/forms/agent/lookup_selection.ts";

const retail = () => {
  const data = loadTauData(
    Deno.readTextFileSync(
      new URL("../../fixtures/tau2_retail_slice.json", import.meta.url),
    ),
  );
  return {
    effects: data.effects,
    ok: data.episodes.filter((e) => e.norm.success === true).map((e) => e.norm),
  };
};

Deno.test("self-tuning: the package is built with the best cross-validated point, the defaults tried first, every point reported", () => {
  const { effects, ok } = retail();
  const r = compileBehavior(ok, { name: "retail", effects, form: "agent" });
  const v = r.package.verification;
  const t = v.tuning;
  assertOk(t, "a tuning report");
  assertEquals(t.fixed, []);
  assertEquals(t.tried[0].params, {});
  assertOk(t.tried.length >= TUNING_STEPS.length + 1, JSON.stringify(t));
  // The picked point is one of the tried ones, and none beats it.
  const picked = t.tried.find((p) =>
    JSON.stringify(p.params) === JSON.stringify(t.picked)
  );
  assertOk(picked, JSON.stringify(t.picked));
  const net = (p: { served: number; extra_lookups: number }) =>
    p.served - EXTRA_LOOKUP_COST * p.extra_lookups;
  for (const p of t.tried) {
    assertOk(
      p.stopped > picked.stopped ||
        (p.stopped === picked.stopped && net(p) <= net(picked)),
      `${JSON.stringify(p)} beats ${JSON.stringify(picked)}`,
    );
  }
  // The reported validation is the picked point's cross-validation.
  assertOk(v.validation);
  assertEquals(v.validation.served, picked.served);
  assertEquals(v.validation.stopped, picked.stopped);
  // Each tried point is reproducible by cross-validating it directly.
  const defaults = validateAgentForm(ok, { effects });
  assertEquals(defaults?.served, t.tried[0].served);
  assertEquals(defaults?.extra_lookups, t.tried[0].extra_lookups);
  const summary = summarizePackage(r.package);
  assertOk(summary.includes("  tuning        "), summary);
  assertOk(summary.includes(`${t.tried.length} points tried`), summary);
});

Deno.test("self-tuning: a parameter the caller sets is never tuned; with every one set, or tune: false, nothing is", () => {
  const { effects, ok } = retail();
  const some = tuneAgentForm(ok, { effects, adjacentShare: 0.8 });
  assertOk(some.tuning);
  assertEquals(some.tuning.fixed, ["adjacent_share"]);
  assertOk(
    some.tuning.tried.every((p) => p.params.adjacent_share === undefined),
  );
  assertEquals(some.options.adjacentShare, 0.8);
  const all = tuneAgentForm(ok, {
    effects,
    adjacentShare: 0.8,
    speculativeCoverage: 0.9,
    minYield: 0.25,
    extraLookupBudget: 3,
  });
  assertEquals(all.tuning, null);
  assertOk(all.validation, "still cross-validated");
  const off = compileBehavior(ok, {
    name: "retail",
    effects,
    form: "agent",
    tune: false,
  });
  assertEquals(off.package.verification.tuning, null);
  // The form trains on the episodes without their refused or failed calls
  // (evidence, not steps: `withoutDeadEnds`).
  assertEquals(
    off.package.verification.validation,
    validateAgentForm(ok.map(withoutDeadEnds), { effects }),
  );
});

Deno.test("self-tuning: deterministic: the same episodes in another order pick the same point and give the same package", () => {
  const { effects, ok } = retail();
  const a = compileBehavior(ok, { name: "retail", effects, form: "agent" });
  const b = compileBehavior([...ok].reverse(), {
    name: "retail",
    effects,
    form: "agent",
  });
  assertEquals(a.package.verification.tuning, b.package.verification.tuning);
  assertEquals(a.package.digest, b.package.digest);
});

Deno.test("compile.ts: the agent form is tuned by default and keeps the defaults with --no-tune", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const file = new URL("../../fixtures/tau2_retail_slice.json", import.meta.url)
    .pathname;
  const imported = await runMain([
    "import",
    "--format",
    "tau2",
    file,
    "--capture",
    "retail",
    "--root",
    root,
  ]);
  assertEquals(imported.code, 0, imported.err);
  const compile = async (extra: string[]) => {
    const out = join(dir.path, `out${extra.length}`);
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
        "--json",
        ...extra,
      ]),
      0,
    );
    return JSON.parse(
      Deno.readTextFileSync(join(out, "retail.package.json")),
    ) as BehaviorPackage;
  };
  const tuned = await compile([]);
  assertOk(tuned.verification.tuning, "tuned by default");
  const plain = await compile(["--no-tune"]);
  assertEquals(plain.verification.tuning, null);
  assertOk(plain.verification.validation, "still cross-validated");
});
