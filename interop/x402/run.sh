#!/usr/bin/env bash
# x402 interoperability: the official clients pay a running certbank.
set -euo pipefail
cd "$(dirname "$0")"
[ -d node_modules/x402-fetch ] || npm ci --no-audit --no-fund --loglevel=error
exec node --test --test-reporter=spec interop.test.mjs
