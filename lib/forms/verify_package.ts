/**
 * {@linkcode verifyPackage}: what can be checked of a package from the
 * package alone, without its episodes, each check reported on its own:
 *
 * - `format`: a `harness.package.v1` object whose IR nodes, manifest and
 *   signature have their fields, and whose manifest lists every tool a
 *   node calls (`irTools`);
 * - `digest`: `sha256:` over the canonical package without `digest` and
 *   `signature` is the recorded `digest`;
 * - `structure`: the structure check run again with the manifest's tools
 *   as the capability set (a tree without cycles, refs written before
 *   they are read, every node reachable, signatures typed, tools listed);
 * - `verdict`: the recorded verification agrees with itself and with the
 *   package: `structural_ok` with its problem list and with the structure
 *   check above; the replay counts are whole numbers with passed ≤ checks,
 *   clean ≤ replayed ≤ the manifest's episodes, and every check passed
 *   only when every episode is clean; `promoted_to_e4` is exactly "replay
 *   passed" (structure sound, at least one check, all passed); promoted,
 *   every graded node is E4; not promoted, none is; each provenance
 *   record names a node; the episode count and source digest match the
 *   source list;
 * - `effects`: each node's effects are the manifest's for its tools (its
 *   kind's `effectProblems`: a tree's actions, an agent form's choice
 *   tools, and its lookups, which must be `read` there);
 * - `signature`: unsigned, or a signature that verifies under the key it
 *   names; with trusted keys, signed by one of them.
 *
 * What it cannot check: that replaying the episodes would pass again (the
 * episodes are not in the package), nor that a well-formed, consistently
 * edited and re-digested package is the one that was compiled; that is
 * what a signature by a trusted key is for.
 *
 * @module
 */
import { canonicalJson } from "../trace/canonical_json.ts";
import { sha256Digest } from "../trace/hash.ts";
import { checkStructure } from "../package/structure_check.ts";
import { verifiedClean } from "../package/verification.ts";
import {
  packageDigest,
  readSignature,
  type SignedPackage,
} from "../package/package_signature.ts";
import type { BehaviorPackage } from "../package/package.ts";
import { checkPackageShape } from "./validate_package.ts";
import { FORM_TABLE, type FormTable } from "./form_table.ts";

/** One check of {@linkcode verifyPackage}. */
export interface PackageCheck {
  /** `format`, `digest`, `structure`, `verdict`, `effects` or `signature`. */
  check: string;
  /** Passed (null: not checked, because the format is wrong). */
  ok: boolean | null;
  /** What was found, in a sentence. */
  detail: string;
}

/** What {@linkcode verifyPackage} found. */
export interface PackageVerification {
  /** Every check passed. */
  ok: boolean;
  /** The package's name, when it has one. */
  name: string | null;
  /** The recorded digest. */
  digest: string | null;
  /** The signer's key, when signed. */
  signed_by: string | null;
  /** The checks, in order. */
  checks: PackageCheck[];
}

/** Options of {@linkcode verifyPackage}. */
export interface VerifyPackageOptions {
  /**
   * Trusted public keys (`ed25519:<x>`): when given, the package must be
   * signed by one of them.
   */
  trusted?: readonly string[];
  /** The forms whose node kinds it may hold (every form's in `FORMS` by default). */
  table?: FormTable;
}

const isCount = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= 0;

/** Where the recorded verification disagrees with itself or the package. */
function verdictProblems(pkg: BehaviorPackage, structure: string[]): string[] {
  const v = pkg.verification;
  if (typeof v !== "object" || v === null) return ["no verification record"];
  const out: string[] = [];
  const probs = Array.isArray(v.structural_problems)
    ? v.structural_problems
    : null;
  if (probs === null) out.push("structural_problems is not a list");
  else if (v.structural_ok !== (probs.length === 0)) {
    out.push(
      `structural_ok is ${v.structural_ok} beside ${probs.length} structural problems`,
    );
  }
  if (v.structural_ok !== (structure.length === 0)) {
    out.push(
      `structural_ok is ${v.structural_ok} but the structure check finds ${structure.length} problems`,
    );
  }
  const counts = {
    replay_checks: v.replay_checks,
    replay_passed: v.replay_passed,
    episodes_replayed: v.episodes_replayed,
    episodes_clean: v.episodes_clean,
  };
  const bad = Object.entries(counts).filter(([, n]) => !isCount(n));
  if (bad.length) {
    out.push(`${bad.map(([k]) => k).join(", ")} not a whole number`);
    return out;
  }
  const episodes = pkg.manifest.episodes;
  if (v.replay_passed > v.replay_checks) {
    out.push(
      `replay_passed ${v.replay_passed} exceeds replay_checks ${v.replay_checks}`,
    );
  }
  if (v.episodes_clean > v.episodes_replayed) {
    out.push(
      `episodes_clean ${v.episodes_clean} exceeds episodes_replayed ${v.episodes_replayed}`,
    );
  }
  if (!isCount(episodes) || v.episodes_replayed > episodes) {
    out.push(
      `episodes_replayed ${v.episodes_replayed} exceeds the manifest's ${episodes} episodes`,
    );
  }
  if (
    v.replay_passed === v.replay_checks &&
    v.episodes_clean !== v.episodes_replayed
  ) {
    out.push(
      `every replay check passed, yet ${v.episodes_clean} of ${v.episodes_replayed} episodes are clean`,
    );
  }
  const clean = verifiedClean(v);
  if (pkg.manifest.promoted_to_e4 !== clean) {
    out.push(
      `promoted_to_e4 is ${pkg.manifest.promoted_to_e4} but replay ${
        clean ? "passed" : "did not pass"
      } (${v.replay_passed}/${v.replay_checks} checks)`,
    );
  }
  for (const p of Array.isArray(pkg.provenance) ? pkg.provenance : []) {
    if (!Object.hasOwn(pkg.ir.nodes, p?.node_id)) {
      out.push(`provenance names node ${p?.node_id}, which the IR lacks`);
    } else if (p.grade !== "residual" && p.grade !== "structural") {
      if (clean && p.grade !== "E4") {
        out.push(`${p.node_id} is ${p.grade} in a package promoted to E4`);
      } else if (!clean && p.grade === "E4") {
        out.push(`${p.node_id} is E4 though replay did not pass`);
      }
    }
  }
  const src = pkg.sources;
  if (!Array.isArray(src?.episodes)) out.push("sources.episodes is missing");
  else {
    if (src.episodes.length !== episodes) {
      out.push(
        `the manifest says ${episodes} episodes, the sources list ${src.episodes.length}`,
      );
    }
    if (sha256Digest(canonicalJson(src.episodes)) !== src.digest) {
      out.push("sources.digest is not the digest of sources.episodes");
    }
  }
  return out;
}

/** Where a node's effect disagrees with the manifest's effects. */
function effectProblems(pkg: BehaviorPackage, table: FormTable): string[] {
  const effects = pkg.manifest.effects ?? {};
  const listed = (tool: string) =>
    Object.hasOwn(effects, tool) ? effects[tool] : undefined;
  const out: string[] = [];
  for (const n of Object.values(pkg.ir.nodes)) {
    out.push(...table.kinds.get(n.kind)?.effectProblems?.(n, listed) ?? []);
  }
  return out;
}

const few = (list: string[]) =>
  list.slice(0, 3).join("; ") +
  (list.length > 3 ? ` (${list.length} in all)` : "");

/**
 * Check a package from the package alone (see the module doc for exactly
 * what each check covers).
 *
 * @param doc The parsed package document.
 * @param options Trusted keys.
 * @returns Each check and whether all passed.
 */
export async function verifyPackage(
  doc: unknown,
  options: VerifyPackageOptions = {},
): Promise<PackageVerification> {
  const checks: PackageCheck[] = [];
  const table = options.table ?? FORM_TABLE;
  const rec = (typeof doc === "object" && doc !== null ? doc : {}) as Record<
    string,
    unknown
  >;
  const digest = typeof rec.digest === "string" ? rec.digest : null;
  let pkg: SignedPackage | null = null;
  try {
    pkg = checkPackageShape(doc, table);
    checks.push({ check: "format", ok: true, detail: "harness.package.v1" });
  } catch (err) {
    checks.push({ check: "format", ok: false, detail: (err as Error).message });
  }
  const actual = packageDigest(rec);
  checks.push({
    check: "digest",
    ok: actual === digest,
    detail: actual === digest
      ? `${actual} matches the content`
      : `the package says ${digest} but its content hashes to ${actual}`,
  });
  if (pkg) {
    const structure = checkStructure(
      pkg,
      new Set(pkg.manifest.required_capabilities),
      table.kinds,
    );
    checks.push({
      check: "structure",
      ok: structure.length === 0,
      detail: structure.length
        ? few(structure)
        : `${Object.keys(pkg.ir.nodes).length} nodes, a sound tree`,
    });
    const verdict = verdictProblems(pkg, structure);
    const v = pkg.verification;
    checks.push({
      check: "verdict",
      ok: verdict.length === 0,
      detail: verdict.length
        ? few(verdict)
        : `replay ${
          verifiedClean(v) ? "passed" : "did not pass"
        }: ${v.replay_passed}/${v.replay_checks} checks, ${v.episodes_clean}/${v.episodes_replayed} episodes clean; promoted_to_e4 ${pkg.manifest.promoted_to_e4}, consistent`,
    });
    const effects = effectProblems(pkg, table);
    checks.push({
      check: "effects",
      ok: effects.length === 0,
      detail: effects.length
        ? few(effects)
        : "each node's effect is the manifest's",
    });
  } else {
    for (const check of ["structure", "verdict", "effects"]) {
      checks.push({
        check,
        ok: null,
        detail: "not checked: the format is wrong",
      });
    }
  }
  const sig = await readSignature(rec as unknown as SignedPackage);
  const trusted = options.trusted ?? [];
  let sigOk: boolean;
  let detail: string;
  if (!sig.signed) {
    sigOk = trusted.length === 0;
    detail = trusted.length
      ? "unsigned, and trusted keys were given"
      : "unsigned";
  } else if (!sig.valid) {
    sigOk = false;
    detail = `by ${sig.key}: ${sig.why}`;
  } else if (trusted.length && !trusted.includes(sig.key)) {
    sigOk = false;
    detail = `by ${sig.key}, which is not a trusted key`;
  } else {
    sigOk = true;
    detail = `by ${sig.key}, valid${trusted.length ? " and trusted" : ""}`;
  }
  checks.push({ check: "signature", ok: sigOk, detail });
  const manifest = rec.manifest as { name?: unknown } | undefined;
  return {
    ok: checks.every((c) => c.ok === true),
    name: typeof manifest?.name === "string" ? manifest.name : null,
    digest,
    signed_by: sig.signed ? sig.key : null,
    checks,
  };
}
