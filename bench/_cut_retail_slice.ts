/**
 * Cut `fixtures/tau2_retail_db_slice.json` from τ²-bench's retail
 * `db.json`: every product, and the users (with all their orders) that the
 * vendored simulations (`fixtures/tau2_retail_slice.json`) and the
 * ground-truth actions of their matched tasks reach. A call reaches a user
 * through a `user_id` argument, the owner of an `order_id` argument, or the
 * answer of a `find_user_id_by_*` call replayed on the full database with
 * `RetailEnv`. Both task versions count: the slice's own (what the run was
 * scored against) and `tasks.json` beside the db (when there).
 *
 * Run (same inputs, same bytes):
 * `deno run --allow-read --allow-write=fixtures bench/_cut_retail_slice.ts
 *   --db ../shared/datasets/tau-traces/tau2-bench/domains/retail/db.json`
 *
 * @module
 */
import { parseArgs } from "node:util";
import { dirname, join } from "node:path";
import { RetailEnv } from "../lib/envs/tau2_retail/mod.ts";

type Obj = Record<string, unknown>;
type Call = { name: string; arguments?: Obj };

function reach(db: Obj, calls: Call[], users: Set<string>): void {
  const env = new RetailEnv(db);
  const orders = db.orders as Record<string, { user_id: string }>;
  for (const c of calls) {
    const args = (typeof c.arguments === "string"
      ? JSON.parse(c.arguments)
      : c.arguments ?? {}) as Obj;
    if (typeof args.user_id === "string") {
      users.add(args.user_id);
    }
    if (typeof args.order_id === "string" && orders[args.order_id]) {
      users.add(orders[args.order_id].user_id);
    }
    const out = env.invoke(c.name, args);
    if (c.name.startsWith("find_user_id_by_") && out.ok) {
      users.add(out.content);
    }
  }
}

function main(): void {
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
      out: { type: "string", default: "fixtures/tau2_retail_db_slice.json" },
    },
  });
  if (!values.db) throw new TypeError("Give --db PATH/TO/retail/db.json");
  const db = JSON.parse(Deno.readTextFileSync(values.db)) as Obj;
  const slice = JSON.parse(Deno.readTextFileSync(values.slice)) as Obj;
  const match = JSON.parse(Deno.readTextFileSync(values.match)) as Obj;
  const tasksPath = values.tasks ?? join(dirname(values.db), "tasks.json");
  let shared: Obj[] = [];
  try {
    shared = JSON.parse(Deno.readTextFileSync(tasksPath));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const users = new Set<string>();
  for (const sim of slice.simulations as Obj[]) {
    const calls = (sim.messages as Obj[]).flatMap((m) =>
      m.role === "assistant" && Array.isArray(m.tool_calls)
        ? m.tool_calls as Call[]
        : []
    );
    reach(db, calls, users);
  }
  const wanted = new Set(
    (match.simulations as Obj[]).map((m) => m.matched_task_id).filter((id) =>
      id != null
    ).map(String),
  );
  for (const t of [...(slice.tasks as Obj[]), ...shared]) {
    if (!wanted.has(String(t.id))) continue;
    const actions = ((t.evaluation_criteria as Obj)?.actions ?? []) as Call[];
    reach(db, actions, users);
  }
  const allUsers = db.users as Record<string, { orders: string[] }>;
  const allOrders = db.orders as Record<string, { user_id: string }>;
  const keptUsers = Object.fromEntries(
    Object.entries(allUsers).filter(([id]) => users.has(id)),
  );
  const keptOrders = Object.fromEntries(
    Object.entries(allOrders).filter(([, o]) => users.has(o.user_id)),
  );
  const out = { products: db.products, users: keptUsers, orders: keptOrders };
  const text = JSON.stringify(out);
  Deno.writeTextFileSync(values.out, text + "\n");
  console.log(
    `${values.out}: ${Object.keys(out.products as Obj).length} products, ${
      Object.keys(keptUsers).length
    } users, ${Object.keys(keptOrders).length} orders, ${text.length} bytes`,
  );
}

if (import.meta.main) main();
