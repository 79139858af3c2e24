import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
  assertThrows,
} from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import { canonicalJson } from "../../lib/trace/canonical_json.ts";
import { sha256Digest } from "../../lib/trace/hash.ts";
import {
  checkTrust,
  generateSigningKey,
  importSigningKey,
  packageDigest,
  publicKeyName,
  readSignature,
  readTrustedKeys,
  signPackage,
  UntrustedPackageError,
} from "../../lib/package/package_signature.ts";
import { validatePackage } from "../../lib/forms/validate_package.ts";
import { tempDir } from "../_helpers.ts";

async function deskPackage(): Promise<BehaviorPackage> {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", 40);
  return compileBehavior(await loadEpisodes(store, "desk"), {
    name: "desk",
    effects: DESK_EFFECTS,
  }).package;
}

/** Change a package and digest it again, as a tamperer would. */
function redigest(
  pkg: BehaviorPackage,
  edit: (doc: BehaviorPackage) => void,
): BehaviorPackage {
  const doc = structuredClone(pkg);
  edit(doc);
  return { ...doc, digest: packageDigest(doc as never) };
}

Deno.test("signPackage() adds a signature beside an unchanged digest; unsigned packages keep the old digest rule", async () => {
  const pkg = await deskPackage();
  const { digest, ...body } = pkg;
  assertEquals(digest, sha256Digest(canonicalJson(body)));
  assertEquals(packageDigest(pkg as never), digest);
  const { privateJwk } = await generateSigningKey();
  const key = await importSigningKey(privateJwk);
  const signed = await signPackage(pkg, key);
  assertEquals(signed.digest, digest);
  assertEquals(signed.signature!.alg, "Ed25519");
  assertEquals(signed.signature!.key, `ed25519:${privateJwk.x}`);
  const { signature: _, ...unsigned } = signed;
  assertEquals(canonicalJson(unsigned), canonicalJson(pkg));
  validatePackage(JSON.parse(JSON.stringify(signed)));
  assertEquals(await readSignature(signed), {
    signed: true,
    key: key.key,
    valid: true,
    why: null,
  });
  assertEquals(await readSignature(pkg), { signed: false });
  // Ed25519 is deterministic: signing again gives the same bytes.
  assertEquals(await signPackage(signed, key), signed);
});

Deno.test("checkTrust() refuses an unsigned package, a foreign key, and a signed package edited and re-digested", async () => {
  const pkg = await deskPackage();
  const mine = await generateSigningKey();
  const theirs = await generateSigningKey();
  const signed = await signPackage(
    pkg,
    await importSigningKey(mine.privateJwk),
  );
  assertEquals(await checkTrust(signed, [mine.key]), mine.key);
  assertEquals(await checkTrust(signed, [theirs.key, mine.key]), mine.key);
  let err = await assertRejects(
    () => checkTrust(pkg, [mine.key]),
    UntrustedPackageError,
  );
  assertMatch(err.message, /"desk" \(sha256:[0-9a-f]{64}\) is not signed/);
  err = await assertRejects(
    () => checkTrust(signed, [theirs.key]),
    UntrustedPackageError,
  );
  assertMatch(
    err.message,
    new RegExp(`signed by ${mine.key}, which is not a trusted key`),
  );
  // The edits: a refund made free, destructive relabelled read.
  for (
    const edit of [
      (d: BehaviorPackage) => {
        d.manifest.effects.refund = "read";
      },
      (d: BehaviorPackage) => {
        const refund = Object.values(d.ir.nodes).find((n) =>
          n.kind === "action" && n.tool === "refund"
        ) as unknown as { args: Record<string, unknown> };
        refund.args.amount = { const: 0 };
      },
    ]
  ) {
    const edited = redigest(signed, edit);
    validatePackage(edited); // whole, by its digest
    err = await assertRejects(
      () => checkTrust(edited, [mine.key]),
      UntrustedPackageError,
    );
    assertMatch(err.message, /bad signature .* does not verify/);
  }
  // Edited without a new digest: the digest is recomputed, not trusted.
  const stale = structuredClone(signed);
  stale.manifest.effects.refund = "read";
  err = await assertRejects(
    () => checkTrust(stale, [mine.key]),
    UntrustedPackageError,
  );
  assertMatch(err.message, /content hashes to/);
  await assertRejects(() => checkTrust(signed, []), TypeError);
});

Deno.test("importSigningKey() takes only a whole Ed25519 private JWK whose x matches d", async () => {
  const a = await generateSigningKey();
  const b = await generateSigningKey();
  await assertRejects(() => importSigningKey(a.publicJwk), /no private part/);
  await assertRejects(
    () => importSigningKey({ ...a.privateJwk, x: b.privateJwk.x }),
    /is not the public key of its "d"/,
  );
  await assertRejects(
    () => importSigningKey({ kty: "RSA", n: "x", e: "AQAB" }),
    /Not an Ed25519 JSON Web Key/,
  );
  assertOk((await importSigningKey(a.privateJwk)).key === a.key);
});

Deno.test("readTrustedKeys() reads key names and key files, public or private", async () => {
  const k = await generateSigningKey();
  const files: Record<string, string> = {
    "pub.jwk": JSON.stringify(k.publicJwk),
    "priv.jwk": JSON.stringify(k.privateJwk),
    "bad.jwk": "{}",
  };
  const read = (p: string) => {
    if (!(p in files)) throw new Deno.errors.NotFound(`No such file ${p}`);
    return files[p];
  };
  assertEquals(
    readTrustedKeys([k.key, "pub.jwk", "priv.jwk"], read),
    [k.key, k.key, k.key],
  );
  assertThrows(
    () => readTrustedKeys(["bad.jwk"], read),
    /bad\.jwk: Not an Ed25519/,
  );
  assertThrows(
    () => readTrustedKeys(["gone.jwk"], read),
    /Cannot read the trusted key gone\.jwk/,
  );
  assertThrows(() => publicKeyName("ed25519:short"), /not a public key/);
});
