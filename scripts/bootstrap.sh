#!/bin/sh
# Install the Debian packages libditto needs to build and test, and only
# those that are missing. Idempotent and silent when everything is present.
set -eu

PACKAGES="
meson ninja-build pkg-config gcc g++ clang llvm libclang-rt-14-dev
libbpf-dev libunwind-dev libdwarf-dev libelf-dev zlib1g-dev
libcapstone-dev libpfm4-dev libmsgpack-dev check libsubunit-dev
libjansson-dev libprotobuf-c-dev protobuf-c-compiler graphviz
abigail-tools bpftool binutils linux-libc-dev python3 python3-pytest
python3-setuptools python3-pip
redis-server redis-tools memcached libmemcached-tools wrk strace make valgrind nginx
postgresql postgresql-contrib mariadb-server sysbench apache2
locales
docker.io docker-compose python3-yaml
"

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "bootstrap: missing packages:$missing" >&2
	echo "bootstrap: run as root (sudo $0) to install them" >&2
	exit 1
fi

echo "bootstrap: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # word splitting of the list is intended
apt-get install -y -qq --no-install-recommends $missing >/dev/null
