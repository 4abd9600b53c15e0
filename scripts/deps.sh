#!/bin/sh
# Install what building and testing mcpreel needs on Debian, then the
# Node.js test peers.  Safe to run again: it installs only what is missing.
#   scripts/deps.sh build   the C libraries and tools
#   scripts/deps.sh test    those, plus criterion, sqlite3, clang with
#                           libFuzzer, valgrind, chromium (the HTML report's
#                           test loads the page headless), man, groff and
#                           zsh (the installed man page and completions'
#                           test), script(1) from bsdutils (a terminal for
#                           the CLI tests), protoc and Debian's Python
#                           protobuf (the OTLP test receiver decodes
#                           spans with them, run by /usr/bin/python3),
#                           and the npm peers
#   scripts/deps.sh fuzz    the C libraries, clang and libFuzzer
#   scripts/deps.sh bench   the C libraries, sqlite3, mitmproxy (the
#                           benchmark's HTTP comparison), and the npm
#                           peers it compares with: mcp-proxy (pinned in
#                           bench/peers) and server-everything (the e2e
#                           tests' packages)
set -eu

what=${1:-test}
pkgs="build-essential cmake pkg-config libevent-dev libjansson-dev libsqlite3-dev libssl-dev"
# libFuzzer (libclang_rt.fuzzer-x86_64.a) is in libclang-rt-14-dev on
# Debian 12, not in clang itself.
fuzz="clang libclang-rt-14-dev"
case "$what" in
build) ;;
test) pkgs="$pkgs libcriterion-dev sqlite3 valgrind nodejs npm chromium man-db groff-base zsh bsdutils protobuf-compiler python3-protobuf $fuzz" ;;
demo) pkgs="$pkgs libcriterion-dev sqlite3 nodejs npm" ;;
fuzz) pkgs="$pkgs $fuzz" ;;
bench) pkgs="$pkgs sqlite3 mitmproxy time nodejs npm" ;;
*) echo "usage: scripts/deps.sh build|test|demo|fuzz|bench" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
	case "$p" in
	nodejs|npm)
		# A Node.js from elsewhere (the image, nvm) is as good.
		cmd=$p; [ "$p" = nodejs ] && cmd=node
		command -v "$cmd" >/dev/null 2>&1 && continue ;;
	esac
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "mcpreel: missing packages:$missing" >&2
		echo "install them with: sudo apt-get install -y$missing" >&2
		exit 1
	fi
	echo "installing:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
fi

if [ "$what" = test ] || [ "$what" = demo ] || [ "$what" = bench ]; then
	e2e=$(dirname "$0")/../tests/e2e
	peers=$(dirname "$0")/../bench/peers
	# npm ci only when a lock changed since the last install.  The
	# conformance suite (and the Node 22 it needs) is a package of its
	# own, so its node does not shadow the system's.
	for dir in "$e2e" "$e2e/conformance" "$peers"; do
		[ "$what" != test ] && [ "$dir" = "$e2e/conformance" ] && continue
		[ "$what" != bench ] && [ "$dir" = "$peers" ] && continue
		if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
		    [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
			# The bench's peers are report only: without them
			# it runs and says which did not.
			(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || {
				rc=$?
				[ "$what" = bench ] || exit $rc
				echo "mcpreel: npm ci in $dir failed: the bench runs without those peers" >&2
			}
		fi
	done
fi
