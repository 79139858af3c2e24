/**
 * Test helper: a real OpenCode from npm (`opencode-ai`, which ships its
 * binary inside the package), a scratch project for the scripted model
 * (`_opencode_model.ts`), and one headless session (`opencode run --format
 * json`) with the host's own token counts read from its output.
 *
 * The binary is `HARNESS_OPENCODE_BIN`, else the one npm put under
 * `$TMPDIR/harness-opencode-<version>/`, else it is installed there (npm,
 * about 7 s and 190 MB); null when none can be had (the live tests are then
 * skipped, saying why).
 *
 * @module
 */
import { join } from "node:path";
import { OPENCODE_PROMPT } from "./_opencode_model.ts";

/** The OpenCode version the fixtures and tests use. */
export const OPENCODE_VERSION = "1.18.33";

/** The model the project's `opencode.json` names (provider `openai`). */
export const OPENCODE_MODEL = "openai/fake-model";

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Find (or install from npm) the OpenCode binary.
 *
 * @returns Its path and where it came from, or null with the reason.
 */
export async function findOpencode(): Promise<
  { bin: string; from: string } | { bin: null; why: string }
> {
  const named = Deno.env.get("HARNESS_OPENCODE_BIN");
  if (named) {
    return isFile(named)
      ? { bin: named, from: "HARNESS_OPENCODE_BIN" }
      : { bin: null, why: `HARNESS_OPENCODE_BIN=${named} is not a file` };
  }
  const prefix = join(
    Deno.env.get("TMPDIR") ?? "/tmp",
    `harness-opencode-${OPENCODE_VERSION}`,
  );
  // The package's own binary (its bin script is a Node launcher).
  const bin = join(prefix, "node_modules/opencode-linux-x64/bin/opencode");
  if (isFile(bin)) return { bin, from: prefix };
  if (Deno.build.os !== "linux" || Deno.build.arch !== "x86_64") {
    return { bin: null, why: `no OpenCode binary for ${Deno.build.target}` };
  }
  try {
    const out = await new Deno.Command("npm", {
      args: [
        "install",
        "--prefix",
        prefix,
        `opencode-ai@${OPENCODE_VERSION}`,
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        // Offline, fail in seconds rather than after npm's retries.
        "--fetch-timeout=20000",
        "--fetch-retries=1",
      ],
      stdout: "null",
      stderr: "piped",
      signal: AbortSignal.timeout(180_000),
    }).output();
    if (!out.success || !isFile(bin)) {
      return {
        bin: null,
        why: `npm install opencode-ai@${OPENCODE_VERSION} failed: ${
          new TextDecoder().decode(out.stderr).slice(-300)
        }`,
      };
    }
  } catch (err) {
    return { bin: null, why: `npm is not usable: ${(err as Error).message}` };
  }
  return { bin, from: `npm, into ${prefix}` };
}

/**
 * A scratch project for the scripted session: a git folder with
 * `notes.txt`, and `opencode.json` naming the model as provider `openai`
 * (a dummy key, no base URL: `install --gateway` sets it), bash allowed
 * but `rm *` denied.
 *
 * @param dir The project folder (made).
 * @param o `modelUrl` sets the provider's base URL (a session without the gateway).
 */
export async function writeOpencodeProject(
  dir: string,
  o: { modelUrl?: string } = {},
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await new Deno.Command("git", { args: ["init", "-q", dir] }).output();
  await Deno.writeTextFile(
    join(dir, "notes.txt"),
    "next: release 1.4 on Friday\n",
  );
  const config = {
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    model: OPENCODE_MODEL,
    permission: { bash: { "*": "allow", "rm *": "deny" } },
    provider: {
      openai: {
        options: {
          apiKey: "sk-dummy-key",
          ...(o.modelUrl ? { baseURL: o.modelUrl } : {}),
        },
        models: {
          "fake-model": {
            name: "Fake Model",
            tool_call: true,
            limit: { context: 200000, output: 4096 },
          },
        },
      },
    },
  };
  await Deno.writeTextFile(
    join(dir, "opencode.json"),
    JSON.stringify(config, null, 2) + "\n",
  );
}

/** What OpenCode installs into a project's `.opencode/` for its plugins. */
const PLUGIN_PACKAGE = ["package.json", "package-lock.json", "node_modules"];

async function copyTree(from: string, to: string): Promise<void> {
  const out = await new Deno.Command("cp", { args: ["-R", from, to] })
    .output();
  if (!out.success) throw new Error(`cp -R ${from} ${to} failed`);
}

/**
 * A project with a plugin folder makes OpenCode install
 * `@opencode-ai/plugin` into `.opencode/` from npm at start (~30 s, and the
 * registry): a copy kept in the temp folder after the first run
 * (`$TMPDIR/harness-opencode-<version>/dot-opencode`) is put there
 * instead, so later runs start offline.
 */
async function pluginPackage(dot: string, warm: string): Promise<void> {
  try {
    if (!Deno.statSync(dot).isDirectory) return;
  } catch {
    return;
  }
  let cached = false;
  try {
    cached = Deno.statSync(join(warm, "node_modules")).isDirectory;
  } catch { /* not yet */ }
  if (!cached) return;
  for (const name of PLUGIN_PACKAGE) {
    await copyTree(join(warm, name), join(dot, name));
  }
}

/** Keep what OpenCode installed into `.opencode/` for the next run. */
async function keepPluginPackage(dot: string, warm: string): Promise<void> {
  try {
    if (Deno.statSync(join(warm, "node_modules")).isDirectory) return;
  } catch { /* keep it */ }
  try {
    if (!Deno.statSync(join(dot, "node_modules")).isDirectory) return;
  } catch {
    return;
  }
  const tmp = `${warm}.${Deno.pid}`;
  await Deno.mkdir(tmp, { recursive: true });
  for (const name of PLUGIN_PACKAGE) {
    await copyTree(join(dot, name), join(tmp, name));
  }
  await Deno.rename(tmp, warm).catch(() =>
    Deno.remove(tmp, { recursive: true })
  );
}

/** One `opencode run` as it ended. */
export interface OpencodeRun {
  /** Exit code. */
  code: number;
  /** The session id OpenCode printed. */
  session: string | null;
  /** The host's own counts: the sum of its `step_finish` tokens. */
  tokens: { input: number; output: number; steps: number };
  /** Its `--format json` lines. */
  lines: Record<string, unknown>[];
  /** Its stderr. */
  stderr: string;
}

/**
 * Run one headless session in a project, offline: a scratch `HOME` (and
 * XDG folders) so no user config is read, models.dev not fetched, nothing
 * of the caller's environment but `PATH` (no `HARNESS_*`).
 *
 * @param o Binary, project, scratch home, extra environment.
 * @returns How it ended.
 */
export async function runOpencode(o: {
  bin: string;
  project: string;
  home: string;
  prompt?: string;
  env?: Record<string, string>;
}): Promise<OpencodeRun> {
  const warm = join(
    Deno.env.get("TMPDIR") ?? "/tmp",
    `harness-opencode-${OPENCODE_VERSION}`,
    "dot-opencode",
  );
  await pluginPackage(join(o.project, ".opencode"), warm);
  const out = await new Deno.Command(o.bin, {
    args: ["run", "--format", "json", o.prompt ?? OPENCODE_PROMPT],
    cwd: o.project,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: o.home,
      XDG_CONFIG_HOME: join(o.home, ".config"),
      XDG_DATA_HOME: join(o.home, ".local/share"),
      XDG_CACHE_HOME: join(o.home, ".cache"),
      XDG_STATE_HOME: join(o.home, ".local/state"),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      ...o.env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(180_000),
  }).output();
  await keepPluginPackage(join(o.project, ".opencode"), warm).catch(() => {});
  const lines = new TextDecoder().decode(out.stdout).split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const tokens = { input: 0, output: 0, steps: 0 };
  let session: string | null = null;
  for (const l of lines) {
    if (typeof l.sessionID === "string") session ??= l.sessionID;
    const part = l.part as { tokens?: { input: number; output: number } };
    if (l.type === "step_finish" && part?.tokens) {
      tokens.input += part.tokens.input;
      tokens.output += part.tokens.output;
      tokens.steps++;
    }
  }
  return {
    code: out.code,
    session,
    tokens,
    lines,
    stderr: new TextDecoder().decode(out.stderr),
  };
}
