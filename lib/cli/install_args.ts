/**
 * {@linkcode InstallArgs}: what `install` and `uninstall` are told (host,
 * where, how the hooks reach the server, the proxy, the model gateway).
 *
 * @module
 */

/** Arguments of install and uninstall. */
export interface InstallArgs {
  /** Host to configure. */
  host: string;
  /** Project directory (default: current directory), unless `user`. */
  project?: string;
  /** Configure the user-level settings instead. */
  user: boolean;
  /** host_a: `http` hooks (default) or `command` hooks everywhere. */
  mode: "http" | "command";
  /** Ingest URL the hooks post to. */
  url: string;
  /** Pin a capture id (`?cap=`); otherwise the server's active capture. */
  capture?: string;
  /** The server takes a bearer token: host_a then uses command hooks (the forwarder sends it). */
  token?: boolean;
  /** The Deno forwarder's command line (`… ingest.ts hook <host>`): host_a's transcript events run it. */
  forwarderCommand: string;
  /**
   * The fast command hook (`sh …/hook_client.sh <forwarder command>`) for
   * every other command hook.
   *
   * @default the `forwarderCommand`
   */
  clientCommand?: string;
  /** Home directory (for `--user`). */
  home?: string;
  /** `XDG_CONFIG_HOME` (host_c `--user`). */
  xdgConfigHome?: string;
  /** Wrap this MCP server entry with the harness proxy instead of installing hooks. */
  proxy?: string;
  /** The proxy command line (`deno run … proxy.ts … --`), for `proxy`. */
  proxyCommand?: { command: string; args: string[] };
  /**
   * host_a, host_c: also send the host's model calls through the server's
   * model gateway.
   *
   * @default {false}
   */
  gateway?: boolean;
}
