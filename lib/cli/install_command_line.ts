/**
 * `ingest.ts install|uninstall <host>`'s flags: the host's own names
 * accepted, the capture id checked, `--gateway` (the host's model calls
 * through the server), and the command lines the hooks (`ingest.ts hook
 * <host>`) and a wrapped MCP server (`proxy.ts`) run.
 *
 * @module
 */
import type { Options } from "./command.ts";
import type { IngestContext } from "./ingest_context.ts";
import type { InstallArgs } from "./install_args.ts";
import { grantedEnv as env } from "./env.ts";
import { UsageError } from "./io.ts";
import { FORWARDER_ENV } from "./cmd_hook.ts";
import { DEFAULT_INGEST_URL, hostAnswer } from "../forwarder/forward.ts";
import { hostByName } from "../trace/hosts.ts";

/** The flags of `install` and `uninstall`. */
export const INSTALL_OPTIONS: Options = {
  project: { type: "string" },
  user: { type: "boolean", default: false },
  command: { type: "boolean", default: false },
  url: { type: "string" },
  capture: { type: "string" },
  proxy: { type: "string" },
  gateway: { type: "boolean", default: false },
};

/**
 * Run `install` or `uninstall` from its command line.
 *
 * @param c The command's context (`install <host>` or `uninstall <host>`).
 * @returns The exit code.
 * @throws {UsageError} Without a host, with `--project` and `--user`, `--gateway` and `--proxy`, or a bad `--capture`.
 */
export async function installCommand(c: IngestContext): Promise<number> {
  const [group, name] = c.cl.positionals;
  if (!name) throw new UsageError(`${group} needs a host`);
  const m = await import("./cmd_install.ts");
  const project = c.cl.string("project");
  const user = c.cl.flag("user");
  if (project && user) {
    throw new UsageError("use --project DIR or --user, not both");
  }
  const url = c.cl.string("url") ?? env("HARNESS_INGEST_URL") ??
    DEFAULT_INGEST_URL;
  const capture = c.cl.string("capture");
  if (capture !== undefined) await checkCapture(capture);
  // The hosts' real names and the seed's (host_a|b|c) both name a host.
  const host = hostByName(name)?.seed ?? name;
  const a: InstallArgs = {
    host,
    // Under `deno task`, "here" is the folder the user ran it from.
    project: project ?? (user ? undefined : env("INIT_CWD")),
    user,
    mode: c.cl.flag("command") ? "command" : "http",
    url,
    capture,
    token: env("HARNESS_INGEST_TOKEN") !== undefined,
    ...await hookCommands(c.entry, { host, url, capture }),
    home: env("HOME"),
    xdgConfigHome: env("XDG_CONFIG_HOME"),
    gateway: c.cl.flag("gateway"),
  };
  const proxy = c.cl.string("proxy");
  if (proxy && a.gateway) {
    throw new UsageError(
      "use --proxy NAME or --gateway, not both: run install once for each",
    );
  }
  if (proxy) {
    const { proxyEntry } = await import("./cmd_install_proxy.ts");
    const proxyCommand = await proxyCommandLine(c, proxy, capture);
    return proxyEntry({ ...a, proxy, proxyCommand }, {
      remove: group === "uninstall",
      io: c.io,
    });
  }
  return group === "install" ? m.install(a, c.io) : m.uninstall(a, c.io);
}

async function checkCapture(capture: string): Promise<void> {
  const { validateId } = await import("../trace/ids.ts");
  try {
    validateId("capture", capture);
  } catch (err) {
    throw new UsageError(
      `--capture ${JSON.stringify(capture)}: ${(err as Error).message}`,
    );
  }
}

/**
 * The command lines command hooks run (see
 * `lib/installers/hook_command.ts`): the Deno forwarder, and the hook
 * client in front of it (when the checkout is a local folder).
 */
async function hookCommands(
  entry: string,
  o: { host: string; url: string; capture: string | undefined },
): Promise<{ forwarderCommand: string; clientCommand?: string }> {
  const { HOOK_CLIENT_PATH, hookCommand, stableLauncher } = await import(
    "../installers/hook_command.ts"
  );
  const parts = {
    launcher: stableLauncher(),
    module: await pathOf(new URL(entry)),
    host: o.host,
    url: o.url,
    defaultUrl: DEFAULT_INGEST_URL,
    capture: o.capture,
    // host_a: ANTHROPIC_BASE_URL tells the forwarder the model gateway
    // records the turns (then it reads no transcript).
    env: o.host === "host_a"
      ? [...FORWARDER_ENV, "ANTHROPIC_BASE_URL"]
      : [...FORWARDER_ENV],
    answer: hostAnswer(o.host).trim(),
  };
  const forwarderCommand = hookCommand(parts);
  if (new URL(entry).protocol !== "file:") return { forwarderCommand };
  const client = await pathOf(new URL(HOOK_CLIENT_PATH, entry));
  return { forwarderCommand, clientCommand: hookCommand({ ...parts, client }) };
}

/** `deno run … proxy.ts --server NAME … --`: what a wrapped MCP server runs. */
async function proxyCommandLine(
  c: IngestContext,
  proxy: string,
  capture: string | undefined,
): Promise<{ command: string; args: string[] }> {
  const { resolve } = await import("node:path");
  const storeRoot = resolve(c.root);
  return {
    command: Deno.execPath(),
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--allow-run",
      "--allow-read",
      `--allow-write=${storeRoot}`,
      "--allow-env",
      "--allow-net=127.0.0.1",
      await pathOf(new URL("./proxy.ts", c.entry)),
      "--server",
      proxy,
      ...(capture ? ["--capture", capture] : []),
      "--root",
      storeRoot,
      "--",
    ],
  };
}

/** A module's path, or its URL when it is not a local file. */
async function pathOf(url: URL): Promise<string> {
  if (url.protocol !== "file:") return url.href;
  const { fileURLToPath } = await import("node:url");
  return fileURLToPath(url);
}
