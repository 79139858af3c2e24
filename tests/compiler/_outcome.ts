/**
 * Test helper: mark recorded episodes successful, as a user's outcome
 * annotation would.
 *
 * @module
 */
import type { HarnessStore } from "../../lib/store/mod.ts";
import { annotation } from "../../lib/trace/episode_events.ts";

/**
 * Emit an `episode.outcome` annotation with `success: true` for each episode
 * of capture `"cap"`.
 *
 * @param sink The capture's sink.
 * @param episodes The episodes to mark.
 */
export function markSucceeded(
  sink: ReturnType<HarnessStore["sink"]>,
  episodes: readonly { episode_id: string }[],
): void {
  for (const e of episodes) {
    sink.emit(annotation({
      captureId: "cap",
      episodeId: e.episode_id,
      source: { host: "test", adapter: "test", model: null },
    }, { type: "episode.outcome", success: true }));
  }
}
