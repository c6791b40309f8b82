#!/usr/bin/env bash
# Builds the fastest kueuesim binary: the release build with profile-guided optimisation
# (docs/performance.md, "Profile-guided optimisation"). The simulator's time is bound by the
# first-level instruction cache as much as by instructions; a profile of real runs lets LLVM
# lay the hot path out together, lay cold branches aside and inline by measured calls. The
# decisions are the same as the plain release build's (the compiler's optimisations keep the
# program's meaning; the CI-checked byte-identity of outputs holds for this binary too).
#
#   scripts/pgo-build.sh        # prints the binary's path, target/pgo/kueuesim, at the end
#
# Steps: an instrumented build with the workspace's release profile (the same whole-program
# link as the final build: a profile taken from a build without it mostly fails to match the
# final build's functions and gained no time, where this one gains 10-18 %),
# training runs on the embedded platform day and the first 120 simulated hours of
# scenarios/scale/million.yaml (Kueue's cycle, Volcano, KAI and kube-scheduler placement,
# preemption, the recorder), then the release build with the merged profile. Two release
# builds (about 6 minutes each on two quiet cores); llvm-profdata comes from rustup's
# llvm-tools component, installed if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -eq 0 ] || { echo "usage: scripts/pgo-build.sh (no arguments)" >&2; exit 2; }

dir=$PWD/target/pgo
# RUSTFLAGS is split at whitespace, so the profile's path cannot hold any: refuse rather
# than hand rustc a broken flag.
case "$dir" in
  *[[:space:]]*) echo "pgo-build: the checkout's path has whitespace, which RUSTFLAGS cannot carry: $dir" >&2; exit 2 ;;
esac
sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata=$sysroot/lib/rustlib/$host/bin/llvm-profdata
if [ ! -x "$profdata" ]; then
  echo "pgo-build: installing rustup's llvm-tools component (llvm-profdata)" >&2
  rustup component add llvm-tools
fi
[ -x "$profdata" ] || { echo "pgo-build: no llvm-profdata at $profdata" >&2; exit 1; }

echo "pgo-build: 1/4 the instrumented build" >&2
rm -rf "$dir/raw"
mkdir -p "$dir/raw"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$dir/raw" \
  cargo build --release -p kueuesim-cli --target-dir "$dir/gen"

echo "pgo-build: 2/4 training runs" >&2
gen=$dir/gen/release/kueuesim
# The platform day's own warnings (a LocalQueue it leaves undefined on purpose) are not news
# here; a failure is.
"$gen" run --quiet > /dev/null 2>&1 || { echo "pgo-build: the training run on the platform day failed" >&2; exit 1; }
"$gen" run --quiet scenarios/scale/million.yaml --until 120h > /dev/null

echo "pgo-build: 3/4 merging the profile" >&2
"$profdata" merge -o "$dir/kueuesim.profdata" "$dir/raw"

echo "pgo-build: 4/4 the release build with the profile" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$dir/kueuesim.profdata" \
  cargo build --release -p kueuesim-cli --target-dir "$dir/use"
cp "$dir/use/release/kueuesim" "$dir/kueuesim"
echo "$dir/kueuesim"
