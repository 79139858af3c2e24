/**
 * The hosts' real-name hook paths (`/hook/claude-code`, `/hook/gemini-cli`,
 * `/hook/opencode`) are the seed's (`/hook/host_a`, …) by another name:
 * the same recorded payloads, posted to each through the real server, give
 * the same answers and the same records, `source.host` the seed's name.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { HOST_TABLE } from "../../lib/trace/hosts.ts";
import { hostCPluginSource } from "../../lib/installers/host_c_plugin.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioFiles, startServer } from "../_server.ts";

const CAP = "real_names";

/** A stored capture's events. */
async function events(
  store: { readEvents(id: string): AsyncGenerator<TraceEvent> },
  cap: string,
): Promise<TraceEvent[]> {
  const out: TraceEvent[] = [];
  for await (const e of store.readEvents(cap)) out.push(e);
  return out;
}

/**
 * The records with what differs between two runs of one input taken out:
 * each event id becomes its place (`#3`) wherever it occurs (parent links
 * included), the hash chain goes (it covers ids and times), and a time the
 * server stamped on arrival goes (a host-given one stays).
 */
function comparable(evs: TraceEvent[], stamped: boolean): unknown[] {
  const place = new Map(evs.map((e, i) => [e.event_id, `#${i}`]));
  const text = JSON.stringify(
    evs.map((e) => {
      const { event_hash: _h, prev_event_hash: _p, ...rest } = e as
        & TraceEvent
        & Record<string, unknown>;
      return stamped ? { ...rest, timestamp: "(arrival)" } : rest;
    }),
  ).replace(
    /"evt_[^"]+"/g,
    (id) => JSON.stringify(place.get(JSON.parse(id)) ?? id),
  );
  return JSON.parse(text);
}

/** Post a host's payload to `/hook/<word>`; the status and the answer, its capture's parts only. */
async function post(
  url: string,
  word: string,
  body: unknown,
): Promise<[number, unknown]> {
  const res = await fetch(`${url}/hook/${word}?cap=${CAP}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!text) return [res.status, null];
  const { head: _head, ...answer } = JSON.parse(text);
  return [res.status, answer];
}

for (const host of HOST_TABLE.filter((h) => h.seed !== "host_c")) {
  Deno.test(`${host.display}: /hook/${host.name} records what /hook/${host.seed} records`, async () => {
    await using bySeed = await startServer();
    await using byName = await startServer();
    const files = scenarioFiles(`${HOSTS_DIR}/${host.seed}/basic`);
    assertOk(files.length > 3, `${host.seed}/basic has payloads`);
    for (const f of files) {
      const a = await post(bySeed.url, host.seed, f.body);
      const b = await post(byName.url, host.name, f.body);
      assertEquals(b, a, `${f.name}: the same answer`);
      assertOk(a[0] === 204 || a[0] === 200, `${f.name}: ${a[0]}`);
    }
    const seedEvents = await events(bySeed.store, CAP);
    const nameEvents = await events(byName.store, CAP);
    assertOk(seedEvents.length > 3, "the payloads made events");
    assertEquals(
      new Set(nameEvents.map((e) => e.source.host)),
      new Set([host.seed]),
      "source.host stays the seed's name",
    );
    // Claude Code's hooks carry no time: the server stamps them.
    const stamped = host.seed === "host_a";
    assertEquals(
      comparable(nameEvents, stamped),
      comparable(seedEvents, stamped),
    );
    assertEquals((await byName.store.verifyCapture(CAP)).ok, true);
  });
}

Deno.test("OpenCode: the real plugin posting to /hook/opencode records what it records at /hook/host_c", async () => {
  await using dir = await tempDir();
  const runs: TraceEvent[][] = [];
  for (const path of ["/hook/host_c", "/hook/opencode"]) {
    await using srv = await startServer();
    const file = `${dir.path}/plugin_${runs.length}.js`;
    const source = hostCPluginSource({ url: srv.url });
    assertOk(
      source.includes('"/hook/host_c"'),
      "the plugin posts to /hook/host_c",
    );
    Deno.writeTextFileSync(
      file,
      source.replace('"/hook/host_c"', `"${path}?cap=${CAP}"`)
        .replace('(cap ? "?cap=" + encodeURIComponent(cap) : "")', '""'),
    );
    const hooks = await (await import(`file://${file}`)).HarnessPlugin({});
    for (const f of scenarioFiles(`${HOSTS_DIR}/host_c/basic`)) {
      const rec = f.body as { hook: string; input: unknown; output: unknown };
      const fn = hooks[rec.hook];
      if (typeof fn !== "function") continue;
      if (rec.hook === "dispose") await fn();
      else if (rec.hook === "config" || rec.hook === "event") {
        await fn(rec.input);
      } else await fn(rec.input, rec.output);
    }
    assertEquals((await srv.store.verifyCapture(CAP)).ok, true, path);
    runs.push(await events(srv.store, CAP));
  }
  const [bySeed, byName] = runs;
  assertOk(bySeed.length > 3, "the plugin's posts made events");
  assertEquals(new Set(byName.map((e) => e.source.host)), new Set(["host_c"]));
  // The plugin stamps each envelope with the time it posts it.
  assertEquals(comparable(byName, true), comparable(bySeed, true));
});
