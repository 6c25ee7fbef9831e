#!/bin/sh
# Install the validator's npm packages exactly as package-lock.json pins
# them (npm ci), only when node_modules is missing or older than the lock
# file. Node.js 14+ and npm are needed (Debian 12: apt-get install nodejs
# npm); the npm registry must be reachable for the first install.
set -eu
cd "$(dirname "$0")"

for p in node npm; do
	if ! command -v "$p" >/dev/null 2>&1; then
		echo "k8s_validate/install.sh: $p is missing (Debian: apt-get install nodejs npm)" >&2
		exit 1
	fi
done
if [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
	exit 0
fi
if ! npm ci --no-audit --no-fund >/dev/null; then
	echo "k8s_validate/install.sh: npm ci failed in $(pwd) (the npm registry must be reachable)" >&2
	exit 1
fi
