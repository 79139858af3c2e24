/**
 * Gemini CLI for tests and recordings: the npm package
 * `@google/gemini-cli` at the version the host_b fixtures were made with
 * (found through `HARNESS_GEMINI_CLI`, the path of its `bundle/gemini.js`,
 * else installed from npm into the temp folder once), a scratch project
 * and home, and one headless run.
 *
 * @module
 */
import { join } from "node:path";

/** The version the host_b fixtures were recorded with. */
export const GEMINI_CLI_VERSION = "0.61.0";

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Find (or install from npm) Gemini CLI's entry script.
 *
 * @returns Its path and where it came from, or null with the reason.
 */
export async function findGeminiCli(): Promise<
  { js: string; from: string } | { js: null; why: string }
> {
  const named = Deno.env.get("HARNESS_GEMINI_CLI");
  if (named) {
    return isFile(named)
      ? { js: named, from: "HARNESS_GEMINI_CLI" }
      : { js: null, why: `HARNESS_GEMINI_CLI=${named} is not a file` };
  }
  const prefix = join(
    Deno.env.get("TMPDIR") ?? "/tmp",
    `harness-gemini-cli-${GEMINI_CLI_VERSION}`,
  );
  const js = join(prefix, "node_modules/@google/gemini-cli/bundle/gemini.js");
  if (isFile(js)) return { js, from: prefix };
  try {
    const out = await new Deno.Command("npm", {
      args: [
        "install",
        "--prefix",
        prefix,
        `@google/gemini-cli@${GEMINI_CLI_VERSION}`,
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--fetch-timeout=20000",
        "--fetch-retries=1",
      ],
      stdout: "null",
      stderr: "piped",
      signal: AbortSignal.timeout(300_000),
    }).output();
    if (!out.success || !isFile(js)) {
      return {
        js: null,
        why: `npm install @google/gemini-cli@${GEMINI_CLI_VERSION} failed: ${
          new TextDecoder().decode(out.stderr).slice(-300)
        }`,
      };
    }
  } catch (err) {
    return { js: null, why: `npm is not usable: ${(err as Error).message}` };
  }
  return { js, from: `npm, into ${prefix}` };
}

/**
 * A scratch project and home for one Gemini CLI session: a git folder with
 * `notes.txt`; a home whose `.gemini/settings.json` chooses the Gemini API
 * key (a dummy one is given at run time), turns usage statistics, telemetry
 * and update checks off, and whose `trustedFolders.json` trusts the project
 * (hooks and `.gemini/.env` work in trusted folders only).
 *
 * @param o The project and home folders (made).
 */
export async function writeGeminiProject(
  o: { project: string; home: string },
): Promise<void> {
  await Deno.mkdir(o.project, { recursive: true });
  await Deno.mkdir(join(o.home, ".gemini"), { recursive: true });
  await new Deno.Command("git", {
    args: ["init", "-q"],
    cwd: o.project,
  }).output();
  await Deno.writeTextFile(
    join(o.project, "notes.txt"),
    "The magic word is pineapple.\n",
  );
  await Deno.writeTextFile(
    join(o.home, ".gemini", "settings.json"),
    JSON.stringify(
      {
        security: { auth: { selectedType: "gemini-api-key" } },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
      },
      null,
      2,
    ) + "\n",
  );
  await Deno.writeTextFile(
    join(o.home, ".gemini", "trustedFolders.json"),
    JSON.stringify({ [o.project]: "TRUST_FOLDER" }, null, 2) + "\n",
  );
}

/** One headless run's outcome. */
export interface GeminiRun {
  /** Exit code. */
  code: number;
  /** Standard output (the answer's text). */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/**
 * Run Gemini CLI headless (`-p PROMPT --yolo`) in the project, with the
 * scratch home and a dummy key; `GOOGLE_GEMINI_BASE_URL` only from the env
 * file install wrote (never from this process's environment).
 *
 * @param o The entry script, project, home, prompt and extra environment.
 * @returns The outcome.
 */
export async function runGeminiCli(o: {
  js: string;
  project: string;
  home: string;
  prompt: string;
  env?: Record<string, string>;
}): Promise<GeminiRun> {
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: o.home,
    GEMINI_API_KEY: "AIza-dummy-key-for-the-scripted-model",
    TERM: "dumb",
    NO_COLOR: "1",
    ...o.env,
  };
  const out = await new Deno.Command("node", {
    args: [o.js, "-p", o.prompt, "--yolo"],
    cwd: o.project,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(240_000),
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}
