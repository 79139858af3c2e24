/**
 * `TreeGatewayDriver` request by request: the package compiled from the
 * seven recorded Claude Code `dataflow` sessions (`../compiler/_dataflow.ts`,
 * the hooks' records), served to requests of Claude Code's own shape (its
 * tools and system prompt from `fixtures/model_requests/host_a/basic/`)
 * for the held-out variant 8: the queue grep, the Read and the ledger grep
 * are the gateway's calls; the Write is the model's, checked against the
 * template; any other way the conversation goes passes through, with why.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import type {
  NormRequest,
  NormToolCall,
} from "../../lib/model_gateway/wire_types.ts";
import { TreeGatewayDriver } from "../../lib/forms/tree/gateway_driver.ts";
import { dataflowAnswer } from "../../tools/_dataflow_model.ts";
import { expectedReport } from "../../tools/_dataflow_host.ts";
import { compileTraining } from "../compiler/_dataflow.ts";
import {
  AFTER_LEDGER,
  CWD,
  GREP,
  LEDGER,
  opening,
  READ,
  request,
  turn,
  V8,
} from "./_dataflow_requests.ts";

function call(name: string, args: Record<string, unknown>): NormToolCall {
  return { id: "toolu_model", name, arguments: args };
}

const driver = new TreeGatewayDriver((await compileTraining()).package);

Deno.test("TreeGatewayDriver: the queue grep, the Read of the order it names and the ledger grep are the gateway's calls, each from the results before it", () => {
  assertEquals(driver.decide(request([opening()])), {
    kind: "serve",
    calls: [{ name: "Bash", arguments: GREP }],
  });
  assertEquals(driver.decide(request(AFTER_LEDGER.slice(0, 3))), {
    kind: "serve",
    calls: [{ name: "Read", arguments: READ }],
  });
  assertEquals(driver.decide(request(AFTER_LEDGER.slice(0, 5))), {
    kind: "serve",
    calls: [{ name: "Bash", arguments: LEDGER }],
  });
});

Deno.test("TreeGatewayDriver: the Write is the model's, checked against the template: the status is the model's word, the rest must be what the conversation showed", () => {
  const req = request(AFTER_LEDGER);
  assertEquals(driver.decide(req).kind, "forward");
  // The scenario's model, as it answers this conversation.
  const [write] = dataflowAnswer({
    messages: AFTER_LEDGER as never,
    cwd: CWD,
  })!;
  assertEquals(write.name, "Write");
  const input = write.input as Record<string, string>;
  assertEquals(input.content, expectedReport(V8));
  assertEquals(driver.check(req, [call("Write", input)]), []);
  // The other word is the model's to choose too: no evidence against it.
  const other = input.content.replace("covered", "insufficient");
  assertEquals(
    driver.check(req, [call("Write", { ...input, content: other })]),
    [],
  );
  // A balance the ledger did not show, a path no session wrote: refused.
  const [balance] = driver.check(req, [
    call("Write", {
      ...input,
      content: input.content.replace(V8.balance, "999.00"),
    }),
  ]);
  assertOk(
    /^content must read "order ORD-9102\\ncustomer C-2231\\namount 275\.40 EUR\\nbalance 300\.00\\nstatus: …\\n", where each … is yours to write/
      .test(balance?.reason ?? ""),
    balance?.reason,
  );
  const [path] = driver.check(req, [
    call("Write", { ...input, file_path: `${CWD}/report.txt` }),
  ]);
  assertOk(
    path?.reason.startsWith(
      `file_path must be "${CWD}/reports/${V8.order}.txt"`,
    ),
    path?.reason,
  );
  // Another tool is another way, not a wrong value: not refused.
  assertEquals(driver.check(req, [call("Bash", { command: "ls" })]), []);
});

Deno.test("TreeGatewayDriver: past its end, off its path, after the user's correction, on another opening or without its tools, the request passes through with why", () => {
  const write = {
    file_path: `${CWD}/reports/${V8.order}.txt`,
    content: expectedReport(V8),
  };
  const done = [...AFTER_LEDGER, ...turn("Write", write, "File created")];
  const skip = (req: NormRequest) => {
    const d = driver.decide(req);
    assertEquals(d.kind, "skip", JSON.stringify(d));
    return (d as { reason: string }).reason;
  };
  assertOk(/run to its end/.test(skip(request(done))));
  // The agent read the queue another way: the tree stays out, now and later.
  const cat = [
    opening(),
    ...turn("Bash", { command: "cat queue.txt" }, "next: ORD-9102"),
  ];
  assertOk(/went another way/.test(skip(request(cat))));
  assertOk(
    /went another way/.test(
      skip(request([...cat, ...turn("Read", READ, "1\t{")])),
    ),
  );
  // A grep that found nothing: a result the tree did not expect.
  assertOk(
    /did not expect/.test(
      skip(request([opening(), ...turn("Bash", GREP, "")])),
    ),
  );
  // The user corrects course: the rest is the model's.
  assertOk(
    /the user said more than the opening/.test(
      skip(request([...AFTER_LEDGER.slice(0, 3), {
        role: "user",
        content: "Use the order after that one instead.",
      }])),
    ),
  );
  assertOk(
    /does not open as the 7 training sessions did/.test(
      skip(request([opening("Count the lines of ledger.csv.")])),
    ),
  );
  // A side request (no tools) of the same conversation.
  assertOk(
    /does not offer Bash/.test(skip(request([opening()], { tools: [] }))),
  );
  assertOk(
    /tool_choice none/.test(
      skip(request([opening()], { tool_choice: { type: "none" } })),
    ),
  );
});
