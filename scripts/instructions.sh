#!/usr/bin/env bash
# The instruction-count regression guard (docs/performance.md, "Instruction counts"): runs
# each case below under Valgrind's callgrind, which counts the instructions a run executes
# (the same count run after run for the same binary and input, however busy the machine), and
# compares each count with benches/instructions.toml. A count more than 10% above the stored
# one fails; more than 10% below passes with a hint to store the new figures.
#
#   scripts/instructions.sh            # check (builds the release binaries first)
#   scripts/instructions.sh --update   # run every case and rewrite benches/instructions.toml
#
# The trace cases read Philly from the trace root: $KUEUESIM_TRACE_ROOT, else ../shared/traces
# beside the checkout (docs/traces.md). Without it they are skipped, unless
# KUEUESIM_REQUIRE_TRACES=1 (CI), where a missing trace fails.
set -euo pipefail
cd "$(dirname "$0")/.."

update=0
case "${1:-}" in
  "") ;;
  --update) update=1 ;;
  *) echo "usage: scripts/instructions.sh [--update]" >&2; exit 2 ;;
esac

file=benches/instructions.toml
tolerance=10 # per cent
target=${CARGO_TARGET_DIR:-target}
command -v valgrind >/dev/null || { echo "instructions: valgrind is not installed" >&2; exit 1; }

# The same two builds as .ci/run (the release binary; every bench with the whole workspace's
# features), so that in CI both are already fresh. The placement driver is the bench target
# `placement_count`; cargo names its executable with a hash, which its JSON messages give.
cargo build -q --release -p kueuesim-cli
cli=$target/release/kueuesim
driver=$(cargo bench -q --workspace --no-run --message-format=json \
  | grep -o '"name":"placement_count"[^}]*}.*"executable":"[^"]*"' \
  | sed 's/.*"executable":"\([^"]*\)"/\1/')
[ -x "$driver" ] || { echo "instructions: no placement_count bench executable" >&2; exit 1; }

traces=${KUEUESIM_TRACE_ROOT:-../shared/traces}
have_traces=1
if [ ! -f "$traces/philly-pollux/philly.csv" ]; then
  if [ "${KUEUESIM_REQUIRE_TRACES:-}" = 1 ]; then
    echo "instructions: no Philly trace under $traces (KUEUESIM_REQUIRE_TRACES=1)" >&2
    exit 1
  fi
  have_traces=0
fi

# Each case: name, then the command. Sized to take 10–40 s each under callgrind (about 50×
# native) while spending most of their instructions in the hot paths: the Kueue scheduling
# cycle, preemption, TAS, Volcano gangs on a trace, and the two topology placers.
names=() commands=()
add() { names+=("$1"); shift; commands+=("$*"); }
add kueue-perf-baseline "$cli run -q scenarios/kueue-perf/baseline.yaml --until 2m"
add kueue-perf-large-scale "$cli run -q scenarios/kueue-perf/large-scale.yaml --until 20s"
add kueue-perf-tas "$cli run -q scenarios/kueue-perf/tas.yaml --until 30s"
if [ $have_traces = 1 ]; then
  add philly "$cli run -q --trace-root $traces scenarios/traces/philly.yaml --until 30d"
  add philly-overload "$cli run -q --trace-root $traces scenarios/traces/philly.yaml --until 25d --set workloadtrace/philly:spec.philly.nodePercent=15"
fi
add placement-volcano "$driver volcano 200"
add placement-kai "$driver kai 50"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One case under callgrind; its count lands in $work/NAME.count. The environment is emptied
# (env -i) so that its size and the locale cannot move the count (mimalloc and the C library
# read variables at start-up); paths are relative to the checkout, so its location does not
# either. The placement driver's count is only what runs inside its `measured` function.
measure() { # index
  local name=${names[$1]} cmd=${commands[$1]} extra=()
  case "$name" in placement-*) extra=(--collect-atstart=no "--toggle-collect=*::measured") ;; esac
  # shellcheck disable=SC2086 # the command is split into words on purpose
  if ! env -i "$(command -v valgrind)" -q --tool=callgrind "${extra[@]}" \
    --callgrind-out-file="$work/$name.out" $cmd >"$work/$name.stdout" 2>"$work/$name.stderr"; then
    echo "instructions: $name failed: $cmd" >&2
    cat "$work/$name.stderr" >&2
    return 1
  fi
  # callgrind's `totals:` line: the instructions executed (Ir) while collection was on.
  awk '/^totals:/ { print $2 }' "$work/$name.out" >"$work/$name.count"
}

# Two cases at a time: the counts do not depend on the load, and CI machines have 2 cores.
start=$SECONDS
pids=()
for i in "${!names[@]}"; do
  if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}" || exit 1; pids=("${pids[@]:1}"); fi
  measure "$i" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || exit 1; done
elapsed=$((SECONDS - start))

expected() { # name → the stored count, or nothing
  awk -F' *= *' -v n="$1" '$1 == n { gsub(/_/, "", $2); print $2 }' "$file" 2>/dev/null || true
}

if [ $update = 1 ]; then
  {
    echo "# Instructions executed (callgrind's Ir) per case of scripts/instructions.sh, which fails"
    echo "# when a case runs more than $tolerance% above its figure here. Regenerate after a change"
    echo "# that moves them on purpose: scripts/instructions.sh --update (docs/performance.md)."
    echo "# $(rustc --version), $(valgrind --version)."
    for i in "${!names[@]}"; do
      echo "${names[$i]} = $(cat "$work/${names[$i]}.count")"
    done
    if [ $have_traces = 0 ]; then
      # Keep the stored trace figures when this machine has no traces.
      for n in philly philly-overload; do
        e=$(expected "$n")
        [ -z "$e" ] || echo "$n = $e"
      done
    fi
  } >"$file.new"
  mv "$file.new" "$file"
  echo "instructions: wrote $file (${elapsed}s under callgrind)"
  cat "$file"
  exit 0
fi

fail=0
printf '%-24s %15s %15s %8s\n' case expected measured change
for name in "${names[@]}"; do
  got=$(cat "$work/$name.count")
  want=$(expected "$name")
  if [ -z "$want" ]; then
    printf '%-24s %15s %15s %8s  no figure in %s: scripts/instructions.sh --update\n' \
      "$name" - "$got" - "$file"
    fail=1
    continue
  fi
  # Per mille, in integers: bash has no floating point.
  change=$(((got - want) * 1000 / want))
  note=""
  if [ $((got * 100)) -gt $((want * (100 + tolerance))) ]; then
    note="  FAIL: more than $tolerance% above the stored count"
    fail=1
  elif [ $((got * 100)) -lt $((want * (100 - tolerance))) ]; then
    note="  faster by more than $tolerance%: store it with scripts/instructions.sh --update"
  fi
  printf '%-24s %15s %15s %+7d‰%s\n' "$name" "$want" "$got" "$change" "$note"
done
[ $have_traces = 1 ] || echo "(the Philly cases skipped: no trace root at $traces)"
echo "instructions: ${elapsed}s under callgrind"
exit $fail
