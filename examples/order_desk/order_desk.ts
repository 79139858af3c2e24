/**
 * A small, deterministic task family to compile: an order desk. Each
 * episode, a customer asks for help with one of their orders; the scripted
 * agent looks the customer up, lists their orders, picks the one they meant
 * (a judgment call), reads it, refunds it when delivered or cancels it when
 * pending (a data-dependent branch, with a fixed `reason`), retries a
 * refund that was `rate_limited` (a known recovery), and notifies the
 * customer. Some episodes carry noise steps; some fail (the agent picks the
 * wrong order). Every call goes through a real {@linkcode ToolGateway}.
 *
 * @module
 */
import { ToolGateway } from "../../lib/tool_gateway/tool_gateway.ts";
import type { EventSink } from "../../lib/tool_gateway/event_sink.ts";
import {
  episodeFinished,
  episodeStarted,
  message,
} from "../../lib/trace/episode_events.ts";

/** Items customers order. */
export const ITEMS = [
  "blue lamp",
  "oak desk",
  "wool rug",
  "steel kettle",
  "linen sheets",
  "glass vase",
  "desk chair",
  "bath towels",
] as const;

/** The fixed cancellation reason the desk uses. */
export const CANCEL_REASON = "customer_request";

/** A tool error with a machine-readable code. */
export class DeskError extends Error {
  /** Error code (`rate_limited`, `not_found`, …). */
  readonly code: string;
  /**
   * @param code Code.
   * @param message Text.
   */
  constructor(code: string, message: string) {
    super(message);
    this.name = "DeskError";
    this.code = code;
  }
}

/** A deterministic pseudo-random source (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One order. */
export interface Order {
  order_id: string;
  item: string;
  status: "delivered" | "pending" | "refunded" | "cancelled";
  total: number;
}

/** The desk's state for one episode's customer. */
export interface DeskState {
  user: { user_id: string; email: string; name: string };
  orders: Order[];
  notified: string[];
}

/** The environment of one episode: the customer, the orders, the tools. */
export class OrderDesk {
  readonly state: DeskState;
  /** The order the customer means, and what should happen to it. */
  readonly target: {
    order_id: string;
    item: string;
    expected: "refunded" | "cancelled";
  };
  readonly #rateLimit: boolean;
  #refundAttempts = 0;

  /**
   * @param episode Episode number (ids never repeat across episodes).
   * @param seed Seed of the family.
   */
  constructor(episode: number, seed = 7) {
    const r = seededRandom(seed * 1_000_003 + episode);
    const uid = 10_000 + episode;
    const n = 2 + Math.floor(r() * 3);
    const items = [...ITEMS].sort(() => r() - 0.5).slice(0, n);
    const orders: Order[] = items.map((item, i) => ({
      order_id: `O-${uid}${i}`,
      item,
      status: r() < 0.5 ? "delivered" : "pending",
      total: Math.round((10 + r() * 490) * 100) / 100,
    }));
    const pick = orders[Math.floor(r() * n)];
    this.state = {
      user: {
        user_id: `U-${uid}`,
        email: `customer${uid}@example.com`,
        name: `Customer ${uid}`,
      },
      orders,
      notified: [],
    };
    this.target = {
      order_id: pick.order_id,
      item: pick.item,
      expected: pick.status === "delivered" ? "refunded" : "cancelled",
    };
    this.#rateLimit = r() < 0.3;
  }

  /** Find a customer by email. */
  findUser(email: string): { user_id: string; name: string } {
    if (email !== this.state.user.email) {
      throw new DeskError("not_found", `No user ${email}`);
    }
    return { user_id: this.state.user.user_id, name: this.state.user.name };
  }

  /** List a customer's orders (without totals). */
  listOrders(
    userId: string,
  ): { orders: { order_id: string; item: string; status: string }[] } {
    if (userId !== this.state.user.user_id) {
      throw new DeskError("not_found", `No user ${userId}`);
    }
    return {
      orders: this.state.orders.map((o) => ({
        order_id: o.order_id,
        item: o.item,
        status: o.status,
      })),
    };
  }

  /** Read one order. */
  getOrder(orderId: string): Order {
    const o = this.state.orders.find((x) => x.order_id === orderId);
    if (!o) throw new DeskError("not_found", `No order ${orderId}`);
    return { ...o };
  }

  /** Refund a delivered order in full; the first attempt may be rate limited. */
  refund(
    orderId: string,
    amount: number,
  ): { refund_id: string; status: string } {
    const o = this.state.orders.find((x) => x.order_id === orderId);
    if (!o) throw new DeskError("not_found", `No order ${orderId}`);
    if (this.#rateLimit && this.#refundAttempts++ === 0) {
      throw new DeskError("rate_limited", "Too many refunds, retry");
    }
    if (o.status !== "delivered") {
      throw new DeskError("bad_state", `Order ${orderId} is ${o.status}`);
    }
    if (amount !== o.total) {
      throw new DeskError("amount_mismatch", `Refund must be ${o.total}`);
    }
    o.status = "refunded";
    return { refund_id: `R-${orderId.slice(2)}`, status: "refunded" };
  }

  /** Cancel a pending order. */
  cancel(orderId: string, reason: string): { status: string } {
    const o = this.state.orders.find((x) => x.order_id === orderId);
    if (!o) throw new DeskError("not_found", `No order ${orderId}`);
    if (o.status !== "pending") {
      throw new DeskError("bad_state", `Order ${orderId} is ${o.status}`);
    }
    if (!reason) throw new DeskError("bad_request", "A reason is required");
    o.status = "cancelled";
    return { status: "cancelled" };
  }

  /** Tell the customer. */
  notify(userId: string, text: string): { sent: boolean } {
    if (userId !== this.state.user.user_id) {
      throw new DeskError("not_found", `No user ${userId}`);
    }
    this.state.notified.push(text);
    return { sent: true };
  }

  /** What the customer says. */
  prompt(): string {
    return `Hi, this is ${this.state.user.email}. Something is wrong with my ${this.target.item} order, please sort it out.`;
  }

  /** Statuses of the orders (the gateway's snapshot). */
  snapshot(): Record<string, string> {
    return Object.fromEntries(
      this.state.orders.map((o) => [o.order_id, o.status]),
    );
  }

  /** Success: the meant order reached its expected status and nothing else changed. */
  outcome(): { success: boolean; order_id: string; expected: string } {
    const ok = this.state.orders.every((o) =>
      o.order_id === this.target.order_id
        ? o.status === this.target.expected
        : o.status === "delivered" || o.status === "pending"
    );
    return {
      success: ok,
      order_id: this.target.order_id,
      expected: this.target.expected,
    };
  }

  /**
   * The desk's tools as plain functions (what a gateway wraps and a
   * runtime binds), by tool name.
   */
  tools(): Record<string, (...args: never[]) => unknown> {
    return {
      find_user: (email: string) => this.findUser(email),
      list_orders: (user_id: string) => this.listOrders(user_id),
      get_order: (order_id: string) => this.getOrder(order_id),
      refund: (order_id: string, amount: number) =>
        this.refund(order_id, amount),
      cancel: (order_id: string, reason: string) =>
        this.cancel(order_id, reason),
      notify: (user_id: string, text: string) => this.notify(user_id, text),
    };
  }
}

/** Tools that change state, and how (the compiler's `effects`). */
export const DESK_EFFECTS: Record<string, string> = {
  refund: "destructive",
  cancel: "destructive",
  notify: "write",
  find_user: "read",
  list_orders: "read",
  get_order: "read",
};

/** Options of {@linkcode runDeskEpisode}. */
export interface RunDeskEpisodeOptions {
  /** Family seed. */
  seed?: number;
  /**
   * Share of episodes where the agent picks a wrong order.
   * @default 0.1
   */
  mistakeRate?: number;
  /**
   * Share of episodes with noise steps.
   * @default 0.25
   */
  noiseRate?: number;
  /** Clock of the events (the wall clock when absent). */
  now?: () => Date;
  /** Event id generator (random ids when absent). */
  newId?: () => string;
}

/**
 * Run one scripted-agent episode through a real gateway into a sink.
 *
 * @param sink Where events go (a store sink).
 * @param captureId Capture id.
 * @param episode Episode number.
 * @param options Seed, mistake and noise rates.
 * @returns The episode id and whether it succeeded.
 */
export function runDeskEpisode(
  sink: EventSink,
  captureId: string,
  episode: number,
  options: RunDeskEpisodeOptions = {},
): { episode_id: string; success: boolean } {
  const seed = options.seed ?? 7;
  const desk = new OrderDesk(episode, seed);
  const r = seededRandom(seed * 7_919 + episode);
  const episodeId = `ep_${String(episode).padStart(5, "0")}`;
  const clock = {
    ...(options.now ? { now: options.now } : {}),
    ...(options.newId ? { newId: options.newId } : {}),
  };
  const gw = new ToolGateway(sink, {
    captureId,
    episodeId,
    env: desk,
    ...clock,
  });
  const ctx = {
    captureId,
    episodeId,
    source: { host: "gateway", adapter: "order-desk-agent", model: "scripted" },
    ...clock,
  };
  sink.emit(episodeStarted(ctx, { reason: "task" }));
  sink.emit(message(ctx, { role: "user", text: desk.prompt() }));
  const t = desk.tools();
  const w = <F extends (...a: never[]) => unknown>(
    name: string,
    f: F,
    destructive = false,
  ) =>
    gw.wrap(f, {
      hostName: name,
      logicalId: name,
      destructive,
      stateChanging: destructive,
    });
  const findUser = w("find_user", t.find_user);
  const listOrders = w("list_orders", t.list_orders);
  const getOrder = w("get_order", t.get_order);
  const refund = w("refund", t.refund, true);
  const cancel = w("cancel", t.cancel, true);
  const notify = w("notify", t.notify);

  const noisy = r() < (options.noiseRate ?? 0.25);
  const user = findUser(desk.state.user.email as never) as { user_id: string };
  if (noisy && r() < 0.5) listOrders(user.user_id as never); // a redundant look
  const { orders } = listOrders(user.user_id as never) as {
    orders: { order_id: string; item: string }[];
  };
  const mistaken = r() < (options.mistakeRate ?? 0.1) && orders.length > 1;
  const meant = orders.find((o) => o.item === desk.target.item)!;
  const pick = mistaken ? orders.find((o) => o !== meant)! : meant;
  if (noisy) {
    const other = orders.find((o) => o !== pick);
    if (other) getOrder(other.order_id as never); // a look at another order
  }
  const order = getOrder(pick.order_id as never) as Order;
  let done: string;
  if (order.status === "delivered") {
    for (let attempt = 1;; attempt++) {
      try {
        refund(order.order_id as never, order.total as never);
        break;
      } catch (err) {
        if ((err as DeskError).code !== "rate_limited" || attempt >= 3) {
          throw err;
        }
      }
    }
    done = "refunded";
  } else {
    cancel(order.order_id as never, CANCEL_REASON as never);
    done = "cancelled";
  }
  notify(
    user.user_id as never,
    `Your order ${order.order_id} has been ${done}.` as never,
  );
  const outcome = gw.recordOutcome();
  sink.emit(episodeFinished(ctx, { reason: "completed" }));
  return {
    episode_id: episodeId,
    success: (outcome?.payload.success as boolean | undefined) ?? false,
  };
}

/**
 * Generate episodes into a sink.
 *
 * @param sink Where events go.
 * @param captureId Capture id.
 * @param count Episodes.
 * @param options Seed, first episode number, rates.
 * @returns How many succeeded.
 */
export function generateDeskEpisodes(
  sink: EventSink,
  captureId: string,
  count: number,
  options: RunDeskEpisodeOptions & { first?: number } = {},
): { episodes: number; succeeded: number } {
  let succeeded = 0;
  const first = options.first ?? 0;
  for (let i = first; i < first + count; i++) {
    if (runDeskEpisode(sink, captureId, i, options).success) {
      succeeded++;
    }
  }
  return { episodes: count, succeeded };
}
