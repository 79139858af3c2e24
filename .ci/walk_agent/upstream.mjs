// The README walk's model: a scripted OpenAI-compatible Chat Completions
// server on loopback (node upstream.mjs PORT). It answers as a model of the
// order desk would: look the order up (the id the user wrote), then its
// customer (the user id the order names), then say where the order is. It
// counts the requests it answers: GET /count.
import { createServer } from "node:http";

const port = Number(process.argv[2] ?? 0);
let requests = 0;

function reply(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function completion(message) {
  return {
    id: `chatcmpl-${requests}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: "desk-model",
    choices: [{
      index: 0,
      message: { role: "assistant", content: null, ...message },
      finish_reason: message.tool_calls ? "tool_calls" : "stop",
    }],
    usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
  };
}

function call(name, args) {
  return {
    tool_calls: [{
      id: `call_${requests}`,
      type: "function",
      function: { name, arguments: JSON.stringify(args) },
    }],
  };
}

/** What the model says next, from the whole conversation. */
function next(messages) {
  const last = messages.at(-1);
  if (last.role === "tool") {
    const result = JSON.parse(last.content);
    if (result.user_id && !result.name) {
      return call("get_user_details", { user_id: result.user_id });
    }
    const order = messages.map((m) =>
      m.role === "tool" && JSON.parse(m.content)
    )
      .find((r) => r && r.order_id);
    return {
      content: `Order ${order.order_id} is ${order.status}, ${result.name}.`,
    };
  }
  const user = [...messages].reverse().find((m) => m.role === "user");
  const id = /#W\d{7}/.exec(String(user.content))?.[0];
  if (!id) return { content: "Which order is it? Its id starts with #W." };
  return call("get_order_details", { order_id: id });
}

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/count") {
    return reply(res, 200, { requests });
  }
  if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
    return reply(res, 404, { error: { message: `No route ${req.url}` } });
  }
  let body = "";
  req.on("data", (c) => body += c);
  req.on("end", () => {
    requests++;
    const { messages } = JSON.parse(body);
    reply(res, 200, completion(next(messages)));
  });
});
server.listen(port, "127.0.0.1", () => {
  console.log(`upstream on http://127.0.0.1:${server.address().port}`);
});
