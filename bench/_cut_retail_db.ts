/**
 * Cut `fixtures/tau2_retail_db.json` from τ²-bench's retail `db.json`:
 * every product, and the users (with all their orders) that the vendored
 * simulations and their matched tasks' ground-truth actions reach. A user
 * is reached through a `user_id` argument, the owner of an `order_id`
 * argument, or the answer of a `find_user_id_by_*` call (each replayed on
 * the full database). Same inputs give the same bytes.
 *
 * Run: `deno run --allow-read --allow-write=fixtures bench/_cut_retail_db.ts
 *   --db ../shared/datasets/tau-traces/tau2-bench/domains/retail/db.json`
 * (`--tasks` defaults to `tasks.json` beside the db; `--slice`, `--match`,
 * `--out` default to the fixtures).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { RetailEnv } from "../eval/envs/tau2/mod.ts";
import type {
  RetailAction,
  RetailDb,
  Tau2Simulation,
  Tau2Task,
} from "../eval/envs/tau2/mod.ts";

/** A tool call to follow. */
type Call = { name: string; arguments: Record<string, unknown> };

/** The users a sequence of calls reaches, replayed on a fresh env. */
function reachedUsers(db: RetailDb, calls: Call[], into: Set<string>): void {
  const env = new RetailEnv(db);
  for (const c of calls) {
    const args = c.arguments ?? {};
    if (typeof args.user_id === "string") into.add(args.user_id);
    const order = typeof args.order_id === "string"
      ? db.orders[args.order_id]
      : undefined;
    if (order) into.add(order.user_id);
    const out = env.respond(c.name, args);
    if (c.name.startsWith("find_user_id_by_") && !out.startsWith("Error")) {
      into.add(out);
    }
  }
}

/**
 * Build the cut.
 *
 * @param db The full retail database.
 * @param sims The vendored simulations.
 * @param tasks The task specs.
 * @param matched Matched task id per simulation index.
 * @returns The smaller database.
 */
export function cutRetailDb(
  db: RetailDb,
  sims: Tau2Simulation[],
  tasks: Tau2Task[],
  matched: (string | null)[],
): RetailDb {
  const users = new Set<string>();
  sims.forEach((sim, i) => {
    const calls: Call[] = sim.messages.flatMap((m) =>
      (m.tool_calls ?? []).map((c) => ({
        name: c.name,
        arguments: typeof c.arguments === "string"
          ? JSON.parse(c.arguments)
          : c.arguments,
      }))
    );
    reachedUsers(db, calls, users);
    const task = tasks.find((t) => String(t.id) === matched[i]);
    const actions: RetailAction[] = task?.evaluation_criteria?.actions ?? [];
    reachedUsers(db, actions, users);
  });
  const keptUsers = Object.entries(db.users).filter(([id]) => users.has(id));
  const orderIds = new Set(keptUsers.flatMap(([, u]) => u.orders));
  return {
    products: db.products,
    users: Object.fromEntries(keptUsers),
    orders: Object.fromEntries(
      Object.entries(db.orders).filter(([id]) => orderIds.has(id)),
    ),
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      db: { type: "string" },
      tasks: { type: "string" },
      slice: { type: "string", default: "fixtures/tau2_retail_slice.json" },
      match: {
        type: "string",
        default: "fixtures/tau2_retail_slice_task_match.json",
      },
      out: { type: "string", default: "fixtures/tau2_retail_db.json" },
    },
  });
  if (!values.db) {
    console.error("--db PATH/TO/db.json is required");
    Deno.exit(2);
  }
  const read = (p: string) => JSON.parse(Deno.readTextFileSync(p));
  const tasksPath = values.tasks ??
    values.db.replace(/[^/]*$/, "tasks.json");
  const db = read(values.db) as RetailDb;
  const slice = read(values.slice);
  const match = read(values.match) as {
    simulations: { index: number; matched_task_id: string | null }[];
  };
  const matched = slice.simulations.map((_: unknown, i: number) =>
    match.simulations.find((s) => s.index === i)?.matched_task_id ?? null
  );
  const cut = cutRetailDb(db, slice.simulations, read(tasksPath), matched);
  const text = JSON.stringify(cut) + "\n";
  Deno.writeTextFileSync(values.out, text);
  console.log(
    `${values.out}: ${Object.keys(cut.products).length} products, ${
      Object.keys(cut.users).length
    } users, ${Object.keys(cut.orders).length} orders, ${text.length} bytes`,
  );
}
