/**
 * `applyGateway()` and `revertGateway()` (`lib/installers/gateway_settings.ts`)
 * on plain objects, without the installer around them.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import {
  applyGateway,
  claudeGatewayPlan,
  GatewayConflictError,
  opencodeGatewayPlan,
  revertGateway,
} from "../../lib/installers/gateway_settings.ts";
import { URL_ } from "./_gateway_install.ts";

Deno.test("applyGateway() and revertGateway() round-trip: created objects go, earlier values come back, key order is kept", () => {
  const settings = {
    env: { ANTHROPIC_CUSTOM_HEADERS: "A: 1\nx-harness-capture: old", Z: "z" },
    other: [1, 2],
  };
  const plan = claudeGatewayPlan(settings, { url: URL_, capture: "c2" });
  const { settings: on, record } = applyGateway(settings, plan);
  assertEquals(
    (on.env as Record<string, string>).ANTHROPIC_CUSTOM_HEADERS,
    "A: 1\nx-harness-capture: c2",
  );
  const { settings: off, kept } = revertGateway(on, record);
  assertEquals(kept, []);
  assertEquals(JSON.stringify(off), JSON.stringify(settings));
  // OpenCode: every object on the way is created, and removed again.
  const oc = applyGateway({ theme: "x" }, opencodeGatewayPlan({ url: URL_ }));
  assertEquals(oc.record.created, [
    ["provider"],
    ["provider", "anthropic"],
    ["provider", "anthropic", "options"],
    ["provider", "openai"],
    ["provider", "openai", "options"],
  ]);
  assertEquals(revertGateway(oc.settings, oc.record).settings, { theme: "x" });
  // A base URL set elsewhere is a typed refusal naming the key.
  let err: unknown;
  try {
    applyGateway(
      { provider: { anthropic: { options: { baseURL: "http://other/v1" } } } },
      opencodeGatewayPlan({ url: URL_ }),
    );
  } catch (e) {
    err = e;
  }
  assertOk(err instanceof GatewayConflictError);
  assertEquals(err.path, ["provider", "anthropic", "options", "baseURL"]);
  // A key on the way that is not an object is refused, not overwritten.
  let typeErr = "";
  try {
    applyGateway({ env: "x" }, claudeGatewayPlan({}, { url: URL_ }));
  } catch (e) {
    typeErr = (e as Error).message;
  }
  assertOk(/"env" is not an object; fix it by hand/.test(typeErr), typeErr);
});
