import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
  assertThrows,
} from "../_assert.ts";
import {
  type CommandTable,
  parseCommandLine,
  tableOptions,
} from "../../lib/cli/command.ts";
import { UsageError } from "../../lib/cli/io.ts";
import { INGEST_COMMANDS } from "../../lib/cli/ingest_commands.ts";
import { INGEST_COMMON } from "../../lib/cli/ingest_context.ts";
import {
  COMPILE,
  COMPILE_COMMANDS,
  COMPILE_COMMON,
} from "../../lib/cli/compile_commands.ts";

const run = () => Promise.resolve(0);

Deno.test("tableOptions() refuses one flag declared two ways", () => {
  const table: CommandTable<unknown> = {
    a: { options: { out: { type: "string" } }, run },
    b: { options: { out: { type: "boolean" } }, run },
  };
  const err = assertThrows(() => tableOptions(table, {}), TypeError);
  assertMatch(err.message, /--out/);
});

Deno.test("tableOptions() holds the flags of the entries' tables", () => {
  const ingest = tableOptions(INGEST_COMMANDS, INGEST_COMMON);
  for (const flag of ["root", "json", "port", "expect-head", "proxy", "out"]) {
    assertEquals(flag in ingest, true, flag);
  }
  const compile = tableOptions(
    { ...COMPILE_COMMANDS, "": COMPILE },
    COMPILE_COMMON,
  );
  assertEquals(compile.capture, { type: "string", multiple: true });
});

Deno.test("parseCommandLine() gives typed values and refuses unknown flags", async () => {
  const options = {
    out: { type: "string" as const },
    trace: { type: "boolean" as const, default: false },
    capture: { type: "string" as const, multiple: true },
  };
  const cl = await parseCommandLine(
    ["run", "p.json", "--out", "o", "--capture", "a", "--capture", "b"],
    options,
  );
  assertEquals(cl.positionals, ["run", "p.json"]);
  assertEquals(cl.string("out"), "o");
  assertEquals(cl.flag("trace"), false);
  assertEquals(cl.strings("capture"), ["a", "b"]);
  assertEquals(cl.string("capture"), undefined);
  const err = await assertRejects(
    () => parseCommandLine(["--nope"], options),
    UsageError,
  );
  assertMatch(err.message, /--nope/);
});

Deno.test("a flag the chosen command does not read is refused (exit 2), naming the command's own flags", async () => {
  const out: string[] = [];
  const err: string[] = [];
  const { main } = await import("../../ingest.ts");
  const code = await main(["capture", "list", "--port", "3"], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  assertEquals(code, 2);
  assertOk(
    err.join("\n").includes("capture does not take --port (its flags: --db"),
    err.join("\n"),
  );
  // The common flags pass with any command.
  const dir = Deno.makeTempDirSync();
  try {
    const ok = await main(["capture", "list", "--root", dir, "--json"], {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
    });
    assertEquals(ok, 0);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
