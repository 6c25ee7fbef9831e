#!/bin/sh
# Install the shop's npm packages exactly as package-lock.json pins them
# (npm ci), only when node_modules is missing or older than the lock file.
# Node.js (18.19+ or 20.6+, the pinned OpenTelemetry packages' range; tested
# with 20) and npm do not come from scripts/bootstrap.sh: this says so when
# they are missing.
set -eu
cd "$(dirname "$0")"

missing=""
command -v node >/dev/null 2>&1 || missing="$missing node"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
	echo "shop/install.sh: missing:$missing; install Node.js 18.19+ or 20.6+ with npm" \
		"(Debian 12: apt-get install nodejs npm; or NodeSource's nodejs)" >&2
	exit 1
fi
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number);
process.exit(a > 20 || (a === 20 && b >= 6) || (a === 18 && b >= 19) ? 0 : 1)'; then
	echo "shop/install.sh: node $(node --version) is too old: the shop needs 18.19+ or 20.6+" >&2
	exit 1
fi

# npm ci writes node_modules/.package-lock.json last: a copy newer than the
# lock file is a finished install of that lock file.
if [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
	exit 0
fi
if ! npm ci --no-audit --no-fund; then
	echo "shop/install.sh: npm ci failed in $(pwd) (the npm registry must be reachable)" >&2
	exit 1
fi
