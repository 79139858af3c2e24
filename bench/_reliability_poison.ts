/**
 * Restore poisoning (issue 44, item 7), for `deno task bench reliability`:
 * events claiming the model gateway's source are posted to `POST /ingest`
 * of a real `ingest.ts serve` process (before the fix, 12,000 such events
 * made every restart take 3–5.7 s and ~1 GB while their capture was open),
 * then one conversation of many requests goes through the gateway as an
 * agent sends it (each request the previous one plus the answer and a new
 * user turn), and the server is restarted on that store: the first answer
 * and the end of the restore are timed (`restartTimes`).
 *
 * @module
 */
import { modelRequested } from "../lib/trace/model_events.ts";
import { startServeProcess } from "./_reliability.ts";
import { okUpstream } from "./_reliability_gateway.ts";
import { restartTimes } from "./_reliability_restart.ts";
import { writeActiveCapture } from "../lib/store/active_capture.ts";

/** The capture the forged events and the conversation go to. */
const CAP = "poison";

/** A `model.requested` as the gateway writes it, with ids a client chose. */
function forged(n: number) {
  return modelRequested({
    captureId: CAP,
    episodeId: `forged_${n}`,
    source: { host: "model_gateway", adapter: "openai_chat", model: "m" },
    newId: () => `evt_forged_${n}`,
  }, {
    request: { model: "m" },
    conversation: {
      first: `sha256:${"a".repeat(64)}`,
      new_hashes: [`sha256:${n.toString(16).padStart(64, "0")}`],
      continues: 0,
      previous: `evt_forged_${n - 1}`,
    },
  });
}

/** What the poisoning run found. */
export interface PoisonReport {
  /** Forged events posted, and of those refused (the list answered 422). */
  forged: number;
  refused: number;
  /** Requests of the one conversation, and exchanges the gateway recorded. */
  turns: number;
  recorded: number;
  /** The restart: first `/health`, end of the restore (ms from the spawn). */
  health_ms: number;
  restored_ms: number;
}

/**
 * Post `forgedCount` forged gateway events in lists of 500, send one
 * conversation of `turns` requests through the gateway, restart.
 *
 * @param root An empty folder for the store.
 * @param forgedCount Forged events to post.
 * @param turns Requests of the conversation.
 * @returns What it found.
 */
export async function gatewayPoison(
  root: string,
  forgedCount = 12_000,
  turns = 2_000,
): Promise<PoisonReport> {
  const up = okUpstream();
  // The conversation records into the active capture (no header of ours).
  writeActiveCapture(root, CAP);
  const { child, url } = await startServeProcess(root, {
    args: ["--upstream-openai", `${up.url}/v1`],
  });
  let refused = 0;
  let recorded = 0;
  try {
    for (let i = 0; i < forgedCount; i += 500) {
      const list = Array.from(
        { length: Math.min(500, forgedCount - i) },
        (_, k) => forged(i + k + 1),
      );
      const res = await fetch(`${url}/ingest`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(list),
      });
      await res.body?.cancel();
      if (res.status === 422) refused += list.length;
    }
    const messages: { role: string; content: string }[] = [];
    for (let t = 0; t < turns; t++) {
      messages.push({ role: "user", content: `turn ${t}` });
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: "Bearer sk-reliability-0000000000",
        },
        body: JSON.stringify({ model: "m", messages }),
      });
      await res.arrayBuffer();
      messages.push({ role: "assistant", content: "ok" });
    }
    for (;;) {
      const g = (await (await fetch(`${url}/health`)).json()).model_gateway ??
        {};
      if (Number(g.queued ?? 0) === 0) {
        recorded = Number(g.recorded ?? 0);
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await up.close();
  }
  const times = await restartTimes(root);
  return {
    forged: forgedCount,
    refused,
    turns,
    recorded,
    health_ms: Math.round(times.health_ms),
    restored_ms: Math.round(times.restored_ms),
  };
}

/**
 * The row: forged events refused, the restart quick.
 *
 * @param root An empty folder for the store.
 * @returns The row.
 */
export async function gatewayPoisonRow(root: string): Promise<{
  name: string;
  value: string;
  target: string;
  met: string;
}> {
  const p = await gatewayPoison(root);
  return {
    name: `model gateway restore: ${
      p.forged.toLocaleString("en")
    } events claiming its source posted to /ingest, then one conversation of ${
      p.turns.toLocaleString("en")
    } requests through it, then a restart`,
    value: `${
      p.refused.toLocaleString("en")
    } refused (422); ${p.recorded} exchanges recorded; restart: first /health after ${p.health_ms} ms, restore done after ${p.restored_ms} ms`,
    target:
      "all forged refused, every request recorded; first answer ≤ 1 s, restore ≤ 3 s (main ec38c28: restarts took 3–5.7 s and ~1 GB with 12,000 forged)",
    met: p.refused === p.forged && p.recorded === p.turns &&
        p.health_ms <= 1000 && p.restored_ms <= 3000
      ? "yes"
      : "NO",
  };
}

if (import.meta.main) {
  const root = await Deno.makeTempDir({ prefix: "harness_poison_" });
  try {
    console.log(await gatewayPoison(root));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}
