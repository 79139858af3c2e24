/**
 * `capture inspect` (text and `--json`) shows per episode what a package
 * served at the model gateway did (issue 42, item 4): the answers it
 * served, each refused call with its arguments and the reason, each
 * pass-through and why, and the estimate of upstream tokens saved. The
 * events are written in the shape the gateway records them
 * (`tests/control/_package_episode.ts`).
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { runMain } from "../_cli.ts";
import { fixedContext, tempDir } from "../_helpers.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { episodeStarted, message } from "../../lib/trace/mod.ts";
import {
  PASS_REASON,
  PKG,
  REFUSE_REASON,
  servedEpisode,
} from "../control/_package_episode.ts";

Deno.test("capture inspect --json and text: served answers, refused calls with arguments and reason, pass-throughs and why, tokens saved as a labelled lower bound", async () => {
  await using dir = await tempDir();
  const root = `${dir.path}/store`;
  {
    using store = new HarnessStore(root);
    store.sink("c").emitMany(servedEpisode("c", "ep_served"));
    // An episode no package took part in shows nothing of the kind.
    const plain = fixedContext("c", "ep_plain");
    store.sink("c").emitMany([
      episodeStarted(plain),
      message(plain, { role: "user", text: "hello" }),
    ]);
  }
  const json = await runMain([
    "capture",
    "inspect",
    "c",
    "--json",
    "--root",
    root,
  ]);
  assertEquals(json.code, 0, json.err);
  const i = JSON.parse(json.out);
  const byId = new Map(
    i.episodes.map((e: { episode_id: string }) => [e.episode_id, e]),
  );
  const a = (byId.get("ep_served") as { package: Record<string, unknown> })
    .package as {
      packages: string[];
      requests: Record<string, number>;
      served: { calls: { tool: string; arguments: unknown }[] }[];
      refused: { tool: string; arguments: unknown; reason: string }[];
      passed_through: { reason: string }[];
      upstream: {
        answers: number;
        refused_answers: number;
        refused_tokens: unknown;
      };
      tokens_saved: unknown;
    };
  assertEquals(a.packages, [PKG]);
  assertEquals(a.requests, {
    served: 2,
    forwarded: 1,
    passed_through: 1,
    gave_up: 0,
  });
  assertEquals(a.served.map((s) => s.calls), [
    [{
      tool: "find_user_id_by_email",
      arguments: { email: "sofia.li7352@example.com" },
    }],
    [{ tool: "get_order_details", arguments: { order_id: "#W2611340" } }],
  ]);
  assertEquals(
    a.refused.map(({ tool, arguments: args, reason }) => ({
      tool,
      arguments: args,
      reason,
    })),
    [{
      tool: "cancel_pending_order",
      arguments: { order_id: "#W0000001", reason: "no longer needed" },
      reason: REFUSE_REASON,
    }],
  );
  assertEquals(a.passed_through.map((p) => p.reason), [PASS_REASON]);
  assertEquals(a.upstream.answers, 3);
  assertEquals(a.upstream.refused_answers, 1);
  assertEquals(a.upstream.refused_tokens, { input: 900, output: 30 });
  // The first lookup came before any upstream request (lower bound 0) and
  // before the refused one (900); the second after the answer that passed
  // (1000) and before the request that passed through (1500).
  assertEquals(a.tokens_saved, {
    requests: 2,
    prompt_at_least: 1000,
    prompt_at_most: 2400,
    no_request_before: 1,
    no_request_after: 0,
  });
  assertEquals(
    (byId.get("ep_plain") as { package?: unknown }).package,
    undefined,
  );
  assertEquals(i.package.requests.served, 2);
  assertEquals(i.package.episodes, 1);

  const text = await runMain(["capture", "inspect", "c", "--root", root]);
  assertEquals(text.code, 0, text.err);
  const t = text.out;
  assertOk(t.includes(`package at work (${PKG})`), t);
  assertOk(
    /2 answers served, 1 call refused, 1 request passed through/.test(t),
    t,
  );
  assertOk(
    /served +#\d+ find_user_id_by_email \{"email":"sofia\.li7352@example\.com"\}/
      .test(t),
    t,
  );
  assertOk(
    t.includes(
      `cancel_pending_order {"order_id":"#W0000001","reason":"no longer needed"}: ${REFUSE_REASON}`,
    ),
    t,
  );
  assertOk(t.includes(`passed    #`) && t.includes(PASS_REASON), t);
  assertOk(
    t.includes(
      "2 upstream requests not made; prompt tokens saved: 1,000 to 2,400 (an estimate: each skipped request would have resent at least the prompt of its episode's upstream request before it and at most that of the one after it; 1 had no upstream request before it (counted 0))",
    ),
    t,
  );
  assertOk(/refused answers cost 900 in \/ 30 out tokens/.test(t), t);
});
