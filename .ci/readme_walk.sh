#!/usr/bin/env bash
# Follows the README as a newcomer does (issue #37): a clean clone in another
# folder, only Node.js on PATH (Deno from npx, then from npm as the README
# says), every command block it names run as printed — Quick Start, serve,
# install/doctor in a scratch project, capture, import (while serve runs),
# compile, explain, run, report, export, eval on the checkout's data,
# the model gateway's record → compile → serve with an unmodified agent on
# the official `openai` npm client (.ci/walk_agent/: no header of ours, a
# scripted model on loopback that counts its requests), delete/prune,
# uninstall. It fails on the first non-zero exit or "command not found", on a
# README line it runs that the README no longer has, and when serving the
# compiled package does not cut the requests that reach the model.
#
# Each step quotes its README line; where the walk must differ (a free port
# instead of 8848, ids the README writes as <id>, a scratch npm prefix
# instead of a global install) the line says so and the command shows it.
#
# Usage: .ci/readme_walk.sh            (from the checkout; walks its HEAD)
#        KEEP=1 .ci/readme_walk.sh     (keep the scratch folder, printed)
# Uses the machine's npm and Deno caches (a fresh cache adds the downloads:
# HOME=$(mktemp -d) .ci/readme_walk.sh walks with none).
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
README="$SRC/README.md"
WORK=$(mktemp -d /tmp/readme_walk.XXXXXX)
H="$WORK/harness"
PROJECT="$WORK/my-project"
LOG="$WORK/step.log"
SERVER_PID=""
UPSTREAM_PID=""
started=$(date +%s)

finish() {
  local rc=$?
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
  if [ -n "$UPSTREAM_PID" ]; then kill "$UPSTREAM_PID" 2>/dev/null; wait "$UPSTREAM_PID" 2>/dev/null; fi
  echo "walk: $(( $(date +%s) - started )) s, exit $rc"
  # (last: PATH is a folder in it)
  if [ "${KEEP:-}" = "1" ]; then echo "walk: scratch folder kept: $WORK"; else rm -rf "$WORK"; fi
  exit "$rc"
}
trap finish EXIT

fail() {
  echo "walk: FAILED: $*" >&2
  [ -f "$LOG" ] && tail -40 "$LOG" >&2
  exit 1
}

# readme LINE: the README must still print LINE (so the walk follows it).
readme() {
  grep -qF -- "$1" "$README" || fail "the README no longer has: $1"
}

# step "README line" [command as run, when it differs]: run in the current folder.
step() {
  local line=$1 cmd=${2:-$1}
  readme "$line"
  echo "walk: \$ $cmd"
  local t0=$(date +%s)
  bash -c "$cmd" >"$LOG" 2>&1
  local rc=$?
  if grep -q "command not found" "$LOG"; then fail "\"command not found\" from: $cmd"; fi
  [ "$rc" -eq 0 ] || fail "exit $rc from: $cmd"
  echo "walk:   ok ($(( $(date +%s) - t0 )) s)"
}

# also "what" command: a step the README does not print (the user's own
# agent, their model server), run and checked the same way.
also() {
  local what=$1 cmd=$2
  echo "walk: \$ $cmd   ($what)"
  local t0=$(date +%s)
  bash -c "$cmd" >"$LOG" 2>&1
  local rc=$?
  if grep -q "command not found" "$LOG"; then fail "\"command not found\" from: $cmd"; fi
  [ "$rc" -eq 0 ] || fail "exit $rc from: $cmd"
  echo "walk:   ok ($(( $(date +%s) - t0 )) s)"
}

# Only Node.js on PATH: a folder of links to node, npm, npx and the shell
# tools the walk itself uses — never a deno, wherever this machine keeps one.
mkdir -p "$WORK/bin"
for tool in node npm npx git bash sh env cat cmp cp ls mkdir rm sed grep tail seq sleep date mktemp dirname; do
  src=$(command -v "$tool") || fail "no $tool on this machine"
  ln -s "$src" "$WORK/bin/$tool"
done
export PATH="$WORK/bin"
export NO_COLOR=1 DENO_NO_UPDATE_CHECK=1
unset HARNESS_ROOT HARNESS_INGEST_URL HARNESS_CAPTURE_ID HARNESS_INGEST_TOKEN INIT_CWD DENO_DIR
command -v node >/dev/null || fail "no node on PATH"
if command -v deno >/dev/null; then fail "a deno is on PATH ($(command -v deno))"; fi

git clone -q "$SRC" "$H" || fail "git clone $SRC"
mkdir -p "$PROJECT"
cd "$H" || exit 1

# serve ARGS...: deno task serve in the background, until /health answers.
serve() {
  echo "walk: \$ deno task serve $*   (a free port, not 8848: the machine is shared)"
  deno task serve "$@" >"$WORK/serve.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 150); do
    if node -e "fetch('$URL/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" 2>/dev/null; then
      echo "walk:   serving at $URL"
      return 0
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/serve.log" >&2; fail "deno task serve exited"; }
    sleep 0.2
  done
  fail "deno task serve did not answer at $URL"
}

# printed PATTERN: wait (10 s at most) until serve's output has a line with
# PATTERN (its start-up lines follow the moment /health answers).
printed() {
  for _ in $(seq 1 100); do
    grep -qF -- "$1" "$WORK/serve.log" && return 0
    sleep 0.1
  done
  return 1
}

# --- Quick start ---------------------------------------------------------
step "npx -y deno@2.9.6 task demo"
# (npx -y deno@2.9.6 task ok is the gate .ci/run runs; not repeated here.)

# --- Every later command says deno: get it from npm ------------------------
readme "npm install -g deno@2.9.6"
readme "if global installs need root: --prefix ~/.local, and ~/.local/bin on PATH"
step "npm install -g deno@2.9.6" \
  "npm install -g deno@2.9.6 --prefix '$WORK/local' --prefer-offline --no-audit --no-fund"
export PATH="$WORK/local/bin:$PATH"
step "deno --version"

# --- Capturing a real agent ------------------------------------------------
PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
URL="http://127.0.0.1:$PORT"
readme "deno task serve        # the loopback ingest server on 127.0.0.1:8848"
serve --port "$PORT"

cd "$PROJECT" || exit 1
step "deno task --config /path/to/harness/deno.json install claude-code [--capture ID]" \
  "deno task --config '$H/deno.json' install claude-code --url $URL"
step "deno task --config /path/to/harness/deno.json doctor" \
  "deno task --config '$H/deno.json' doctor"
cd "$H" || exit 1

step 'deno task ingest capture start --label "first try"'
step "deno task ingest capture list"
# Import while serve runs (the README's own order): through the server.
step "deno task ingest import --format tau2 FILE --capture ID" \
  "deno task ingest import --format tau2 fixtures/tau2_retail_slice.json --capture walk"
step "deno task ingest capture inspect <capture_id>" "deno task ingest capture inspect walk"
step "deno task ingest capture lineage <capture_id>" "deno task ingest capture lineage walk"
step "deno task ingest capture verify <capture_id> [--json]" "deno task ingest capture verify walk --json"
step "deno task ingest status | stop" "deno task ingest status"

# The demo's capture: the order desk, which examples/order_desk runs.
DESK=$(deno task -q ingest capture list --json |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const c=JSON.parse(s).map(c=>c.capture_id).find(id=>/^desk_\d{8}-\d{6}$/.test(id));if(!c)process.exit(1);console.log(c)})') ||
  fail "no demo capture in the store"

# --- Compile, explain, run ---------------------------------------------------
step "deno task compile --capture <id> --out out [--effects e.json] [--contracts c.json] [--name N] [--replace]" \
  "deno task compile --capture $DESK --out out --name desk"
step "deno task compile explain out/<name>.package.json" "deno task compile explain out/desk.package.json"
step "deno task run out/<name>.package.json --capabilities examples/order_desk/run_capabilities.ts --trace" \
  "deno task run out/desk.package.json --capabilities examples/order_desk/run_capabilities.ts --trace"

# --- Report and export -------------------------------------------------------
step "deno task report <capture_id> --out report.html" "deno task report $DESK --out report.html"
step "deno task compile report out/desk.package.json --out out/desk.html"
step "deno task export <capture_id> --out traces.json" "deno task export $DESK --out traces.json"
step "deno task export <capture_id> --out traces.pb" "deno task export $DESK --out traces.pb"
step "deno task ingest import --format otlp traces.json --capture from_otel"

# --- Evaluation on the checkout's data ---------------------------------------
step "deno task eval [--data FILE] [--seeds N] [--out DIR]" "deno task eval --seeds 2 --out eval_out"
[ -f eval_out/tau_eval.md ] || fail "eval wrote no eval_out/tau_eval.md"

# --- Stop; serve a compiled agent-form package (the model gateway section) ----
step "deno task ingest status | stop" "deno task ingest stop"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""
# effects.json as a user writes it: which τ² retail tools only read.
node -e 'const r=["find_user_id_by_email","find_user_id_by_name_zip","get_order_details","get_product_details","get_user_details","list_all_product_types","calculate","think"];const w=["cancel_pending_order","exchange_delivered_order_items","modify_pending_order_address","modify_pending_order_items","modify_pending_order_payment","modify_user_address","return_delivered_order_items","transfer_to_human_agents"];const e={};for(const t of r)e[t]="read";for(const t of w)e[t]="write";require("fs").writeFileSync("effects.json",JSON.stringify(e))'
step "deno task compile --capture <id> --out out --form agent --effects effects.json" \
  "deno task compile --capture walk --out out --form agent --effects effects.json"
readme "deno task serve --package out/behavior.package.json"
serve --port "$PORT" --package out/behavior.package.json
step "deno task ingest status | stop" "deno task ingest stop"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""

# --- Record any agent: an unmodified agent through the gateway ------------------
# The user's agent (.ci/walk_agent/agent.mjs) on the official openai npm
# client, the version deno.json pins; their model is a scripted
# OpenAI-compatible server on loopback (upstream.mjs) that counts requests.
AGENT="$WORK/agent"
mkdir -p "$AGENT"
cp "$H/.ci/walk_agent/agent.mjs" "$AGENT/"
OPENAI_VERSION=$(sed -nE 's/.*"openai": "npm:openai@([^"]+)".*/\1/p' "$H/deno.json")
also "the agent's dependency" \
  "cd '$AGENT' && npm install openai@$OPENAI_VERSION --prefer-offline --no-audit --no-fund"
UP_PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
node "$H/.ci/walk_agent/upstream.mjs" "$UP_PORT" >"$WORK/upstream.log" 2>&1 &
UPSTREAM_PID=$!
upstream_requests() {
  node -e "fetch('http://127.0.0.1:$UP_PORT/count').then(r=>r.json()).then(j=>console.log(j.requests),()=>process.exit(1))"
}
for _ in $(seq 1 50); do upstream_requests >/dev/null 2>&1 && break; sleep 0.1; done
upstream_requests >/dev/null || fail "the scripted model server did not start"

readme "HARNESS_UPSTREAM_OPENAI=http://127.0.0.1:8000/v1 deno task serve"
export HARNESS_UPSTREAM_OPENAI="http://127.0.0.1:$UP_PORT/v1"
serve --port "$PORT"
step 'deno task ingest capture start --label "my run"' \
  "deno task ingest capture start --id gw_walk --label 'an agent through the gateway'"
readme "export OPENAI_BASE_URL=http://127.0.0.1:8848/v1"
readme "OPENAI_API_KEY=sk-local"
# agent BASE FIRST LAST OUT: one conversation per order, its answers to OUT.
agent() {
  also "the agent, orders $2..$3" \
    "cd '$AGENT' && OPENAI_BASE_URL=$1 OPENAI_API_KEY=sk-local node agent.mjs $2 $3 > '$WORK/$4'"
}
# What serve printed for the OpenAI SDKs (the README shows those lines).
printed "  OPENAI_BASE_URL=$URL/v1 → $HARNESS_UPSTREAM_OPENAI" ||
  fail "serve did not print OPENAI_BASE_URL=$URL/v1 → $HARNESS_UPSTREAM_OPENAI: $(cat "$WORK/serve.log")"
agent "$URL/v1" 1 10 recorded.txt
EPISODES=$(deno task -q ingest capture inspect gw_walk --json |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).episodes.filter(e=>e.episode_id.startsWith("gw_")).length))')
echo "walk:   the agent's 10 conversations are $EPISODES episodes"
[ "$EPISODES" = "10" ] || fail "10 conversations of the agent recorded as $EPISODES episodes"
step "deno task ingest status | stop" "deno task ingest stop"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""
readme '{ "get_order_details": "read", "cancel_pending_order": "destructive" }'
echo '{ "get_order_details": "read", "get_user_details": "read" }' >agent_effects.json
step "deno task compile --capture <id> --out out --form agent --effects effects.json" \
  "deno task compile --capture gw_walk --out agent_out --form agent --effects agent_effects.json"

# Six new conversations, without the package, then with it: the same answers,
# fewer requests reaching the model.
serve --port "$PORT"
before=$(upstream_requests)
agent "$URL/v1" 11 16 plain.txt
without=$(( $(upstream_requests) - before ))
step "deno task ingest status | stop" "deno task ingest stop"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""
readme "deno task serve --package out/behavior.package.json   # or --package NAME=FILE at /p/NAME/v1"
serve --port "$PORT" --package desk=agent_out/behavior.package.json
# The package's base URL as serve printed it.
printed "/p/desk/v1" || fail "serve did not name the package's URL: $(cat "$WORK/serve.log")"
SERVED=$(sed -nE 's/.*serving package behavior@sha256:[0-9a-f]+: OPENAI_BASE_URL=([^,]+), ANTHROPIC_BASE_URL=([^,]+), GOOGLE_GEMINI_BASE_URL=(.*)$/\1 \2 \3/p' "$WORK/serve.log")
[ "$SERVED" = "$URL/p/desk/v1 $URL/p/desk $URL/p/desk" ] ||
  fail "serve did not print the package's base URLs ($URL/p/desk/v1, $URL/p/desk, $URL/p/desk): $(cat "$WORK/serve.log")"
before=$(upstream_requests)
agent "${SERVED%% *}" 11 16 served.txt
with=$(( $(upstream_requests) - before ))
step "deno task ingest status | stop" "deno task ingest stop"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""
unset HARNESS_UPSTREAM_OPENAI
echo "walk:   requests that reached the model for 6 new conversations: $without without the package, $with with it"
cmp -s "$WORK/plain.txt" "$WORK/served.txt" ||
  fail "the agent's answers changed with the package: $(cat "$WORK/plain.txt") / $(cat "$WORK/served.txt")"
[ "$without" -gt 0 ] && [ "$with" -lt "$without" ] ||
  fail "serving the package did not cut the requests that reach the model ($without without, $with with)"

# --- Delete, retention, uninstall ------------------------------------------------
step "deno task ingest capture delete <id> [--force]" "deno task ingest capture delete from_otel"
step "deno task ingest store prune --older-than 30d [--dry-run]" "deno task ingest store prune --older-than 30d --dry-run"
cd "$PROJECT" || exit 1
readme "\`uninstall\` with the same arguments removes exactly what \`install\` added"
step "deno task --config /path/to/harness/deno.json install claude-code [--capture ID]" \
  "deno task --config '$H/deno.json' uninstall claude-code --url $URL"
[ -z "$(ls -A "$PROJECT")" ] || fail "uninstall left files in the project: $(ls -A "$PROJECT")"
echo "walk: every README step passed"
