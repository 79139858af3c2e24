/**
 * Signed packages on the command line (issue 35, items 7, 8 and 12):
 * `compile.ts keygen`, `compile --sign`, `compile verify`, `run --trust`,
 * a relabelled package refused by `run`, and `--name` kept inside `--out`.
 */
import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
} from "../_assert.ts";
import { join } from "node:path";
import { main as compileMain } from "../../compile.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import {
  packageDigest,
  type SignedPackage,
  UntrustedPackageError,
} from "../../lib/package/package_signature.ts";
import { PackageError } from "../../lib/package/package_error.ts";
import { runCommand } from "../../lib/cli/cmd_run.ts";
import { tempDir } from "../_helpers.ts";

const CAPABILITIES =
  new URL("../../examples/order_desk/run_capabilities.ts", import.meta.url)
    .pathname;

/** `compile.ts` in-process, its console output collected. */
async function compileCli(
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const { log, error } = console;
  let out = "", err = "";
  console.log = (...a: unknown[]) => out += a.join(" ") + "\n";
  console.error = (...a: unknown[]) => err += a.join(" ") + "\n";
  try {
    return { code: await compileMain(args), out, err };
  } finally {
    console.log = log;
    console.error = error;
  }
}

/** A store with desk episodes, its effects file, and a folder for output. */
function deskStore(
  dir: string,
): { root: string; effects: string } {
  const root = join(dir, "store");
  using store = new HarnessStore(root);
  generateDeskEpisodes(store.sink("desk"), "desk", 60);
  const effects = join(dir, "effects.json");
  Deno.writeTextFileSync(effects, JSON.stringify(DESK_EFFECTS));
  return { root, effects };
}

function compileArgs(
  s: { root: string; effects: string },
  out: string,
  ...more: string[]
): string[] {
  return [
    "--capture",
    "desk",
    "--out",
    out,
    "--name",
    "desk",
    "--root",
    s.root,
    "--effects",
    s.effects,
    ...more,
  ];
}

const readPkg = (path: string) =>
  JSON.parse(Deno.readTextFileSync(path)) as SignedPackage;

/** Edit a package file and write it back with a fresh digest. */
function tamper(path: string, edit: (p: BehaviorPackage) => void): void {
  const doc = readPkg(path);
  edit(doc);
  doc.digest = packageDigest(doc as never);
  Deno.writeTextFileSync(path, JSON.stringify(doc, null, 2));
}

Deno.test("compile.ts keygen makes a private signing key (0600) and its public key, and never overwrites them", async () => {
  await using dir = await tempDir();
  const keys = join(dir.path, "keys");
  const r = await compileCli(["keygen", "--out", keys, "--json"]);
  assertEquals(r.code, 0, r.err);
  const made = JSON.parse(r.out);
  const priv = JSON.parse(Deno.readTextFileSync(made.signing_key));
  const pub = JSON.parse(Deno.readTextFileSync(made.public_key));
  assertEquals([priv.kty, priv.crv, typeof priv.d], [
    "OKP",
    "Ed25519",
    "string",
  ]);
  assertEquals(pub, { kty: "OKP", crv: "Ed25519", x: priv.x, kid: made.key });
  assertEquals(made.key, `ed25519:${priv.x}`);
  assertEquals(Deno.statSync(made.signing_key).mode! & 0o777, 0o600);
  const again = await compileCli(["keygen", "--out", keys]);
  assertEquals(again.code, 2);
  assertMatch(again.err, /already exists: keygen never overwrites a key/);
  assertEquals(JSON.parse(Deno.readTextFileSync(made.signing_key)), priv);
});

Deno.test("compile.ts --sign signs without changing the digest; verify checks it from the package alone; run --trust takes only a trusted signer", async () => {
  await using dir = await tempDir();
  const s = deskStore(dir.path);
  const keys = join(dir.path, "keys");
  const other = join(dir.path, "other");
  assertEquals((await compileCli(["keygen", "--out", keys])).code, 0);
  assertEquals((await compileCli(["keygen", "--out", other])).code, 0);
  const plain = await compileCli(compileArgs(s, join(dir.path, "plain")));
  assertEquals(plain.code, 0, plain.err);
  const signedRun = await compileCli(
    compileArgs(
      s,
      join(dir.path, "signed"),
      "--sign",
      join(keys, "signing_key.jwk"),
    ),
  );
  assertEquals(signedRun.code, 0, signedRun.err);
  const pub = JSON.parse(
    Deno.readTextFileSync(join(keys, "signing_key.pub.jwk")),
  );
  assertMatch(signedRun.out, new RegExp(`signed by +ed25519:${pub.x}`));
  const plainFile = join(dir.path, "plain", "desk.package.json");
  const signedFile = join(dir.path, "signed", "desk.package.json");
  const unsigned = readPkg(plainFile);
  const signed = readPkg(signedFile);
  assertEquals(unsigned.signature, undefined);
  assertEquals(signed.digest, unsigned.digest);
  const { signature, ...rest } = signed;
  assertEquals(rest, unsigned);
  assertEquals(signature!.key, `ed25519:${pub.x}`);

  // verify: every check passes, signed and trusted.
  const pubFile = join(keys, "signing_key.pub.jwk");
  const v = await compileCli([
    "verify",
    signedFile,
    "--trust",
    pubFile,
    "--json",
  ]);
  assertEquals(v.code, 0, v.out + v.err);
  const report = JSON.parse(v.out);
  assertEquals(
    report.checks.map((c: { check: string; ok: boolean }) => [c.check, c.ok]),
    [
      ["format", true],
      ["digest", true],
      ["structure", true],
      ["verdict", true],
      ["effects", true],
      ["signature", true],
    ],
  );
  assertMatch(report.checks[3].detail, /replay passed: (\d+)\/\1 checks/);
  const text = await compileCli(["verify", plainFile]);
  assertEquals(text.code, 0, text.out);
  assertMatch(text.out, /signature +ok +unsigned/);
  const untrusted = await compileCli(["verify", plainFile, "--trust", pubFile]);
  assertEquals(untrusted.code, 1);
  assertMatch(
    untrusted.out,
    /signature +FAIL unsigned, and trusted keys were given/,
  );

  // run --trust: refused before the capabilities module is even loaded.
  const run = (file: string, trust: string[], capabilities = CAPABILITIES) =>
    runCommand({
      package: file,
      capabilities,
      episode: "700003",
      trust,
      root: join(dir.path, "run_store"),
      json: true,
    }, { out: () => {}, err: () => {} });
  const missing = join(dir.path, "no_such_module.ts");
  let err = await assertRejects(
    () => run(plainFile, [pubFile], missing),
    UntrustedPackageError,
  );
  assertMatch(err.message, /is not signed/);
  err = await assertRejects(
    () => run(signedFile, [join(other, "signing_key.pub.jwk")], missing),
    UntrustedPackageError,
  );
  assertMatch(err.message, /which is not a trusted key/);
  assertEquals(await run(signedFile, [pubFile]), 0);
  assertEquals(await run(signedFile, [`ed25519:${pub.x}`]), 0);
});

Deno.test("compile.ts verify fails an edited package on the check it breaks", async () => {
  await using dir = await tempDir();
  const s = deskStore(dir.path);
  const keys = join(dir.path, "keys");
  assertEquals((await compileCli(["keygen", "--out", keys])).code, 0);
  const out = join(dir.path, "out");
  assertEquals(
    (await compileCli(
      compileArgs(s, out, "--sign", join(keys, "signing_key.jwk")),
    )).code,
    0,
  );
  const file = join(out, "desk.package.json");
  const pristine = Deno.readTextFileSync(file);
  const failing = async (
    edit: (p: BehaviorPackage) => void,
    redigest = true,
  ) => {
    Deno.writeTextFileSync(file, pristine);
    if (redigest) tamper(file, edit);
    else {
      const doc = readPkg(file);
      edit(doc);
      Deno.writeTextFileSync(file, JSON.stringify(doc));
    }
    const r = await compileCli(["verify", file, "--json"]);
    assertEquals(r.code, 1, r.out);
    return Object.fromEntries(
      JSON.parse(r.out).checks.map((
        c: { check: string; ok: boolean | null },
      ) => [c.check, c.ok]),
    );
  };
  // destructive relabelled read: the manifest now disagrees with the node, and the signature fails.
  assertEquals(
    await failing((p) => {
      p.manifest.effects.refund = "read";
    }),
    {
      format: true,
      digest: true,
      structure: true,
      verdict: true,
      effects: false,
      signature: false,
    },
  );
  // A promotion replay did not earn.
  const verdict = await failing((p) => {
    p.verification.replay_passed = p.verification.replay_checks - 1;
  });
  assertEquals([verdict.verdict, verdict.signature], [false, false]);
  // Edited, not re-digested.
  const stale = await failing((p) => {
    p.manifest.episodes = 1;
  }, false);
  assertEquals([stale.digest, stale.verdict], [false, false]);
  // A cycle: the structure check, not a stack overflow.
  const cyc = await failing((p) => {
    const root = p.ir.nodes[p.ir.root] as unknown as { children: string[] };
    root.children.push(p.ir.root);
  });
  assertEquals([cyc.format, cyc.structure], [true, false]);
});

Deno.test("compile.ts run refuses a package whose IR was relabelled to a tool it does not list, before the refund runs", async () => {
  await using dir = await tempDir();
  const s = deskStore(dir.path);
  const out = join(dir.path, "out");
  assertEquals((await compileCli(compileArgs(s, out))).code, 0);
  const file = join(out, "desk.package.json");
  tamper(file, (p) => {
    const notify = Object.values(p.ir.nodes).findLast((n) =>
      n.kind === "action" && n.tool === "notify"
    ) as unknown as { tool: string };
    notify.tool = "wipe_account";
  });
  const err = await assertRejects(
    () =>
      runCommand({
        package: file,
        capabilities: CAPABILITIES,
        episode: "700004",
        root: join(dir.path, "run_store"),
        json: true,
      }, { out: () => {}, err: () => {} }),
    PackageError,
  );
  assertMatch(
    err.message,
    /calls tool "wipe_account", which manifest\.required_capabilities does not list/,
  );
});

Deno.test("compile.ts --name refuses a name that is a path: nothing is written outside --out", async () => {
  await using dir = await tempDir();
  const s = deskStore(dir.path);
  const out = join(dir.path, "a", "b", "out");
  for (const name of ["../../x", "a/b", ".hidden", "..", "x\\y", ""]) {
    const args = compileArgs(s, out);
    args[args.indexOf("--name") + 1] = name;
    const r = await compileCli(args);
    assertEquals(r.code, 2, `${JSON.stringify(name)}: ${r.err}`);
    assertMatch(r.err, /--name: .* is not a package name/);
  }
  for (const escaped of [join(dir.path, "a", "x.package.json"), out]) {
    assertOk(!existsSync(escaped), `${escaped} was written`);
  }
  const fine = compileArgs(s, out);
  fine[fine.indexOf("--name") + 1] = "desk-2.v1";
  assertEquals((await compileCli(fine)).code, 0);
  assertOk(existsSync(join(out, "desk-2.v1.package.json")));
});

function existsSync(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
