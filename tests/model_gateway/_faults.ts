/**
 * Shared setup for the model gateway's fault tests (`faults_*_test.ts`): a
 * loopback upstream whose handler the test sets, a chat completion, the
 * client key that must never be stored, and readers for `/health` and a
 * capture's events.
 */
import type { startServer } from "../_server.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";

/** The client's API key: it reaches the upstream and nothing else. */
export const KEY = "sk-proj-NEVERSTORED0123456789abcdefABCDEF";

/**
 * A loopback upstream whose handler the test sets; `seen` holds the headers
 * of each request it took.
 */
export function upstream(
  handler: (req: Request) => Response | Promise<Response>,
): { url: string; seen: { headers: Headers }[]; close(): Promise<void> } {
  const seen: { headers: Headers }[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      seen.push({ headers: new Headers(req.headers) });
      return handler(req);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    seen,
    close: () => server.shutdown(),
  };
}

/** A non-streaming chat completion whose answer is `content`. */
export const chat = (content: string): Record<string, unknown> => ({
  id: "c1",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{
    index: 0,
    message: { role: "assistant", content },
    finish_reason: "stop",
  }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});

/** The server's `/health` body. */
export async function health(url: string): Promise<Record<string, unknown>> {
  return await (await fetch(`${url}/health`)).json();
}

/**
 * The events of capture `cap` once the gateway has settled; none when the
 * capture does not exist.
 */
export async function events(
  s: Awaited<ReturnType<typeof startServer>>,
  cap: string,
): Promise<TraceEvent[]> {
  await s.server.modelGateway!.settled();
  const out: TraceEvent[] = [];
  if (!s.store.hasCapture(cap)) return out;
  for await (const e of s.store.readEvents(cap)) out.push(e);
  return out;
}
