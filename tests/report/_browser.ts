/**
 * Test helper: open a report file in the system's headless Chromium.
 *
 * @module
 */
import { join } from "node:path";

/** The system Chromium, or null (CI installs it; see `.ci/run`). */
function chromium(): string | null {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    for (const name of ["chromium", "chromium-browser"]) {
      try {
        if (Deno.statSync(join(dir, name)).isFile) return join(dir, name);
      } catch { /* next */ }
    }
  }
  return null;
}

/** The browser, or null when it is not installed. */
export const BROWSER = chromium();
/** In CI the browser must be there (`.ci/run` installs it). */
export const required = Deno.env.get("CI") === "true";

/** Open a file in headless Chromium: the DOM after scripts ran, and console lines. */
export async function open(
  file: string,
  screenshot?: string,
): Promise<{ dom: string; console: string[] }> {
  const base = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--enable-logging=stderr",
    "--v=0",
  ];
  const run = async (extra: string[]) => {
    const out = await new Deno.Command(BROWSER!, {
      args: [...base, ...extra, `file://${file}`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return {
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
  };
  const r = await run(["--dump-dom"]);
  if (screenshot) {
    await run([
      "--hide-scrollbars",
      "--window-size=1280,1400",
      `--screenshot=${screenshot}`,
    ]);
  }
  return {
    dom: r.stdout,
    console: r.stderr.split("\n").filter((l) => l.includes(":CONSOLE")),
  };
}
