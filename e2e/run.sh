#!/usr/bin/env bash
# Browser tests of certbank's study hubs, then Lighthouse. Installs what is
# missing (Debian's Chromium, the pinned npm packages from package-lock.json),
# builds certbank once, and exits non-zero on any failure.
#
#   bash e2e/run.sh            # from the repository root, or from e2e/
#
# Never downloads a browser: Playwright and Lighthouse drive /usr/bin/chromium.
set -euo pipefail
cd "$(dirname "$0")"
E2E="$(pwd)"

export CHROME_PATH="${CHROME_PATH:-/usr/bin/chromium}"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

if [ ! -x "$CHROME_PATH" ]; then
  echo "run.sh: installing Debian's chromium"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

if ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then
  echo "run.sh: Node.js 20 or newer is needed (found $(node --version))" >&2
  exit 1
fi

# npm ci when node_modules is missing or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "run.sh: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "run.sh: go build certbank"
(cd .. && go build -o "$tmp/certbank" ./cmd/certbank)
export CERTBANK_E2E_BIN="$tmp/certbank"

status=0
node --test --test-concurrency=1 tests/ || status=1
node lighthouse.mjs || status=1
if [ "$status" -ne 0 ]; then
  echo "run.sh: FAILED" >&2
else
  echo "run.sh: all browser tests and Lighthouse targets passed"
fi
echo "run.sh: screenshots in $E2E/screenshots/, Lighthouse reports in $E2E/reports/"
exit "$status"
