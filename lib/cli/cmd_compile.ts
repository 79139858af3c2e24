/**
 * `compile.ts` commands: compile captures into a package (from the local
 * store or the team database; signed with `--sign`), `explain` and
 * `report` a package. The entry parses the command line; these do the
 * work.
 *
 * @module
 */
import { servableRemedy } from "../package/applies_to.ts";
import { join } from "node:path";
import { HarnessStore } from "../store/store.ts";
import { loadEpisodes } from "../lineage/episodes.ts";
import type { Episode } from "../lineage/records.ts";
import type { BehaviorPackage } from "../package/package.ts";
import {
  packageDigest,
  type SignedPackage,
  type SigningKey,
} from "../package/package_signature.ts";
import { compileBehavior } from "../compiler/compile_behavior.ts";
import { summarizePackage } from "../package/summary.ts";
import { explainPackage } from "../forms/explain_package.ts";
import { FORM_TABLE, type FormName } from "../forms/form_table.ts";
import { describeEffects } from "../compiler/effects.ts";
import { packageNameProblem } from "../package/package_name.ts";
import type { Io } from "./io.ts";
import { GRADE_LEGEND } from "./legends.ts";
import { exists, UsageError } from "./io.ts";

/** Options of {@linkcode compileCommand}, from the command line. */
export interface CompileCommandOptions {
  /** Capture ids. */
  captures: string[];
  /** Output folder. */
  out: string;
  /** Store root (when not `db`). */
  root: string;
  /** `--db` (a URL or `env`), or undefined for the local store. */
  db?: string;
  /** Behavior name. */
  name?: string;
  /** Task family. */
  taskFamily?: string;
  /** Files of the canonical map, contracts and effects. */
  canonical?: string;
  /** Contracts file. */
  contracts?: string;
  /** Effects file. */
  effects?: string;
  /** Package version. */
  version?: string;
  /** Capture fidelity. */
  fidelity?: string;
  /** Agent form: choose the tuning parameters by cross-validation. @default true */
  tune?: boolean;
  /** Which form to build (`auto` or a form's name; checked here). @default "auto" */
  form?: string;
  /** A signing key file (an Ed25519 JWK with `d`): sign the package. */
  sign?: string;
  /** One JSON object out. */
  json?: boolean;
  /**
   * Overwrite a package file of the same name in `out` (else such a file
   * is refused before any work).
   * @default false
   */
  replace?: boolean;
}

/**
 * `--form`'s value, checked against the table of forms.
 *
 * @param v The value given, if any.
 * @returns `auto` or a form's name.
 * @throws {UsageError} Any other value.
 */
function formOption(v: string | undefined): "auto" | FormName | undefined {
  if (v === undefined || v === "auto") return v;
  const names = [...FORM_TABLE.names].sort();
  if (names.includes(v)) return v as FormName;
  throw new UsageError(
    `--form takes auto, ${names.slice(0, -1).join(", ")} or ${
      names.at(-1)
    }, not "${v}"`,
  );
}

/**
 * Read a signing key file (before compiling, so a bad key fails at once).
 *
 * @param path The key file.
 * @returns The key.
 * @throws {UsageError} Unreadable, or not an Ed25519 signing key.
 */
async function readSigningKey(path: string): Promise<SigningKey> {
  const { importSigningKey } = await import(
    "../package/package_signature.ts"
  );
  let jwk: unknown;
  try {
    jwk = JSON.parse(Deno.readTextFileSync(path));
  } catch (err) {
    throw new UsageError(
      `Cannot read the signing key file ${path}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  try {
    return await importSigningKey(jwk);
  } catch (err) {
    throw new UsageError(`${path}: ${(err as Error).message}`, { cause: err });
  }
}

function readJson(
  path: string | undefined,
  what: string,
): Record<string, never> | null {
  if (!path) return null;
  try {
    return JSON.parse(Deno.readTextFileSync(path));
  } catch (err) {
    throw new Error(
      `Cannot read the ${what} file ${path}: ${(err as Error).message}`,
    );
  }
}

/**
 * Read a package file (checked only for its shape; `run` validates fully).
 *
 * @param path The file.
 * @returns The package.
 * @throws {Error} Unreadable, or not a `harness.package.v1` document.
 */
export function readPackage(path: string): BehaviorPackage {
  let pkg: BehaviorPackage;
  try {
    pkg = JSON.parse(Deno.readTextFileSync(path));
  } catch (err) {
    throw new Error(
      `Cannot read the package ${path}: ${(err as Error).message}`,
    );
  }
  if (pkg?.schema_version !== "harness.package.v1" || !pkg.ir?.nodes) {
    throw new Error(
      `${path} is not a behavior package (harness.package.v1); compile.ts --capture ID --out DIR writes one`,
    );
  }
  return pkg;
}

function progressLine(stage: string, done: number, total: number): string {
  const width = 24;
  const filled = total ? Math.round((done / total) * width) : width;
  return `\r[${"#".repeat(filled)}${
    ".".repeat(width - filled)
  }] ${stage} ${done}/${total}   `;
}

/**
 * An earlier package of the same name in `out` is not overwritten unasked
 * (checked before the work).
 *
 * @param o The output folder, name and `replace`.
 * @throws {UsageError} The file exists and `replace` is not set.
 */
function refuseOverwrite(o: CompileCommandOptions): void {
  const name = o.name ?? "behavior";
  const file = join(o.out, `${name}.package.json`);
  if (o.replace || !exists(file)) return;
  let what = "";
  try {
    const old = JSON.parse(Deno.readTextFileSync(file));
    what = ` (${old?.digest ?? "no digest"})`;
  } catch { /* not a package: still not ours to overwrite */ }
  throw new UsageError(
    `${file} exists${what}: give --name NAME for another package beside it, another --out, or --replace to overwrite it`,
  );
}

async function episodesOf(
  o: CompileCommandOptions,
  io: Io,
): Promise<Episode[]> {
  const episodes: Episode[] = [];
  if (o.db !== undefined) {
    // The team database: the same episodes, from the stored lines
    // (`--db env`: HARNESS_DB_URL; PG* variables and ~/.pgpass fill in).
    const { DbStore } = await import("../team/db_store.ts");
    const { dbTarget } = await import("./env.ts");
    const db = await DbStore.open(await dbTarget(o.db, io.err));
    try {
      for (const id of o.captures) {
        episodes.push(...await loadEpisodes(db, db.resolveName(id)));
      }
    } finally {
      await db.close();
    }
    return episodes;
  }
  using store = new HarnessStore(o.root, { readOnly: true, index: false });
  for (const id of o.captures) {
    if (!store.hasCapture(id)) {
      throw new Error(`Capture "${id}" not found in store ${o.root}`);
    }
    episodes.push(...await loadEpisodes(store, id));
  }
  return episodes;
}

/**
 * Compile captures into a package file in `out`.
 *
 * @param o Options.
 * @param io Output (progress on `err`).
 * @returns Exit code (1 when the structure is unsound).
 * @throws {UsageError} A name that is not a plain file name, a bad signing key.
 * @throws {Error} A capture that is not there, an unreadable map file.
 */
export async function compileCommand(
  o: CompileCommandOptions,
  io: Io,
): Promise<number> {
  const nameProblem = o.name === undefined ? null : packageNameProblem(o.name);
  if (nameProblem) throw new UsageError(`--name: ${nameProblem}`);
  const form = formOption(o.form);
  refuseOverwrite(o);
  const key = o.sign ? await readSigningKey(o.sign) : null;
  const episodes = await episodesOf(o, io);
  const tty = Deno.stderr.isTerminal();
  let last = "";
  const result = compileBehavior(episodes, {
    name: o.name ?? "behavior",
    taskFamily: o.taskFamily,
    canonical: readJson(o.canonical, "canonical map"),
    contracts: readJson(o.contracts, "contracts"),
    effects: readJson(o.effects, "effects"),
    version: o.version,
    captureFidelity: o.fidelity,
    tune: o.tune,
    ...(form ? { form } : {}),
    onProgress: (stage, done, total) => {
      if (tty) {
        Deno.stderr.writeSync(
          new TextEncoder().encode(progressLine(stage, done, total)),
        );
      } else if (stage !== last) io.err(`compile: ${stage}`);
      last = stage;
    },
  });
  if (tty) Deno.stderr.writeSync(new TextEncoder().encode("\n"));
  let pkg: SignedPackage = result.package;
  if (key) {
    const { signPackage } = await import(
      "../package/package_signature.ts"
    );
    pkg = await signPackage(pkg, key);
  }
  Deno.mkdirSync(o.out, { recursive: true });
  const file = join(o.out, `${pkg.manifest.name}.package.json`);
  Deno.writeTextFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
  if (o.json) {
    const e = result.effects;
    io.out(JSON.stringify(
      {
        file,
        digest: pkg.digest,
        signed_by: pkg.signature?.key ?? null,
        manifest: result.package.manifest,
        stats: result.compiled.stats,
        effects: {
          source: e.source,
          unknown: e.unknown,
          inferred: e.inferred,
          unknown_calls: e.unknown_calls,
        },
        verification: {
          ...result.verification,
          problems: result.verification.problems.slice(0, 20),
        },
      },
      null,
      2,
    ));
  } else {
    io.out(
      `${summarizePackage(pkg)}\n  written to    ${file}${
        pkg.signature ? `\n  signed by     ${pkg.signature.key}` : ""
      }\n${
        describeEffects(result.effects).map((l) => `  ${l}`).join("\n")
      }\n  ${GRADE_LEGEND}`,
    );
  }
  const notServable = result.package.manifest.not_servable;
  if (notServable) {
    io.err(
      `WARNING: ${file} is NOT SERVABLE (serve --package refuses it): ${notServable}. To make it servable, ${servableRemedy()}.`,
    );
  }
  return result.verification.structural_ok ? 0 : 1;
}

/**
 * `explain PACKAGE`: the package's nodes, grades and evidence.
 *
 * @param o `path`: the package file; `json`: one JSON object out.
 * @param io Output.
 * @returns Exit code: 1 when the package was altered after compile.
 */
export function explainCommand(
  o: { path: string; json: boolean },
  io: Io,
): number {
  const { path, json } = o;
  const pkg = readPackage(path);
  const altered = alteredWarning(pkg);
  if (altered && !json) io.err(altered);
  io.out(
    json
      ? JSON.stringify(
        {
          summary: summarizePackage(pkg),
          provenance: pkg.provenance,
          digest_ok: altered === null,
        },
        null,
        2,
      )
      : `${explainPackage(pkg)}\n\n${GRADE_LEGEND}`,
  );
  return altered ? 1 : 0;
}

/**
 * What `explain` and `report` say of a package whose content no longer
 * hashes to its digest (`run` refuses it).
 *
 * @param pkg The package.
 * @returns The warning, or null when the digest holds.
 */
function alteredWarning(pkg: BehaviorPackage): string | null {
  const actual = packageDigest(pkg as unknown as Record<string, unknown>);
  const digest = (pkg as { digest?: string }).digest;
  if (digest === actual) return null;
  return `WARNING: this package was altered after compile: it says ${
    digest ?? "no digest"
  } but its content hashes to ${actual}; run refuses it (compile it again)`;
}

/**
 * `report PACKAGE --out FILE.html`: the explain view as one HTML file.
 *
 * @param o `path`: the package file; `out`: the HTML file; `json`: one
 *   JSON object out.
 * @param io Output.
 * @returns Exit code: 1 when the package was altered after compile.
 */
export async function reportCommand(
  o: { path: string; out: string; json: boolean },
  io: Io,
): Promise<number> {
  const { path, out, json } = o;
  const pkg = readPackage(path);
  const { packageReportData } = await import("../report/package_data.ts");
  const { renderPackageReport } = await import("../report/package_html.ts");
  const altered = alteredWarning(pkg);
  if (altered) io.err(altered);
  const data = packageReportData(pkg);
  Deno.writeTextFileSync(out, renderPackageReport(data));
  io.out(
    json
      ? JSON.stringify({
        package: pkg.manifest.name,
        out,
        nodes: data.nodes.length,
        digest_ok: altered === null,
      })
      : `Wrote ${out}: package ${pkg.manifest.name}, ${data.nodes.length} nodes`,
  );
  return altered ? 1 : 0;
}
