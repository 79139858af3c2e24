/**
 * The real Gemini CLI 0.61 session of `fixtures/hosts/host_b/gateway/`
 * (recorded through `install gemini-cli --gateway`) read by the Gemini wire
 * and the hooks' join: every model request Gemini CLI sent is the wire's
 * (recorded paths), the requests that start the turn (the router's
 * classifier call, which no hook sees, and the first main call) name the
 * hooks' episode by the prompt `BeforeAgent` gave, the others continue
 * their conversation (the calls Gemini CLI sends back carry ids of its own
 * and still read as the answer's), each tool result links to its call, and
 * each answer's tokens are its last chunk's `usageMetadata`.
 *
 * @module
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { hostBToEvents } from "../../lib/adapters/gemini_cli.ts";
import { SseParser } from "../../lib/model_gateway/sse.ts";
import type {
  NormRequest,
  NormResponse,
} from "../../lib/model_gateway/wire_types.ts";
import { geminiWire } from "../../lib/model_gateway/wires/gemini/mod.ts";
import { GeminiHookJoin } from "../../lib/model_gateway/wires/gemini/hook_join.ts";

const DIR = new URL("../../fixtures/hosts/host_b/gateway/", import.meta.url);

interface Exchange {
  request: {
    method: string;
    path: string;
    query: string;
    headers: Record<string, string>;
    body: Record<string, unknown>;
  };
  answer: { content_type: string; body: string };
}

type Item = { name: string; hook?: Record<string, unknown>; ex?: Exchange };

function items(): Item[] {
  return [...Deno.readDirSync(DIR)]
    .map((e) => e.name)
    .filter((n) => /^\d{3}-/.test(n))
    .sort()
    .map((n) => {
      const text = Deno.readTextFileSync(new URL(n, DIR));
      const name = n.slice(4, -5);
      return name === "model.exchange"
        ? { name, ex: JSON.parse(text) as Exchange }
        : { name, hook: JSON.parse(text) };
    });
}

function read(
  ex: Exchange,
): { req: NormRequest; res: NormResponse; complete: boolean } {
  const route = geminiWire.match(
    ex.request.method,
    ex.request.path,
    (h) => ex.request.headers[h] ?? null,
  );
  ok(route?.recorded, `${ex.request.path} is recorded`);
  const reader = geminiWire.reader(route);
  const req = reader.request(ex.request.body);
  if (!route.stream) {
    return {
      req,
      res: reader.response(JSON.parse(ex.answer.body)),
      complete: true,
    };
  }
  const acc = reader.streamReader();
  const p = new SseParser((e, d) => acc.add(e, d));
  p.push(new TextEncoder().encode(ex.answer.body));
  p.end();
  return { req, res: acc.result(), complete: acc.complete };
}

Deno.test("gemini CLI session: the turn's requests name the hooks' episode by its prompt; the rest continue their conversation", () => {
  const join = new GeminiHookJoin();
  const all = items();
  const session = all.find((i) => i.name === "SessionStart")!.hook!
    .session_id as string;
  const named: (string | null)[] = [];
  const exchanges: { req: NormRequest; res: NormResponse; path: string }[] = [];
  for (const it of all) {
    if (it.hook) {
      for (const ev of hostBToEvents(it.hook, { captureId: "gm_gateway" })) {
        join.observe(ev);
      }
      continue;
    }
    const { req, res, complete } = read(it.ex!);
    ok(complete, "each answer ended with its finishing chunk");
    named.push(join.episodeOf("gm_gateway", req));
    exchanges.push({ req, res, path: it.ex!.request.path });
  }
  equal(exchanges.length, 4);
  ok(
    exchanges[0].path.endsWith(":generateContent"),
    "the classifier call first",
  );
  equal(exchanges[0].req.tools.length, 0, "the classifier offers no tools");
  deepEqual(named, [session, session, null, null]);
  equal(
    join.episodeOf("other_capture", exchanges[0].req),
    null,
    "only in its capture",
  );
  // The main conversation: each request continues the one before with its
  // answer (the calls sent back, with Gemini CLI's own ids in them, read
  // as the answer's), and each tool result links to its call.
  for (let i = 2; i < exchanges.length; i++) {
    const prev = exchanges[i - 1];
    const { req } = exchanges[i];
    const back = req.messages[prev.req.messages.length];
    equal(back.role, "assistant");
    deepEqual(
      back.tool_calls.map((c) => c.id),
      prev.res.tool_calls.map((c) => c.id),
    );
    equal(back.text.replace(/\s+/g, ""), prev.res.text.replace(/\s+/g, ""));
    deepEqual(
      req.messages.slice(0, prev.req.messages.length).map((m) => m.hash),
      prev.req.messages.map((m) => m.hash),
      "the history as sent before",
    );
    const results = req.messages[prev.req.messages.length + 1].tool_results;
    deepEqual(results.map((r) => r.id), prev.res.tool_calls.map((c) => c.id));
  }
  deepEqual(exchanges.flatMap((e) => e.res.tool_calls.map((c) => c.name)), [
    "read_file",
    "run_shell_command",
  ]);
  // Tokens: the last chunk's usageMetadata, never a sum of the chunks'.
  const recording = JSON.parse(
    Deno.readTextFileSync(new URL("_recording.json", DIR)),
  );
  deepEqual(
    exchanges.map((e) => e.res.usage?.total_tokens),
    recording.model_requests.map((m: { usage: { totalTokenCount: number } }) =>
      m.usage.totalTokenCount
    ),
  );
  deepEqual(
    exchanges.map((e) => e.res.usage?.input_tokens),
    recording.model_requests.map((m: { usage: { promptTokenCount: number } }) =>
      m.usage.promptTokenCount
    ),
  );
});

Deno.test("gemini hook join: two open sessions on the same prompt name neither; a finished one is forgotten", () => {
  const join = new GeminiHookJoin();
  const msg = (episode: string, text: string) => ({
    capture_id: "c",
    episode_id: episode,
    kind: "message",
    source: { host: "host_b" },
    payload: { role: "user", text },
  });
  const req = (text: string): NormRequest =>
    geminiWire.reader(
      geminiWire.match("POST", "/v1beta/models/m:generateContent", () => null)!,
    ).request({
      contents: [{
        role: "user",
        parts: [{ text: "<session_context>x</session_context>" }, { text }],
      }],
    });
  join.observe(msg("s1", "fix the bug"));
  equal(join.episodeOf("c", req("fix the bug")), "s1");
  equal(
    join.episodeOf(
      "c",
      req("fix the bug\n--- Content from referenced files ---\n…"),
    ),
    "s1",
  );
  equal(join.episodeOf("c", req("fix the bugs")), null, "another prompt");
  join.observe(msg("s2", "fix the bug"));
  equal(join.episodeOf("c", req("fix the bug")), null, "ambiguous: neither");
  join.observe({ ...msg("s2", ""), kind: "episode.finished", payload: {} });
  equal(join.episodeOf("c", req("fix the bug")), "s1");
  join.observe({ ...msg("s1", "fix the bug"), source: { host: "host_a" } });
  join.observe(msg("s1", "now the tests"));
  equal(
    join.episodeOf("c", req("fix the bug")),
    null,
    "s1 waits on its new prompt",
  );
  equal(join.episodeOf("c", req("now the tests")), "s1");
});
