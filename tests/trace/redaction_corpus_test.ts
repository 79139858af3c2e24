import { assertEquals, assertOk } from "../_assert.ts";
import {
  DEFAULT_REDACTION_RULES,
  parseRedactionRules,
  redactionSet,
  redactValue,
} from "../../lib/trace/redact.ts";

// Shapes of secrets (fake values), each with the part that must not survive.
const K = "Zq9" + "x".repeat(12) + "Q7m2Lp0Vb8Nc4";
const SHAPES: [string, string, string][] = [
  [
    "rsa key",
    `-----BEGIN RSA PRIVATE KEY-----\nMIIE${K}\n-----END RSA PRIVATE KEY-----`,
    `MIIE${K}`,
  ],
  [
    "openssh key",
    `-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl${K}\n-----END OPENSSH PRIVATE KEY-----`,
    `b3Bl${K}`,
  ],
  [
    "pgp key",
    `-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOY${K}\n-----END PGP PRIVATE KEY BLOCK-----`,
    `lQOY${K}`,
  ],
  ["postgres url", `postgres://app:Pg${K}@db.internal:5432/prod`, `Pg${K}`],
  ["mysql url", `mysql://root:My${K}@localhost/app`, `My${K}`],
  ["git url", `https://deploy:Gt${K}@github.com/acme/repo.git`, `Gt${K}`],
  [
    "jwt",
    `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.${K}`,
    `eyJzdWIiOiIxMjM0NTYifQ.${K}`,
  ],
  [
    "basic auth",
    `Authorization: Basic ${btoa("user:" + K)}`,
    btoa("user:" + K),
  ],
  ["bearer", `curl -H "Authorization: Bearer Bx${K}" api`, `Bx${K}`],
  ["aws secret lower", `aws_secret_access_key = Aw${K}/abc`, `Aw${K}`],
  ["aws secret upper", `AWS_SECRET_ACCESS_KEY=Aw${K}`, `Aw${K}`],
  ["db_password", `db_password=Db${K}`, `Db${K}`],
  ["yaml password", `database:\n  password: Ym${K}\n  user: app`, `Ym${K}`],
  ["json password", `{"user":"app","password":"Js${K}"}`, `Js${K}`],
  ["cookie", `Cookie: session=Ck${K}; theme=dark`, `Ck${K}`],
  ["set-cookie", `Set-Cookie: sid=Sc${K}; Path=/`, `Sc${K}`],
  ["x-api-key header", `X-Api-Key: Xa${K}`, `Xa${K}`],
  ["x-auth-token header", `X-Auth-Token: Xt${K}`, `Xt${K}`],
  [
    "azure",
    `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Az${K}==;EndpointSuffix=core.windows.net`,
    `Az${K}`,
  ],
  ["stripe", `sk_live_${K}abcd`, `sk_live_${K}abcd`],
  ["stripe restricted", `rk_test_${K}abcd`, `rk_test_${K}abcd`],
  [
    "npm",
    `//registry.npmjs.org/:_authToken=npm_${"a1B2c3D4e5".repeat(3)}abcdef`,
    `npm_${"a1B2c3D4e5".repeat(3)}abcdef`,
  ],
  [
    "huggingface",
    `HF_TOKEN is hf_${"AbCdEfGhIj".repeat(3)}xy`,
    `hf_${"AbCdEfGhIj".repeat(3)}xy`,
  ],
  ["sendgrid", `SG.${K}.${K}`, `SG.${K}.${K}`],
  [
    "slack webhook",
    `https://hooks.slack.com/services/T000/B000/${K}`,
    `B000/${K}`,
  ],
  ["slack token", `xoxb-1234567890-${K}`, `xoxb-1234567890-${K}`],
  ["password flag", `deploy --password=Pf${K} --yes`, `Pf${K}`],
  ["password flag spaced", `login --password Ps${K}`, `Ps${K}`],
  ["mysql -p", `mysql -u root -pMp${K} prod`, `Mp${K}`],
  [
    "query api_key",
    `GET https://api.example.com/v1?q=1&api_key=Qk${K}`,
    `Qk${K}`,
  ],
  [
    "query access_token",
    `https://x.example.com/cb?access_token=Qa${K}&state=1`,
    `Qa${K}`,
  ],
  ["openai", `sk-proj-${K}${K}`, `sk-proj-${K}${K}`],
  ["anthropic", `sk-ant-api03-${K}${K}`, `sk-ant-api03-${K}${K}`],
  ["github", `ghp_${"A1b2C3d4E5".repeat(4)}`, `ghp_${"A1b2C3d4E5".repeat(4)}`],
  ["gitlab", `glpat-${K}`, `glpat-${K}`],
  [
    "google",
    `AIza${"SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q".slice(0, 35)}`,
    `SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q`.slice(0, 35),
  ],
];

// Where a secret sits in what hosts send.
const POSITIONS: ((t: string) => unknown)[] = [
  (t) => ({ tool_input: { command: t } }),
  (t) => ({ tool_response: { stdout: `ok\n${t}\ndone` } }),
  (t) => ({ tool_response: JSON.stringify({ output: t }) }),
  (t) => ({ prompt: `please use this: ${t}` }),
  (t) => ({ result: { content: [{ type: "text", text: t }] } }),
  (t) => ({ file: { content: `# config\n${t}\n` } }),
  (t) => ({ args: ["--verbose", t] }),
];

const SECRET_KEYS = [
  "api_token",
  "X-Auth-Token",
  "DB_PASSWORD",
  "secret_key",
  "passphrase",
  "client_secret",
  "aws_secret_access_key",
];

Deno.test("redaction corpus: no secret shape survives in any position, secret-named keys are redacted, ordinary ids stay", () => {
  const raw: string[] = [];
  let placements = 0;
  for (const [name, text, secret] of SHAPES) {
    for (const [i, place] of POSITIONS.entries()) {
      placements++;
      const { value } = redactValue(place(text));
      if (JSON.stringify(value).includes(JSON.stringify(secret).slice(1, -1))) {
        raw.push(`${name} @${i}`);
      }
    }
  }
  for (const key of SECRET_KEYS) {
    for (
      const v of [{ [key]: `V${K}` }, {
        tool_input: { env: { [key]: `V${K}` } },
      }]
    ) {
      placements++;
      if (JSON.stringify(redactValue(v).value).includes(`V${K}`)) {
        raw.push(`key ${key}`);
      }
    }
  }
  assertEquals(raw, [], `${raw.length} of ${placements} placements stored raw`);
  assertOk(placements >= SHAPES.length * POSITIONS.length + 14);
  // Ordinary identifiers are left alone (lineage needs them).
  const ordinary = {
    command: "cat orders/ORD-7731.txt && grep ana@example.com users.csv",
    order_id: "#W2378156",
    session_id: "02d72c26-3976-4e3f-a4ec-3add06514757",
    path: "/home/dev/agent-demo/work/notes.txt",
    config: "max_tokens: 4096\ninput_tokens = 1200\nkeyboard: clicky",
    tokens: { input: 2470, output: 38 },
    url: "https://example.com/orders?id=ORD-7731&page=2",
    text: "the token count was 7 and the password field is empty",
  };
  const { value, counts } = redactValue(ordinary);
  assertEquals(value, ordinary, JSON.stringify(counts));
});

Deno.test("redaction set: the screen never changes what is redacted (every shape, every position, ordinary text), and custom rules with their own flags are still applied", () => {
  const set = redactionSet(DEFAULT_REDACTION_RULES);
  assertOk(set.screen !== null, "the default rules join into one screen");
  const unscreened = { rules: DEFAULT_REDACTION_RULES, screen: null };
  const texts = [
    ...SHAPES.flatMap(([, text]) => POSITIONS.map((place) => place(text))),
    { text: "the token count was 7", path: "/home/dev/notes.txt" },
  ];
  for (const v of texts) {
    assertEquals(redactValue(v, set), redactValue(v, unscreened));
  }
  // A unicode-property rule (flag u) joins the screen with the defaults.
  const [upper] = parseRedactionRules(
    '[{"name": "badge", "pattern": "BADGE-\\\\p{Lu}{4}", "flags": "u"}]',
  );
  const custom = redactionSet([...DEFAULT_REDACTION_RULES, upper]);
  assertOk(custom.screen?.flags.includes("u"));
  assertEquals(redactValue({ t: "id BADGE-ÄBCD ok" }, custom).value, {
    t: "id [REDACTED:badge] ok",
  });
  // A named back-reference cannot join a screen: every rule scans.
  const twice = { name: "twice", pattern: /(?<w>zz\w+) \k<w>/g };
  const withRef = redactionSet([...DEFAULT_REDACTION_RULES, twice]);
  assertEquals(withRef.screen, null);
  assertEquals(redactValue({ t: "zzab zzab" }, withRef).value, {
    t: "[REDACTED:twice]",
  });
});
