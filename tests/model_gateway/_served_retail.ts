/**
 * A τ² retail package for the tests of a package served at the model API
 * (`serve --package`): compiled from the training split of the vendored
 * slice with τ²'s declared effects plus the two tools the environment
 * offers that τ² leaves untyped (`calculate`, `get_item_details`, both
 * reads), so it knows every tool the retail agent offers; and the retail
 * tools as the Responses API and Anthropic Messages spell them (Chat
 * Completions: `RETAIL_CHAT_TOOLS` of `_retail_agent.ts`).
 *
 * @module
 */
import type OpenAI from "openai";
import { loadTauData, type TauData } from "../../eval/tau_data.ts";
import { splitFor } from "../../eval/split_eval.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import { changesState, type Effects } from "../../lib/package/tool_effects.ts";
import type { Tau2Simulation } from "../../eval/scripted_model.ts";
import { RETAIL_TOOL_SCHEMAS } from "../../eval/envs/tau2/mod.ts";

const FIXTURES = new URL("../../fixtures/", import.meta.url);
const read = (name: string) => Deno.readTextFileSync(new URL(name, FIXTURES));

/** The split seed (the closed loop's test uses it too). */
export const SEED = 2;

/** The system prompt every retail conversation here starts with. */
export const RETAIL_INSTRUCTIONS =
  "You are a customer service agent of a retail store: help the user with their orders, returns, exchanges and account using the tools.";

/** The compiled package and what it came from. */
export interface ServedRetail {
  /** The loaded slice (episodes, ground truth). */
  data: TauData;
  /** The raw simulations, aligned with `data.episodes`. */
  simulations: Tau2Simulation[];
  /** Effects of all 16 retail tools. */
  effects: Effects;
  /** The state-changing tools. */
  writes: Set<string>;
  /** The agent-form package. */
  pkg: BehaviorPackage;
  /** Held-out episodes of the split. */
  held: TauData["episodes"];
  /** The retail database (never mutated: the environment copies it). */
  db: unknown;
}

/**
 * Compile the package from the split's successful training episodes.
 *
 * @param seed The split seed.
 * @returns The package, its data and its held-out episodes.
 */
export function servedRetail(seed: number = SEED): ServedRetail {
  const text = read("tau2_retail_slice.json");
  const data = loadTauData(text, {
    matchText: read("tau2_retail_slice_task_match.json"),
  });
  const effects: Effects = {
    ...data.effects,
    calculate: "read",
    get_item_details: "read",
  };
  const { train, held } = splitFor(data.episodes, seed);
  const pkg = compileBehavior(
    train.filter((e) => e.norm.success === true).map((e) => e.norm),
    { name: "retail", effects },
  ).package;
  return {
    data,
    simulations: JSON.parse(text).simulations,
    effects,
    writes: new Set(
      Object.keys(effects).filter((t) => changesState(effects, t)),
    ),
    pkg,
    held,
    db: JSON.parse(read("tau2_retail_db.json")),
  };
}

/** The retail tools as Responses API `tools`. */
export const RESPONSES_TOOLS: OpenAI.Responses.FunctionTool[] =
  RETAIL_TOOL_SCHEMAS.map(({ name, description, parameters }) => ({
    type: "function",
    name,
    description,
    parameters,
    strict: false,
  }));

/** The retail tools as Anthropic Messages `tools`. */
export const ANTHROPIC_TOOLS: {
  name: string;
  description: string;
  input_schema: unknown;
}[] = RETAIL_TOOL_SCHEMAS.map(({ name, description, parameters }) => ({
  name,
  description,
  input_schema: parameters,
}));
