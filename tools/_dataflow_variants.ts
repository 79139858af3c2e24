/**
 * The variants of the lab's `dataflow` scenario that
 * `tools/record_dataflow.ts` records: one working folder each (the queue,
 * the orders, the ledger), their data distinct, both outcomes among them.
 * The first is the shared recording's own data (`ORD-7731`, `C-0042`,
 * `129.50 EUR`, `870.25`: covered).
 *
 * @module
 */

/** One variant's data. */
export interface DataflowVariant {
  /** The order the queue names next. */
  order: string;
  /** The order's customer. */
  customer: string;
  /** The order's amount, two decimals. */
  amount: string;
  /** The order's currency. */
  currency: string;
  /** The customer's ledger balance, two decimals. */
  balance: string;
}

/** Nine variants: 1–7 are recorded for training, 8 and 9 held out. */
export const DATAFLOW_VARIANTS: readonly DataflowVariant[] = [
  {
    order: "ORD-7731",
    customer: "C-0042",
    amount: "129.50",
    currency: "EUR",
    balance: "870.25",
  },
  {
    order: "ORD-7802",
    customer: "C-0107",
    amount: "455.00",
    currency: "EUR",
    balance: "120.40",
  },
  {
    order: "ORD-8015",
    customer: "C-0311",
    amount: "89.99",
    currency: "USD",
    balance: "1204.10",
  },
  {
    order: "ORD-8120",
    customer: "C-0518",
    amount: "1500.00",
    currency: "GBP",
    balance: "1499.99",
  },
  {
    order: "ORD-8233",
    customer: "C-0726",
    amount: "42.00",
    currency: "EUR",
    balance: "42.00",
  },
  {
    order: "ORD-8391",
    customer: "C-0933",
    amount: "310.75",
    currency: "USD",
    balance: "15.00",
  },
  {
    order: "ORD-8457",
    customer: "C-1204",
    amount: "760.20",
    currency: "CHF",
    balance: "2890.00",
  },
  {
    order: "ORD-9102",
    customer: "C-2231",
    amount: "275.40",
    currency: "EUR",
    balance: "300.00",
  },
  {
    order: "ORD-9318",
    customer: "C-3007",
    amount: "640.00",
    currency: "USD",
    balance: "212.35",
  },
];

/**
 * A variant's working folder: file path (relative) → content. The queue
 * and ledger hold other lines too, so that each grep has to pick.
 *
 * @param v The variant.
 * @returns The files.
 */
export function variantFiles(v: DataflowVariant): Record<string, string> {
  const n = Number(v.order.slice(4));
  const before = `ORD-${n - 3}`;
  const after = `ORD-${n + 4}`;
  const other = (o: string, c: string, a: string) =>
    JSON.stringify(
      { order_id: o, customer: c, amount: a, currency: v.currency },
      null,
      2,
    ) + "\n";
  return {
    "queue.txt": `done: ${before}\nnext: ${v.order}\nlater: ${after}\n`,
    [`orders/${before}.json`]: other(before, "C-0001", "10.00"),
    [`orders/${v.order}.json`]: other(v.order, v.customer, v.amount),
    [`orders/${after}.json`]: other(after, "C-0002", "20.00"),
    "ledger.csv":
      `customer,balance\nC-0001,55.00\n${v.customer},${v.balance}\nC-0002,0.00\n`,
  };
}
