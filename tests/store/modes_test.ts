import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { fixedContext, tempDir } from "../_helpers.ts";
import { join } from "node:path";

function fill(store: HarnessStore, id: string, n: number) {
  const sink = store.sink(id);
  const ctx = fixedContext(id);
  for (let i = 0; i < n; i++) sink.emit(annotation(ctx, { type: "note", i }));
}

/** Permission bits of a path. */
function modeOf(path: string): number {
  return Deno.statSync(path).mode! & 0o777;
}

/** Each path below `root` with its mode, in octal. */
function modes(root: string, paths: string[]): Record<string, string> {
  return Object.fromEntries(
    paths.map((p) => [p, modeOf(join(root, p)).toString(8)]),
  );
}

const FILES = [
  "harness.db",
  "harness.db-wal",
  "harness.db-shm",
  "harness.lock",
  "captures/c.jsonl",
];
const DIRS = ["captures", "blobs", "blobs/sha256", "packages"];

Deno.test({
  name:
    "HarnessStore: the index, its WAL and SHM files and the lock are 0600, packages/ and the other folders 0700",
  ignore: Deno.build.os === "windows",
  async fn() {
    await using dir = await tempDir();
    const root = join(dir.path, "store");
    using store = new HarnessStore(root);
    fill(store, "c", 3);
    store.flush();
    assertEquals(
      modes(root, FILES),
      Object.fromEntries(FILES.map((f) => [f, "600"])),
    );
    assertEquals(
      modes(root, [".", ...DIRS]),
      Object.fromEntries([".", ...DIRS].map((d) => [d, "700"])),
    );
  },
});

Deno.test({
  name:
    "HarnessStore: a store made with 0644 files and 0755 folders is narrowed to 0600 and 0700 when a writer opens it; a torn tail is set aside as 0600",
  ignore: Deno.build.os === "windows",
  async fn() {
    await using dir = await tempDir();
    const root = dir.path;
    {
      using store = new HarnessStore(root);
      fill(store, "c", 3);
      store.flush();
    }
    // As an earlier version left them (the index kept open elsewhere keeps
    // its WAL and SHM files).
    Deno.writeFileSync(join(root, "harness.db-wal"), new Uint8Array(), {
      append: true,
    });
    Deno.writeFileSync(join(root, "harness.db-shm"), new Uint8Array(), {
      append: true,
    });
    const legacy = FILES.filter((f) => f.startsWith("harness."));
    for (const f of legacy) Deno.chmodSync(join(root, f), 0o644);
    Deno.chmodSync(join(root, "packages"), 0o755);
    assertEquals(modeOf(join(root, "harness.db")), 0o644);
    // A torn last line, set aside on open.
    Deno.writeFileSync(join(root, "captures/c.jsonl"), enc('{"torn'), {
      append: true,
    });
    using store = new HarnessStore(root);
    assertEquals(
      modes(root, [...legacy, "packages"]),
      Object.fromEntries(
        [...legacy, "packages"].map((
          f,
        ) => [f, f === "packages" ? "700" : "600"]),
      ),
    );
    const torn = [...Deno.readDirSync(join(root, "captures"))]
      .filter((e) => e.name.includes(".torn-"));
    assertEquals(torn.length, 1);
    assertEquals(modeOf(join(root, "captures", torn[0].name)), 0o600);
    assertOk(store.findings.length >= 1);
  },
});

function enc(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

Deno.test({
  name:
    "the active-capture file and the packages CaptureCoordinator writes are 0600",
  ignore: Deno.build.os === "windows",
  async fn() {
    const { writeActiveCapture } = await import(
      "../../lib/store/active_capture.ts"
    );
    const { CaptureCoordinator } = await import(
      "../../lib/control/coordinator.ts"
    );
    const { DESK_EFFECTS, generateDeskEpisodes } = await import(
      "../../examples/order_desk/order_desk.ts"
    );
    await using dir = await tempDir();
    const root = join(dir.path, "store");
    using store = new HarnessStore(root);
    writeActiveCapture(root, "desk");
    assertEquals(modeOf(join(root, "active_capture")), 0o600);
    generateDeskEpisodes(store.sink("desk"), "desk", 30);
    const coord = new CaptureCoordinator(store);
    const r = await coord.compile(["desk"], { effects: DESK_EFFECTS });
    const file = (r as { file?: string; path?: string }).file ??
      (r as { path?: string }).path;
    assertOk(file, JSON.stringify(Object.keys(r)));
    assertEquals(modeOf(file!), 0o600);
    assertEquals(modeOf(`${file}.captures.json`), 0o600);
    assertEquals(modeOf(join(root, "packages")), 0o700);
  },
});
