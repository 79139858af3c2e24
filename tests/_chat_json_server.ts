/**
 * Test helper: a model API on loopback that speaks Chat Completions and
 * answers each request with structured output the test computes, as a
 * compiled package's predict leaves ask for it.
 *
 * @module
 */

/** A Chat Completions request body as the server parsed it. */
// deno-lint-ignore no-explicit-any
export type ChatRequestBody = any;

/** The loopback server: its `/v1` base URL and a way to stop it. */
export interface ChatJsonServer {
  /** The API's base URL (`http://127.0.0.1:<port>/v1`). */
  url: string;
  /** Stop the server. */
  shutdown(): Promise<void>;
}

/**
 * The inputs a predict leaf sent in its user message
 * (`Inputs (JSON):\n{...}`).
 *
 * @param body The request body.
 * @returns The parsed inputs.
 */
export function userInputs(body: ChatRequestBody): Record<string, unknown> {
  const user = body.messages.find((m: { role: string }) => m.role === "user");
  return JSON.parse(
    String(user.content).replace(/^Inputs \(JSON\):\n/, ""),
  );
}

/**
 * Serve Chat Completions on 127.0.0.1: each request's answer is one
 * assistant message whose content is `answer(body)` as JSON.
 *
 * @param answer The structured output for a request.
 * @param id The completion id each answer carries.
 * @returns The server.
 */
export function chatJsonServer(
  answer: (body: ChatRequestBody) => unknown,
  id: string,
): ChatJsonServer {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body = await req.json();
      const out = answer(body);
      return Response.json({
        id,
        object: "chat.completion",
        created: 0,
        model: body.model,
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: JSON.stringify(out),
            refusal: null,
          },
          finish_reason: "stop",
        }],
        usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 },
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1`,
    shutdown: () => server.shutdown(),
  };
}
