/**
 * host_a's session transcript, read where the hook runs. Claude Code sends
 * no token counts in its hook payloads; they are in the JSONL transcript
 * whose path every payload carries (`transcript_path`, and
 * `agent_transcript_path` on SubagentStop). The forwarder reads what the
 * host appended since its last read, keeps the assistant turns (model,
 * usage, text) and sends them inside the hook payload as
 * `harness_transcript`. The ingest server never opens a path: it maps
 * what arrives.
 *
 * SessionEnd reads too: what the host wrote after the last Stop is counted
 * there (the offsets keep any turn from being counted twice).
 *
 * The host may fire Stop (or StopFailure, SubagentStop) before it has
 * written the record that carries the hook's `last_assistant_message`: the
 * forwarder then reads again, a few times within
 * {@linkcode MAX_TRANSCRIPT_WAIT_MS}, until a turn with that text is in
 * what it read, so the turn's usage is not left for a read that may never
 * come. A transcript the payload names that does not exist (the
 * summariser's SubagentStop in a compaction) is reported as `missing`: the
 * model calls it would hold are not counted.
 *
 * Offset state: one small JSON file per transcript, `<stateDir>/<sha256 of
 * the path>.json` = `{path, offset, last_message_id}`, where `offset` is the
 * byte just past the last complete line read and `last_message_id` the id of
 * the last assistant record read: a message whose records two reads split
 * is sent the second time as `continued` (counted once). A transcript
 * shorter than its offset (it was rewritten) is read again from the start.
 *
 * @module
 */

/** Default directory of the per-transcript offset files. */
export const DEFAULT_TRANSCRIPT_STATE_DIR = "/tmp/harness-hook-state";

/** Most bytes read from a transcript in one hook (the rest waits). */
export const MAX_TRANSCRIPT_READ_BYTES = 16 * 1024 * 1024;

/**
 * host_a hooks at which the transcript is read. SessionEnd reads what came
 * after the last Stop (a session ended with Ctrl-C or `/exit` mid-turn, a
 * turn written after the Stop's wait): it carries no
 * `last_assistant_message`, so it never waits.
 */
export const TRANSCRIPT_HOOKS: readonly string[] = [
  "SubagentStart",
  "Stop",
  "StopFailure",
  "SubagentStop",
  "PreCompact",
  "SessionEnd",
];

/**
 * Longest wait, in milliseconds, for the record that carries the hook's
 * `last_assistant_message` (spent only when it is not there yet).
 */
export const MAX_TRANSCRIPT_WAIT_MS = 250;

/** Pause between two reads while waiting for that record, in milliseconds. */
export const TRANSCRIPT_POLL_MS = 25;

/** One assistant turn (one model message) from a transcript. */
export interface TranscriptTurn {
  /** The model's message id (records of one message share it). */
  message_id: string;
  /** Model id. */
  model: string | null;
  /** The host's timestamp of the message's last record. */
  timestamp: string | null;
  /** The message's usage as the host recorded it. */
  usage: Record<string, unknown> | null;
  /** Text blocks, joined with newlines. */
  text: string;
  /** Tool-use ids the message asked for. */
  tool_use_ids: string[];
  /**
   * The message's first records were in an earlier read (the read before
   * ended inside it): its model call was counted then.
   */
  continued?: true;
}

/** What the forwarder adds to a hook payload. */
export interface TranscriptDelta {
  /** Which payload field named the file. */
  field: "transcript_path" | "agent_transcript_path";
  /** Byte offset read from. */
  from_offset: number;
  /** Byte offset read to (just past the last complete line). */
  to_offset: number;
  /** Assistant turns in that range, in order. */
  turns: TranscriptTurn[];
  /**
   * True when the named transcript does not exist: the model calls it
   * would hold are not counted.
   */
  missing?: true;
}

/** Where the offset files live. */
export interface TranscriptOptions {
  /**
   * Directory of the offset files.
   * @default DEFAULT_TRANSCRIPT_STATE_DIR
   */
  stateDir?: string;
  /**
   * Longest wait for the record carrying `last_assistant_message`, in ms.
   * @default MAX_TRANSCRIPT_WAIT_MS
   */
  maxWaitMs?: number;
  /**
   * The pause between reads while waiting (the clock, passed in).
   * @default a timer of the given milliseconds
   */
  sleep?: (ms: number) => Promise<void>;
}

async function stateFile(stateDir: string, path: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(path),
  );
  const hex = [...new Uint8Array(digest)].map((b) =>
    b.toString(16).padStart(2, "0")
  ).join("");
  return `${stateDir}/${hex.slice(0, 32)}.json`;
}

/** Where the last read of a transcript ended. */
interface ReadState {
  /** Byte just past the last complete line read. */
  offset: number;
  /** Message id of the last assistant record read, if any. */
  last_message_id: string | null;
}

async function readState(file: string, path: string): Promise<ReadState> {
  try {
    const s = JSON.parse(await Deno.readTextFile(file));
    if (s?.path !== path || !Number.isInteger(s.offset) || s.offset < 0) {
      return { offset: 0, last_message_id: null };
    }
    return {
      offset: s.offset,
      last_message_id: typeof s.last_message_id === "string"
        ? s.last_message_id
        : null,
    };
  } catch {
    return { offset: 0, last_message_id: null };
  }
}

/** The message id of the last assistant record among lines, or null. */
function lastMessageId(lines: readonly string[]): string | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i].includes('"assistant"')) continue;
    const [turn] = assistantTurns([lines[i]]);
    if (turn) return turn.message_id;
  }
  return null;
}

/**
 * Read what a transcript gained since the last read and remember the new
 * offset.
 *
 * @param path The transcript (as the host named it).
 * @param options Where offsets are kept.
 * @returns The lines read, the byte range, and the message id the read
 *   before ended in (null when none, or when the file was read again from
 *   its start).
 * @throws {Deno.errors.NotFound} When the transcript does not exist.
 */
export async function readTranscriptLines(
  path: string,
  options: TranscriptOptions = {},
): Promise<
  { lines: string[]; from: number; to: number; previous: string | null }
> {
  const dir = options.stateDir ?? DEFAULT_TRANSCRIPT_STATE_DIR;
  const file = await stateFile(dir, path);
  using f = await Deno.open(path, { read: true });
  const size = (await f.stat()).size;
  const state = await readState(file, path);
  let from = state.offset;
  let previous = state.last_message_id;
  if (from > size) [from, previous] = [0, null];
  const want = Math.min(size - from, MAX_TRANSCRIPT_READ_BYTES);
  const buf = new Uint8Array(want);
  await f.seek(from, Deno.SeekMode.Start);
  let got = 0;
  while (got < want) {
    const n = await f.read(buf.subarray(got));
    if (n === null) break;
    got += n;
  }
  const end = buf.subarray(0, got).lastIndexOf(0x0a);
  if (end < 0) return { lines: [], from, to: from, previous };
  const text = new TextDecoder().decode(buf.subarray(0, end));
  const to = from + end + 1;
  const lines = text.split("\n");
  const last = lastMessageId(lines) ?? previous;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    file,
    JSON.stringify({ path, offset: to, last_message_id: last }) + "\n",
  );
  return { lines, from, to, previous };
}

/**
 * The assistant turns of transcript lines: records of one message (same
 * `message.id`) merged, usage from its last record, text blocks joined.
 *
 * @param lines JSONL lines.
 * @returns Turns in order of first appearance.
 */
export function assistantTurns(lines: readonly string[]): TranscriptTurn[] {
  const byId = new Map<string, TranscriptTurn>();
  for (const line of lines) {
    if (!line.includes('"assistant"')) continue;
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(line);
    } catch {
      continue;
    }
    if (r?.type !== "assistant") continue;
    const m = (r.message ?? {}) as Record<string, unknown>;
    const id = typeof m.id === "string" ? m.id : String(r.uuid ?? "");
    if (!id) continue;
    let turn = byId.get(id);
    if (!turn) {
      turn = {
        message_id: id,
        model: typeof m.model === "string" ? m.model : null,
        timestamp: null,
        usage: null,
        text: "",
        tool_use_ids: [],
      };
      byId.set(id, turn);
    }
    if (typeof r.timestamp === "string") turn.timestamp = r.timestamp;
    if (typeof m.usage === "object" && m.usage !== null) {
      turn.usage = m.usage as Record<string, unknown>;
    }
    for (const c of Array.isArray(m.content) ? m.content : []) {
      if (c?.type === "text" && typeof c.text === "string" && c.text) {
        turn.text = turn.text ? `${turn.text}\n${c.text}` : c.text;
      } else if (c?.type === "tool_use" && typeof c.id === "string") {
        turn.tool_use_ids.push(c.id);
      }
    }
  }
  return [...byId.values()];
}

/** Whether one of the turns carries the text the hook says the user saw. */
function carries(turns: readonly TranscriptTurn[], text: string): boolean {
  const want = text.trim();
  return turns.some((t) => t.text.trim() === want);
}

/** Bytes before the offset looked at for a record an earlier hook read. */
const LOOK_BACK_BYTES = 256 * 1024;

/**
 * The whole lines of the transcript's last {@linkcode LOOK_BACK_BYTES}
 * before an offset (the first, cut, line left out).
 */
async function readBefore(path: string, offset: number): Promise<string[]> {
  try {
    using f = await Deno.open(path, { read: true });
    const start = Math.max(0, offset - LOOK_BACK_BYTES);
    const buf = new Uint8Array(offset - start);
    await f.seek(start, Deno.SeekMode.Start);
    let got = 0;
    while (got < buf.length) {
      const n = await f.read(buf.subarray(got));
      if (n === null) break;
      got += n;
    }
    const lines = new TextDecoder().decode(buf.subarray(0, got)).split("\n");
    return start > 0 ? lines.slice(1) : lines;
  } catch {
    return [];
  }
}

/**
 * Read what the transcript gained and, when the hook names a last
 * assistant message (`lastText`) that is not there yet, read again until
 * it is (within the wait).
 */
async function readDelta(
  path: string,
  options: TranscriptOptions & { lastText: string | null },
): Promise<{ from: number; to: number; turns: TranscriptTurn[] }> {
  const { lastText } = options;
  const first = await readTranscriptLines(path, options);
  const lines = [...first.lines];
  let { from, to } = first;
  let previous = first.previous;
  let turns = assistantTurns(lines);
  // Read by an earlier hook (PreCompact, a replayed Stop): nothing to wait for.
  const earlier = lastText !== null && !carries(turns, lastText) &&
    from > 0 &&
    await readBefore(path, from).then((l) =>
      carries(assistantTurns(l), lastText)
    );
  const maxWait = earlier ? 0 : options.maxWaitMs ?? MAX_TRANSCRIPT_WAIT_MS;
  const sleep = options.sleep ??
    ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (
    let waited = 0;
    lastText !== null && !carries(turns, lastText) && waited < maxWait;
    waited += TRANSCRIPT_POLL_MS
  ) {
    await sleep(TRANSCRIPT_POLL_MS);
    const more = await readTranscriptLines(path, options);
    if (more.from !== to) {
      // Rewritten meanwhile and read again from its start.
      lines.length = 0;
      from = more.from;
      previous = null;
    }
    lines.push(...more.lines);
    to = more.to;
    turns = assistantTurns(lines);
  }
  // The read before ended inside this message: counted then.
  if (previous !== null && turns[0]?.message_id === previous) {
    turns[0].continued = true;
  }
  return { from, to, turns };
}

/**
 * Add `harness_transcript` to a host_a hook payload at the hooks that read
 * the transcript. Fails open: any problem (not JSON, no path, no
 * permission) returns the body unchanged; a transcript that does not exist
 * is sent as `missing`.
 *
 * @param host Host name (only `host_a` is read).
 * @param body The payload text, as the host gave it.
 * @param options Where offsets are kept, how long to wait.
 * @returns The body to send.
 */
export async function withTranscript(
  host: string,
  body: string,
  options: TranscriptOptions = {},
): Promise<string> {
  if (host !== "host_a") return body;
  try {
    const p = JSON.parse(body);
    if (!TRANSCRIPT_HOOKS.includes(p?.hook_event_name)) return body;
    const field = p.hook_event_name === "SubagentStop" &&
        typeof p.agent_transcript_path === "string"
      ? "agent_transcript_path"
      : "transcript_path";
    const path = p[field];
    if (typeof path !== "string" || path === "") return body;
    const lastText = typeof p.last_assistant_message === "string" &&
        p.last_assistant_message.trim() !== ""
      ? p.last_assistant_message
      : null;
    let delta: TranscriptDelta;
    try {
      const { from, to, turns } = await readDelta(path, {
        ...options,
        lastText,
      });
      delta = { field, from_offset: from, to_offset: to, turns };
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      delta = { field, from_offset: 0, to_offset: 0, turns: [], missing: true };
    }
    return JSON.stringify({ ...p, harness_transcript: delta });
  } catch {
    return body;
  }
}
