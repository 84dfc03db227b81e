#!/usr/bin/env bash
# Interop checks of certbank's MCP endpoint against one `certbank serve`:
#   1. the official conformance suite (conformance.sh), and
#   2. the TypeScript SDK client test (ts-client.test.mjs, node --test).
# Exits non-zero if either fails.
#
# Usage: interop/mcp/run.sh   (needs go, npm and curl; fetches the pinned npm
# packages once into interop/mcp/node_modules)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install_deps || exit 1
start_server || exit 1

status=0
bash "$HERE/conformance.sh" || status=1

log "TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2)"
(cd "$HERE" && "$NODE" --test --test-reporter=spec ts-client.test.mjs) || status=1

if [[ $status -ne 0 ]]; then
  log "server log:"; tail -30 "$WORK/server.log" >&2
fi
exit $status
