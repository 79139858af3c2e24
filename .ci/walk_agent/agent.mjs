// The README walk's agent: an unmodified agent on the official `openai` npm
// client, as a user writes one. It reads OPENAI_BASE_URL and OPENAI_API_KEY
// like any OpenAI SDK program, sends no header of harness's, and runs its
// own tools. node agent.mjs FIRST LAST: one conversation per order FIRST..LAST,
// each opening with the same greeting.
import OpenAI from "openai";

const ORDERS = {};
const USERS = {};
const NAMES = [
  "Ada Lovelace",
  "Alan Turing",
  "Grace Hopper",
  "Edsger Dijkstra",
];
const STATUSES = ["pending", "processed", "delivered", "cancelled"];
for (let i = 1; i <= 40; i++) {
  const order = `#W${String(1000000 + i * 7919).padStart(7, "0")}`;
  const user = `user_${i * 31 % 97}`;
  ORDERS[order] = { order_id: order, user_id: user, status: STATUSES[i % 4] };
  USERS[user] = {
    user_id: user,
    name: NAMES[i % 4],
    email: `u${i}@example.com`,
  };
}
const ids = Object.keys(ORDERS);

const tools = [
  {
    type: "function",
    function: {
      name: "get_order_details",
      description: "Look an order up by its id (#W and seven digits).",
      parameters: {
        type: "object",
        properties: { order_id: { type: "string" } },
        required: ["order_id"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "get_user_details",
      description: "Look a customer up by their user id.",
      parameters: {
        type: "object",
        properties: { user_id: { type: "string" } },
        required: ["user_id"],
      },
    },
  },
];

function run(name, args) {
  if (name === "get_order_details") {
    return ORDERS[args.order_id] ?? { error: "no such order" };
  }
  if (name === "get_user_details") {
    return USERS[args.user_id] ?? { error: "no such user" };
  }
  return { error: `no tool ${name}` };
}

// Every conversation opens alike (the same greeting), as a support chat
// does; the order id comes in the user's second message.
const GREETING = "Hi, I need help with an order.";
const ASKS = [
  (id) => `It's ${id}, where is it?`,
  (id) => `Order ${id}. Can you check it for me please`,
  (id) => `${id} - what's its status? Thanks`,
];

const client = new OpenAI({ maxRetries: 0 });
const [first, last] = process.argv.slice(2).map(Number);
for (let n = first; n <= last; n++) {
  const messages = [
    {
      role: "system",
      content: "You are the order desk's assistant. Use the tools to answer.",
    },
    { role: "user", content: GREETING },
  ];
  let asked = false;
  for (let turn = 0; turn < 8; turn++) {
    const r = await client.chat.completions.create({
      model: "desk-model",
      messages,
      tools,
    });
    const m = r.choices[0].message;
    messages.push(m);
    if (m.tool_calls?.length) {
      for (const c of m.tool_calls) {
        const result = run(c.function.name, JSON.parse(c.function.arguments));
        messages.push({
          role: "tool",
          tool_call_id: c.id,
          content: JSON.stringify(result),
        });
      }
    } else if (!asked) {
      // The assistant asked which order: the user says.
      messages.push({ role: "user", content: ASKS[n % ASKS.length](ids[n]) });
      asked = true;
    } else {
      console.log(`${ids[n]}: ${m.content}`);
      break;
    }
  }
}
