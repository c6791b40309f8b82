#!/usr/bin/env bash
# Checks that two kueuesim binaries give byte-identical results: `-o json` and every `--out`
# file, on every scenario in scenarios/ (the three traces and Kueue's perf scenarios
# included). Used to show that a restructuring changed no behaviour:
#
#   git worktree add /tmp/before <old-commit> && (cd /tmp/before && cargo build --release)
#   cargo build --release
#   scripts/same-output.sh /tmp/before/target/release/kueuesim target/release/kueuesim
#
# The traces are read from the default trace root (../shared/traces) or $KUEUESIM_TRACE_ROOT;
# without them their runs fail alike in both binaries and the comparison says so.
set -uo pipefail
old=${1:?usage: same-output.sh OLD_BIN NEW_BIN}
new=${2:?usage: same-output.sh OLD_BIN NEW_BIN}
cd "$(dirname "$0")/.." || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
differ=0 same=0

# The same list of scenarios as .ci/run: every directory holding YAML is one scenario, except
# the directories whose every file is one (traces, perf, scale); million.yaml is run to 48 h.
targets=()
for dir in $(find scenarios -name '*.yaml' -printf '%h\n' | sort -u); do
  case "$dir" in scenarios/traces|scenarios/kueue-perf|scenarios/scale|scenarios/sweeps) continue ;; esac
  targets+=("$dir")
done
targets+=(scenarios/traces/*.yaml scenarios/kueue-perf/*.yaml "scenarios/scale/million.yaml --until 48h" "")

compare() { # label, command args...
  local label=$1; shift
  for side in old new; do
    local bin=$old; [ "$side" = new ] && bin=$new
    rm -rf "${work:?}/$side"; mkdir -p "$work/$side"
    "$bin" "$@" -o json > "$work/$side/stdout.json" 2> "$work/$side/stderr" ; echo "exit $?" >> "$work/$side/stderr"
    "$bin" "$@" --quiet --out "$work/$side/out" > "$work/$side/summary.txt" 2>> "$work/$side/stderr"; echo "exit $?" >> "$work/$side/stderr"
  done
  if diff -r -q "$work/old" "$work/new" > "$work/diff"; then
    same=$((same + 1)); echo "same     $label"
  else
    differ=$((differ + 1)); echo "DIFFERS  $label"; sed 's/^/         /' "$work/diff"
  fi
}

for t in "${targets[@]}"; do
  # shellcheck disable=SC2086
  compare "run ${t:-(embedded default)}" run $t
done
echo "$same same, $differ differ"
[ "$differ" = 0 ]
