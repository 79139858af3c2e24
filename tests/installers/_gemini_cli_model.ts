/**
 * The scripted model of the Gemini CLI `gateway` recording
 * (`fixtures/hosts/host_b/gateway/`): a Gemini-API server
 * (`tests/model_gateway/_gemini_model.ts`) whose policy plays the `basic`
 * scenario step by step from the tool results Gemini CLI sends back: a
 * text and a `read_file` of `notes.txt`; `run_shell_command echo hi`; a
 * final text. The routing classifier (a `generateContent` with no tools and
 * a JSON schema) is answered with a low complexity score (flash). Streamed as the API streams: a thought
 * part first, the text in two pieces, each chunk's `usageMetadata` the
 * running total (prompt tokens a quarter of the request's bytes, part of
 * them cached; thought and candidate tokens a quarter of their text).
 *
 * @module
 */
import {
  type GeminiModel,
  type GeminiModelAnswer,
  type GeminiModelRequest,
  startGeminiModel,
} from "../model_gateway/_gemini_model.ts";

type Obj = Record<string, unknown>;

/** What the model says at each step of a turn. */
const STEPS: { text: string; call?: { name: string; args: Obj } }[] = [
  {
    text: "I'll read the notes first.",
    call: { name: "read_file", args: { file_path: "notes.txt" } },
  },
  {
    text: "Now saying hi from the shell.",
    call: {
      name: "run_shell_command",
      args: { command: "echo hi", description: "Say hi" },
    },
  },
  { text: "Done: the notes say the magic word, and the shell said hi." },
];

const tokens = (s: string) => Math.max(1, Math.ceil(s.length / 4));

/** The model's step in the current turn: function responses since the last prompt. */
function stepOf(contents: unknown[]): number {
  let n = 0;
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i] as { role?: string; parts?: Obj[] };
    const parts = c.parts ?? [];
    if (c.role !== "user") continue;
    if (parts.some((p) => "functionResponse" in p)) n++;
    else break;
  }
  return n;
}

/** The answer to one request. */
export function gatewaySessionPolicy(r: GeminiModelRequest): GeminiModelAnswer {
  const body = r.body;
  const gen = (body.generationConfig ?? {}) as Obj;
  const prompt = tokens(r.raw);
  const cached = Math.floor(prompt / 2);
  if (!body.tools && (gen.responseJsonSchema || gen.responseSchema)) {
    // Gemini CLI 0.61's numerical router asks for a score (older ones
    // for a model choice): both fields, so either reads it as simple.
    const text = JSON.stringify({
      complexity_reasoning: "Simple read and a shell command.",
      complexity_score: 10,
      reasoning: "A short, simple task.",
      model_choice: "flash",
    });
    return {
      json: {
        candidates: [{
          content: { role: "model", parts: [{ text }] },
          finishReason: "STOP",
          index: 0,
        }],
        usageMetadata: {
          promptTokenCount: prompt,
          candidatesTokenCount: tokens(text),
          totalTokenCount: prompt + tokens(text),
        },
        modelVersion: r.model,
        responseId: `resp_${crypto.randomUUID().slice(0, 12)}`,
      },
    };
  }
  const contents = Array.isArray(body.contents) ? body.contents : [];
  const step = STEPS[Math.min(stepOf(contents), STEPS.length - 1)];
  const thought = "Planning the next step.";
  const half = Math.ceil(step.text.length / 2);
  const pieces = [step.text.slice(0, half), step.text.slice(half)];
  const id = `resp_${crypto.randomUUID().slice(0, 12)}`;
  let out = 0;
  const chunk = (parts: Obj[], last: boolean, more: number): Obj => {
    out += more;
    return {
      candidates: [{
        content: { role: "model", parts },
        ...(last ? { finishReason: "STOP" } : {}),
        index: 0,
      }],
      usageMetadata: {
        promptTokenCount: prompt,
        cachedContentTokenCount: cached,
        candidatesTokenCount: out,
        thoughtsTokenCount: tokens(thought),
        totalTokenCount: prompt + out + tokens(thought),
      },
      modelVersion: r.model,
      responseId: id,
    };
  };
  const chunks = [
    chunk([{ text: thought, thought: true }], false, 0),
    chunk([{ text: pieces[0] }], false, tokens(pieces[0])),
    chunk(
      [
        { text: pieces[1] },
        ...(step.call ? [{ functionCall: step.call }] : []),
      ],
      true,
      tokens(pieces[1]) + (step.call ? tokens(JSON.stringify(step.call)) : 0),
    ),
  ];
  if (r.api === "streamGenerateContent") return { chunks };
  // A whole answer (`/compress` and other generateContent calls): the
  // stream's parts in one turn, its last usage.
  const parts = chunks.flatMap((c) =>
    ((c.candidates as Obj[])[0].content as { parts: Obj[] }).parts
  );
  const last = chunks[chunks.length - 1];
  return {
    json: {
      ...last,
      candidates: [{
        content: { role: "model", parts },
        finishReason: "STOP",
        index: 0,
      }],
    },
  };
}

/**
 * Start the scripted model of the recording.
 *
 * @returns The running model.
 */
export function startGatewaySessionModel(): GeminiModel {
  return startGeminiModel(gatewaySessionPolicy);
}
