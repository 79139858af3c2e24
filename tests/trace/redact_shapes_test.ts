/**
 * Issue 44, items 9 and 13: model providers' key shapes, the labelled
 * shapes (Azure's 32 hex digits, Mistral's 32 characters) against the hex the
 * trace itself holds, `Basic`/`Bearer` only before a credential's shape, and
 * the exact-secret scrub the gateway uses for keys of no known shape.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import {
  DEFAULT_REDACTION_RULES,
  redactionSet,
  redactValue,
} from "../../lib/trace/redact.ts";
import {
  exactForms,
  requestSecrets,
  scrubExact,
  scrubExactEvents,
} from "../../lib/trace/scrub_exact.ts";
import { annotation } from "../../lib/trace/episode_events.ts";
import { fixedContext } from "../_helpers.ts";
import { sha256Hex } from "../../lib/trace/hash.ts";

import { HEX, LABELLED_KEYS, PROVIDER_KEYS } from "./_key_shapes.ts";

Deno.test("provider keys: Groq, xAI, Perplexity, Replicate and Azure's signed keys are redacted wherever they stand, each counted by its name", () => {
  for (const [key, name] of PROVIDER_KEYS) {
    for (
      const text of [key, `use ${key} please`, `{"k":"${key}"}`, `x=${key};`]
    ) {
      const { value, counts } = redactValue({ text });
      assertOk(!JSON.stringify(value).includes(key), `${name} in ${text}`);
      assertOk((counts[name] ?? 0) >= 1 || Object.keys(counts).length > 0);
    }
    assertEquals(redactValue({ text: key }).counts, { [name]: 1 }, name);
  }
});

Deno.test("labelled keys: 32 hex digits after an Azure or api-key label and 32 characters after Mistral are redacted, the label kept", () => {
  for (const [text, key, name] of LABELLED_KEYS) {
    const { value, counts } = redactValue({ text });
    assertOk(!value.text.includes(key), text);
    assertOk(value.text.includes(`[REDACTED:${name}]`), value.text);
    assertEquals(Object.values(counts).reduce((a, b) => a + b, 0), 1, text);
  }
  // The label stays readable.
  assertEquals(
    redactValue({ t: `my Azure OpenAI key is ${HEX}` }).value.t,
    "my Azure OpenAI key is [REDACTED:azure_key]",
  );
});

Deno.test("no false positives on the hex and ids the trace itself holds: sha256 digests, event and trace ids, MD5 sums, model names", () => {
  const digest = sha256Hex("hello");
  const ordinary = {
    prev_event_hash: `sha256:${digest}`,
    blob: { $blob: `sha256:${digest}`, size: 12 },
    event_id: "evt_02d72c26-3976-4e3f-a4ec-3add06514757",
    trace_id: HEX,
    span: `trace ${HEX} span 00f067aa0ba902b7`,
    md5: `md5sum: ${HEX}  notes.txt`,
    commit: "ce7a01a258a395682867285691333919925bf2db",
    far: `Azure deployment notes for the team, written last week; id ${HEX}`,
    model: "mistral-large-latest",
    raw: `{"model":"mistral-small-latest","id":"cmpl-${HEX}"}`,
    azure_id: `azure deployment ${HEX}`,
    words: "Mistral answered abcdefghijklmnopqrstuvwxyzabcdef",
    digest_after_label: `api key sha256:${digest}`,
  };
  const { value, counts } = redactValue(ordinary);
  assertEquals(counts, {});
  assertEquals(value, ordinary);
});

Deno.test("Basic and Bearer: ordinary words after them stay, credentials' shapes go (both ways)", () => {
  const stay = [
    "Use Basic authentication for the admin page",
    "Basic scripted session",
    "Basic settings: colour and language",
    "Basic Auth is weak; prefer tokens",
    "Bearer tokens expire after an hour",
    "The Bearer authentication scheme",
    "Bearer [REDACTED:openai_key]",
  ];
  for (const t of stay) {
    const { value, counts } = redactValue({ t });
    assertEquals(value.t, t, JSON.stringify(counts));
  }
  const go: [string, string][] = [
    [`Basic ${btoa("admin:hunter2-Long")}`, "basic_auth"],
    [`curl -u x -H "Basic ${btoa("user:pass")}"`, "basic_auth"],
    ["Bearer abcdefgh12345678", "bearer_token"],
    ["Bearer eyJhbGciOiJIUzI1NiJ9", "bearer_token"],
    [`Bearer ${"opaqueLettersOnlyTokenWithNoDigits"}`, "bearer_token"],
    ["bearer: Bearer sk_test-abc.def~ghi/jkl+mno9=", "bearer_token"],
  ];
  for (const [t, name] of go) {
    const { value, counts } = redactValue({ t });
    assertOk((counts[name] ?? 0) === 1, `${t}: ${JSON.stringify(counts)}`);
    assertOk(value.t.includes(`[REDACTED:${name}]`), value.t);
  }
  // In a header, whatever the value's shape, the header rule takes it.
  assertEquals(
    redactValue({ t: "Authorization: Basic notbase64word" }).value.t,
    "Authorization: [REDACTED:secret_header]",
  );
});

Deno.test("the screen agrees with every rule on the new shapes and the words that stay", () => {
  const set = redactionSet(DEFAULT_REDACTION_RULES);
  const unscreened = { rules: DEFAULT_REDACTION_RULES, screen: null };
  const texts = [
    ...PROVIDER_KEYS.map(([k]) => ({ t: k })),
    ...LABELLED_KEYS.map(([t]) => ({ t })),
    { t: "Basic scripted session", u: "Bearer tokens expire" },
  ];
  for (const v of texts) {
    assertEquals(redactValue(v, set), redactValue(v, unscreened));
  }
});

Deno.test("a set remembers the strings its screen found clean, never one it matched: the same secret is redacted each time, the same clean text left alone, a set built once gives what the rules give", () => {
  const set = redactionSet(DEFAULT_REDACTION_RULES);
  const unscreened = { rules: DEFAULT_REDACTION_RULES, screen: null };
  const secret = `deploy with sk-ant-api03-${"a".repeat(24)} today`;
  const clean = "a system prompt that every request carries again and again";
  for (let round = 0; round < 3; round++) {
    const v = { system: clean, user: secret, list: [clean, secret] };
    const got = redactValue(v, set);
    assertEquals(got, redactValue(v, unscreened));
    assertEquals(got.counts, { anthropic_key: 2 });
    assertOk(got.value.system === clean);
  }
  // Many clean strings (more than two generations hold) leave it as exact.
  for (let i = 0; i < 40_000; i++) {
    const t = `clean text number ${i} ${"x".repeat(40)}`;
    assertOk(redactValue({ t }, set).value.t === t);
  }
  assertEquals(
    redactValue({ secret }, set),
    redactValue({ secret }, unscreened),
  );
});

Deno.test("scrubExact: the exact client key goes from every string, as it is, JSON-escaped and URL-encoded; short or empty secrets scrub nothing", () => {
  const key = 'selfhosted-7c1f"0e22/x';
  const v = {
    error: { message: `Invalid key ${key} for model m` },
    body: JSON.stringify({ echoed: key }),
    url: `https://h/v1?key=${encodeURIComponent(key)}`,
    list: ["a", `x${key}y${key}`],
    keep: 42,
  };
  const { value, counts } = scrubExact(v, [key]);
  const text = JSON.stringify(value);
  assertOk(!text.includes("selfhosted-7c1f"), text);
  assertEquals(counts, { client_key: 5 });
  assertEquals(value.keep, 42);
  assertEquals(value.list[0], "a");
  // Nothing to scrub: the very same value comes back.
  const clean = { a: "b" };
  assertOk(scrubExact(clean, [key]).value === clean);
  assertEquals(exactForms(["", "short", "abcdefgh"]), ["abcdefgh"]);
  assertOk(
    scrubExact({ t: "short words" }, ["short"]).value.t === "short words",
  );
  // On events: counts merge into the payload's redactions.
  const ev = annotation(fixedContext("c"), {
    type: "upstream.error",
    text: `401: ${key}`,
    redactions: { bearer_token: 1 },
  });
  const [out] = scrubExactEvents([ev], [key]);
  assertEquals(out.payload.text, "401: [REDACTED:client_key]");
  assertEquals(out.payload.redactions, { bearer_token: 1, client_key: 1 });
  const untouched = annotation(fixedContext("c"), { type: "x", text: "ok" });
  assertOk(scrubExactEvents([untouched], [key])[0] === untouched);
});

Deno.test("requestSecrets: the credentials a model call carries (headers without their scheme, a Basic password, ?key=), what scrubExact then removes from an echoed error", () => {
  const headers: Record<string, string> = {
    authorization: `Basic ${btoa("me:selfhosted-pw-91x")}`,
    "api-key": HEX,
    "x-goog-api-key": "goog-key-0000111",
    "content-type": "application/json",
  };
  const secrets = requestSecrets(
    (n) => headers[n] ?? null,
    "/v1beta/models/m:generateContent?key=qk-123456789&alt=sse",
  );
  for (
    const s of [
      btoa("me:selfhosted-pw-91x"),
      "selfhosted-pw-91x",
      HEX,
      "goog-key-0000111",
      "qk-123456789",
    ]
  ) assertOk(secrets.includes(s), s);
  assertOk(!secrets.includes("application/json"));
  assertOk(!secrets.includes("sse"));
  const echoed = {
    error: `401: key ${HEX} / password selfhosted-pw-91x / qk-123456789`,
  };
  const { value } = scrubExact(echoed, secrets);
  assertEquals(
    value.error,
    "401: key [REDACTED:client_key] / password [REDACTED:client_key] / [REDACTED:client_key]",
  );
  assertEquals(requestSecrets(() => null), []);
});
