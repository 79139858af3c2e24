/**
 * Drivers of the tree engine's walk (`walkTree` in `tree_engine.ts`): they pass each
 * request to an answering function and its answer back, synchronously
 * (replay of a recorded episode) or asynchronously (live tools and a
 * model), and throw what the answering function throws into the walk so
 * the open nodes are left (traced) before it comes back out.
 *
 * @module
 */
import type {
  ToolErrorRecord,
  TreeAnswer,
  TreeRequest,
  TreeWalkGenerator,
  TreeWalkResult,
} from "./tree_requests.ts";

/**
 * Drive a walk with synchronous answers (replay against a recorded episode).
 *
 * @param walk A walk from `walkTree`.
 * @param answer Answers one request.
 * @returns The walk's result.
 * @throws What `answer` throws (after the walk has left its open nodes).
 */
export function driveTree(
  walk: TreeWalkGenerator,
  answer: (request: TreeRequest) => TreeAnswer,
): TreeWalkResult {
  let next = walk.next();
  while (!next.done) {
    let a: TreeAnswer;
    try {
      a = answer(next.value);
    } catch (err) {
      next = walk.throw(err);
      continue;
    }
    next = walk.next(a);
  }
  return next.value;
}

/**
 * Drive a walk with asynchronous answers (live tools and a model).
 *
 * @param walk A walk from `walkTree`.
 * @param answer Answers one request.
 * @returns The walk's result.
 * @throws What `answer` throws (after the walk has left its open nodes).
 */
export async function driveTreeAsync(
  walk: TreeWalkGenerator,
  answer: (request: TreeRequest) => TreeAnswer | Promise<TreeAnswer>,
): Promise<TreeWalkResult> {
  let next = walk.next();
  while (!next.done) {
    let a: TreeAnswer;
    try {
      a = await answer(next.value);
    } catch (err) {
      next = walk.throw(err);
      continue;
    }
    next = walk.next(a);
  }
  return next.value;
}

/**
 * A thrown tool error as the walk and the trace keep it.
 *
 * @param err What the tool threw.
 * @returns `name`, `message` (or the value as text), and `code` when it is a string.
 */
export function toolErrorRecord(err: unknown): ToolErrorRecord {
  const code = (err as { code?: unknown })?.code;
  return {
    name: (err as Error)?.name,
    message: (err as Error)?.message ?? String(err),
    ...(typeof code === "string" ? { code } : {}),
  };
}
