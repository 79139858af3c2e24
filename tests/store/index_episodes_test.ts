import { assertEquals } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { episodeStarted, message } from "../../lib/trace/mod.ts";
import { fixedContext, tempDir } from "../_helpers.ts";

// The index reads an episode's row in the flush that first writes it
// again: an episode continued after a flush, or after the store was opened
// again, keeps its start and its count; a new one is counted once.
Deno.test("the index's episode rows add up across flushes and reopens", async () => {
  await using dir = await tempDir();
  const a = fixedContext("cap_e", "ep_a");
  const b = fixedContext("cap_e", "ep_b");
  let first: { timestamp: string }[] = [];
  {
    using store = new HarnessStore(dir.path);
    const sink = store.sink("cap_e");
    first = sink.emitMany([
      episodeStarted(a),
      message(a, { role: "user", text: "one" }),
      message(b, { role: "user", text: "two" }),
    ]);
    assertEquals(store.getCapture("cap_e")!.episode_count, 2);
    // A flush came between: the episode goes on.
    sink.emit(message(a, { role: "user", text: "three" }));
    const [ea, eb] = store.listEpisodes("cap_e");
    assertEquals(
      [ea.episode_id, ea.event_count, ea.first_sequence, ea.last_sequence],
      ["ep_a", 3, 1, 4],
    );
    assertEquals([ea.started, eb.started, eb.event_count], [true, false, 1]);
  }
  {
    // Opened again: nothing of the episodes is in memory.
    using store = new HarnessStore(dir.path);
    const sink = store.sink("cap_e");
    const c = fixedContext("cap_e", "ep_c");
    sink.emitMany([
      message(b, { role: "user", text: "four" }),
      episodeStarted(c),
      message(a, { role: "user", text: "five" }),
    ]);
    const cap = store.getCapture("cap_e")!;
    assertEquals([cap.event_count, cap.episode_count], [7, 3]);
    const rows = store.listEpisodes("cap_e").map((
      e,
    ) => [
      e.episode_id,
      e.event_count,
      e.first_sequence,
      e.last_sequence,
      e
        .started,
    ]);
    assertEquals(rows, [
      ["ep_a", 4, 1, 7, true],
      ["ep_b", 2, 3, 5, false],
      ["ep_c", 1, 6, 6, true],
    ]);
    assertEquals(
      store.listEpisodes("cap_e")[0].first_timestamp,
      first[0].timestamp,
    );
  }
});
