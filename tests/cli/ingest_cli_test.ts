import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { main } from "../../ingest.ts";
import { messageEventJson, tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";

async function run(
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(args, {
    out: (t) => out += t + "\n",
    err: (t) => err += t + "\n",
  });
  return { code, out, err };
}

Deno.test("ingest.ts demo captures, reports lineage, compiles, runs a fresh instance with tracing, and the read commands see it", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const demo = await run(["demo", "--root", root, "--json"]);
  assertEquals(demo.code, 0, demo.err);
  const d = JSON.parse(demo.out);
  assertEquals(d.lineage.chain.ok, true);
  assertEquals(d.lineage.fidelity, "F3");
  assertEquals(d.generated.episodes, 200);
  assertEquals(
    d.package.verification.replay_passed,
    d.package.verification.replay_checks,
  );
  assertEquals(d.package.manifest.promoted_to_e4, true);
  assertEquals(d.run.status, "completed");
  assertEquals(d.run.outcome.success, true);
  assertEquals(d.run.model_calls.length, 1);
  assertEquals(d.run_lineage.chain.ok, true);
  assertOk(Deno.statSync(d.artifacts.package).isFile);
  const id = d.capture_id as string;

  const list = await run(["capture", "list", "--root", root, "--json"]);
  assertEquals(
    JSON.parse(list.out).map((
      c: { capture_id: string; status: string },
    ) => [c.capture_id, c.status]),
    [[id, "finished"], [`${id}_run`, "finished"]],
  );
  const inspect = await run([
    "capture",
    "inspect",
    `${id}_run`,
    "--root",
    root,
  ]);
  assertEquals(inspect.code, 0);
  // 40 events of the run, and the run capture's start and finish.
  assertOk(/chain ok: 42 events/.test(inspect.out), inspect.out);
  const runCapture = JSON.parse(list.out)[1];
  assertEquals(runCapture.status, "finished");
  const verify = await run(["capture", "verify", id, "--root", root, "--json"]);
  assertEquals([verify.code, JSON.parse(verify.out).ok], [0, true]);
});

Deno.test("ingest.ts capture verify exits 1 and names the sequence of a tampered line", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const d = JSON.parse((await run(["demo", "--root", root, "--json"])).out);
  const spool = join(root, "captures", `${d.capture_id}.jsonl`);
  const lines = Deno.readTextFileSync(spool).split("\n");
  lines[5] = lines[5].replace("U-10000", "U-10001");
  Deno.writeTextFileSync(spool, lines.join("\n"));
  const verify = await run(["capture", "verify", d.capture_id, "--root", root]);
  assertEquals(verify.code, 1);
  assertOk(/BROKEN .* at sequence 6 \(line 6/.test(verify.out), verify.out);
});

Deno.test("ingest.ts store rebuild-index restores a deleted index", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const d = JSON.parse((await run(["demo", "--root", root, "--json"])).out);
  const total = d.lineage.chain.events + d.run_lineage.chain.events;
  await Deno.remove(join(root, "harness.db"));
  const r = await run(["store", "rebuild-index", "--root", root, "--json"]);
  assertEquals(r.code, 0, r.err);
  assertEquals(JSON.parse(r.out).events, total);
  const list = JSON.parse(
    (await run(["capture", "list", "--root", root, "--json"])).out,
  );
  assertEquals(list[0].event_count, d.lineage.chain.events);
});

Deno.test("ingest.ts answers unknown commands and missing captures with clear errors", async () => {
  await using dir = await tempDir();
  const unknown = await run(["capture", "frobnicate", "--root", dir.path]);
  assertEquals(unknown.code, 2);
  assertOk(/unknown command "capture frobnicate"/.test(unknown.err));
  const missing = await run(["capture", "inspect", "nope", "--root", dir.path]);
  assertEquals(missing.code, 1);
  assertOk(/Capture "nope" not found/.test(missing.err));
  const badId = await run(["capture", "verify", "../x", "--root", dir.path]);
  assertEquals(badId.code, 1);
  assertOk(/Invalid capture id/.test(badId.err), badId.err);
});

Deno.test("--help per command shows that command, and --json errors are JSON on stderr", async () => {
  const help = await run(["capture", "verify", "--help"]);
  assertEquals(help.code, 0);
  assertOk(help.out.includes("capture verify <id>"), help.out);
  assertOk(!help.out.includes("ingest.ts serve"), help.out);
  const serve = await run(["serve", "--help"]);
  assertOk(
    serve.out.includes("--redact-rules") &&
      !serve.out.includes("capture verify"),
  );
  await using dir = await tempDir();
  const missing = await run([
    "capture",
    "inspect",
    "nope",
    "--root",
    join(dir.path, "s"),
    "--json",
  ]);
  assertEquals(missing.code, 1);
  const err = JSON.parse(missing.err);
  assertEquals([err.ok, err.exit_code], [false, 1]);
  assertOk(/not found/.test(err.error), err.error);
  const usage = await run(["bogus", "--json"]);
  assertEquals(usage.code, 2);
  assertEquals(JSON.parse(usage.err).exit_code, 2);
});

Deno.test("token mode end to end: every CLI path sends the token, and nothing is reported recorded that the server refused", async () => {
  await using srv = await startServer({ token: "t0k-123" });
  const root = srv.root;
  // The CLI in its own process with the token in its environment (never
  // this process's: test files run in parallel and share it).
  const withToken = async (token: string | null, args: string[]) => {
    const env = Deno.env.toObject();
    delete env.HARNESS_INGEST_TOKEN;
    if (token !== null) env.HARNESS_INGEST_TOKEN = token;
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--allow-read",
        "--allow-write=/tmp",
        "--allow-env",
        "--allow-net=127.0.0.1",
        new URL("../../ingest.ts", import.meta.url).pathname,
        ...args,
        "--root",
        root,
      ],
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    return { code: r.code, out: text(r.stdout), err: text(r.stderr) };
  };
  assertEquals(
    (await withToken("t0k-123", ["capture", "start", "--id", "c1"])).code,
    0,
  );
  const list = await withToken("t0k-123", ["capture", "list", "--json"]);
  assertEquals(list.code, 0, list.err);
  assertOk(list.out.includes('"c1"'));
  assertEquals(
    (await withToken("t0k-123", ["capture", "inspect", "c1"])).code,
    0,
  );
  // Outcomes are for episodes the capture holds: ep_1 and ep_2 get a message.
  for (const ep of ["ep_1", "ep_2"]) {
    const res = await fetch(`${srv.url}/ingest`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer t0k-123",
      },
      body: messageEventJson(`evt_${ep}`, "c1").replace('"ep_1"', `"${ep}"`),
    });
    assertEquals(res.status, 200, await res.text());
  }
  const ok = await withToken("t0k-123", [
    "capture",
    "outcome",
    "c1",
    "ep_1",
    "--failure",
  ]);
  assertEquals(ok.code, 0, ok.err);
  const refused = await withToken("wrong", [
    "capture",
    "outcome",
    "c1",
    "ep_2",
    "--success",
  ]);
  assertEquals(refused.code, 1);
  assertOk(/did not record the outcome.*401/.test(refused.err), refused.err);
  assertOk(!refused.out.includes("Recorded"), refused.out);
  const noToken = await withToken(null, ["capture", "list"]);
  assertEquals(noToken.code, 1);
  assertOk(/HARNESS_INGEST_TOKEN/.test(noToken.err), noToken.err);
  const outcomes: string[] = [];
  for await (const ev of srv.store.readEvents("c1")) {
    if (ev.kind === "annotation" && ev.payload.type === "episode.outcome") {
      outcomes.push(ev.episode_id);
    }
  }
  assertEquals(outcomes, ["ep_1"]);
  // One the capture does not hold is refused before anything is sent.
  const unknown = await withToken("t0k-123", [
    "capture",
    "outcome",
    "c1",
    "ep_3",
    "--success",
  ]);
  assertEquals(unknown.code, 1);
  assertOk(/"ep_3" is not in capture "c1"/.test(unknown.err), unknown.err);
});
