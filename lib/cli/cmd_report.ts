/**
 * `ingest.ts report <capture_id> --out FILE.html`: the capture's
 * self-contained HTML report.
 *
 * @module
 */
import { captureReportData } from "../report/capture_data.ts";
import { renderCaptureReport } from "../report/capture_html.ts";
import { openForRead } from "./cmd_store.ts";
import { type Io, UsageError } from "./io.ts";

/**
 * Write one capture's report.
 *
 * @param a Capture, output file, store root.
 * @param io Output.
 * @returns Exit code: 0, or 1 when the chain does not verify (the report
 *   is still written, with a red banner).
 */
export async function reportCommand(
  a: { capture?: string; out?: string; root: string; json: boolean },
  io: Io,
): Promise<number> {
  if (!a.capture || !a.out) {
    throw new UsageError("report needs a capture id and --out FILE.html");
  }
  using store = openForRead(a.root);
  const data = await captureReportData(store, a.capture);
  await Deno.writeTextFile(a.out, renderCaptureReport(data));
  const calls = data.episodes.reduce((n, e) => n + e.calls.length, 0);
  io.out(
    a.json
      ? JSON.stringify({
        capture_id: a.capture,
        out: a.out,
        episodes: data.episodes.length,
        calls,
        chain_ok: data.chain.ok,
      })
      : `Wrote ${a.out}: ${data.episodes.length} episodes, ${calls} calls, chain ${
        data.chain.ok ? "ok" : "BROKEN"
      }`,
  );
  return data.chain.ok ? 0 : 1;
}
