/**
 * Issue 43, item 1, on the agent form: the seven recorded Claude Code
 * `dataflow` sessions compiled as an agent-form package replay clean (the
 * `Bash` calls, written the same way in every session, are no longer
 * refused for want of a restricting source), so it is servable; served,
 * it leaves the queue grep to the model and refuses nothing there, and a
 * conversation of another opening passes through.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { GatewayDriver } from "../../lib/forms/agent/gateway_driver.ts";
import { tempDir } from "../_helpers.ts";
import { record, TRAINING } from "../compiler/_dataflow.ts";
import { GREP, opening, request, TOOLS } from "./_dataflow_requests.ts";

Deno.test("agent form on the dataflow sessions: clean replay, servable, the correct queue grep not refused, another opening passed through", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const episodes = await record(store, TRAINING);
  const r = compileBehavior(episodes, { name: "dataflow", form: "agent" });
  const pkg = r.package;
  assertEquals(pkg.ir.nodes[pkg.ir.root].kind, "agent");
  assertEquals(
    [r.verification.episodes_clean, r.verification.episodes_replayed],
    [7, 7],
    r.verification.problems.join("\n"),
  );
  assertEquals(pkg.manifest.not_servable, undefined);
  assertOk(
    (r.verification.dropped ?? []).some((d) =>
      d.node === "choice:Bash" &&
      /command left to the model: no restricting source/.test(d.why)
    ),
    JSON.stringify(r.verification.dropped),
  );
  const driver = new GatewayDriver(pkg);
  // The package knows the tools the sessions called (hooks record no tool
  // list): a request offering only those.
  const known = {
    tools: TOOLS.filter((t) =>
      ["Bash", "Read", "Write"].includes(t.name as string)
    ),
  };
  const req = request([opening()], known);
  assertEquals(driver.decide(req).kind, "forward");
  assertEquals(
    driver.check(req, [{ id: "toolu_1", name: "Bash", arguments: GREP }]),
    [],
  );
  const other = driver.decide(request([opening("Count the lines.")], known));
  assertEquals(other.kind, "skip");
  assertOk(
    /does not open as the 7 training sessions did/.test(
      (other as { reason: string }).reason,
    ),
  );
});
