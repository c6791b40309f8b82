#!/usr/bin/env bash
# The Python module's test suite (docs/python.md): creates target/py-venv with the pinned
# tools of crates/kueuesim-py/requirements-dev.txt (again only when that file changes), builds
# the wheel with maturin (KUEUESIM_PY_PROFILE, default dev; python, the release build that unwinds, for measurements),
# installs it, and runs pytest against the CLI (KUEUESIM_BIN, else a debug build).
# `cargo test --workspace` runs this through crates/kueuesim-py/tests/it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target=${CARGO_TARGET_DIR:-$root/target}
venv=$target/py-venv
req=crates/kueuesim-py/requirements-dev.txt
python=${PYTHON:-python3}
if ! cmp -s "$req" "$venv/.requirements" 2>/dev/null; then
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
    || { echo "python-test: $python is older than 3.10" >&2; exit 1; }
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  cp "$req" "$venv/.requirements"
fi
profile=${KUEUESIM_PY_PROFILE:-dev}
wheels=$target/py-wheels
rm -rf "$wheels"
(cd crates/kueuesim-py && "$venv/bin/maturin" build --quiet --profile "$profile" --out "$wheels")
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/kueuesim-*.whl
if [ -z "${KUEUESIM_BIN:-}" ]; then
  cargo build --quiet -p kueuesim-cli
  export KUEUESIM_BIN=$target/debug/kueuesim
fi
cd crates/kueuesim-py/tests/python
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
