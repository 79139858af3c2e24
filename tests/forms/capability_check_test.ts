import {
  assertEquals,
  assertMatch,
  assertRejects,
  assertThrows,
} from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import {
  createCapabilities,
  deskModel,
} from "../../examples/order_desk/capabilities.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import type { AnyNode as IrNode } from "../../lib/forms/form_table.ts";
import { packageDigest } from "../../lib/package/package_signature.ts";
import {
  irTools,
  PackageError,
  validatePackage,
} from "../../lib/forms/validate_package.ts";
import { runPackage } from "../../lib/forms/run_package.ts";
import { MissingCapabilityError } from "../../lib/runtime/runtime_types.ts";
import type { ChatModel } from "../../lib/models/chat_types.ts";
import { tempDir } from "../_helpers.ts";

async function deskPackage(form: "tree" | "agent"): Promise<BehaviorPackage> {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", 60);
  return compileBehavior(await loadEpisodes(store, "desk"), {
    name: "desk",
    effects: DESK_EFFECTS,
    form,
    tune: false,
  }).package;
}

/** The package with one node's tool renamed, digested again (issue 35, item 7). */
function relabel(
  pkg: BehaviorPackage,
  kind: IrNode["kind"],
  tool: string,
  list = false,
): { pkg: BehaviorPackage; node: string } {
  const doc = structuredClone(pkg);
  const nodes = (Object.values(doc.ir.nodes) as IrNode[]).filter((n) =>
    n.kind === kind
  );
  const node = nodes.at(-1) as IrNode & { tool: string };
  node.tool = tool;
  if (list) doc.manifest.required_capabilities.push(tool);
  const { digest: _, ...body } = doc;
  return { pkg: { ...body, digest: packageDigest(body) }, node: node.id };
}

Deno.test("validatePackage() refuses a re-digested package whose IR calls a tool its manifest does not list", async () => {
  const { pkg, node } = relabel(
    await deskPackage("tree"),
    "action",
    "wipe_account",
  );
  const err = assertThrows(() => validatePackage(pkg), PackageError);
  assertMatch(
    err.message,
    new RegExp(
      `node ${node} calls tool "wipe_account", which manifest.required_capabilities does not list`,
    ),
  );
});

Deno.test("runPackage() refuses a tool the IR calls and no capability binds before anything runs (the refund is not made)", async () => {
  const { pkg } = relabel(await deskPackage("tree"), "action", "wipe_account");
  const caps = createCapabilities({ episode: 700_001 });
  const before = JSON.stringify(caps.desk.state);
  const err = await assertRejects(
    () => runPackage(pkg, { ...caps, model: deskModel }),
    MissingCapabilityError,
  );
  assertEquals((err as MissingCapabilityError).missing, ["wipe_account"]);
  assertEquals(JSON.stringify(caps.desk.state), before);
  // Listed in the manifest too, the package validates, and still does not run.
  const listed = relabel(
    await deskPackage("tree"),
    "action",
    "wipe_account",
    true,
  ).pkg;
  validatePackage(listed);
  await assertRejects(
    () => runPackage(listed, { ...caps, model: deskModel }),
    MissingCapabilityError,
  );
  assertEquals(JSON.stringify(caps.desk.state), before);
});

Deno.test("runPackage() checks an agent-form package's lookup and choice tools before the model is asked", async () => {
  const pkg = await deskPackage("agent");
  const kinds = new Set(irTools(pkg.ir).map((t) => pkg.ir.nodes[t.node].kind));
  assertEquals([...kinds].sort(), ["choice", "lookup"]);
  let asked = 0;
  const chat: ChatModel = {
    id: "test/never",
    complete: () => {
      asked++;
      throw new Error("the model should not be asked");
    },
  };
  const caps = createCapabilities({ episode: 700_002 });
  const { pkg: relabelled } = relabel(pkg, "lookup", "peek");
  const err = await assertRejects(
    () => runPackage(relabelled, caps, { chat, users: ["hello"] }),
    MissingCapabilityError,
  );
  assertEquals((err as MissingCapabilityError).missing, ["peek"]);
  assertEquals(asked, 0);
});
