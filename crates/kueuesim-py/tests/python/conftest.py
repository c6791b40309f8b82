"""Shared fixtures: the repository root, the CLI binary (KUEUESIM_BIN, which the cargo test
that runs this suite sets), and the CLI's own -o json for a scenario."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[4]
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
PHILLY_TRACE = "philly-pollux/philly.csv"


def trace_root():
    """The trace root holding Philly (docs/traces.md): KUEUESIM_TRACE_ROOT, else the default;
    the test skips without it, or fails when KUEUESIM_REQUIRE_TRACES is set (CI)."""
    for root in [os.environ.get("KUEUESIM_TRACE_ROOT"), ROOT.parent / "shared" / "traces"]:
        if root and (pathlib.Path(root) / PHILLY_TRACE).is_file():
            return str(root)
    if os.environ.get("KUEUESIM_REQUIRE_TRACES"):
        pytest.fail(f"{PHILLY_TRACE} not found under the trace root and KUEUESIM_REQUIRE_TRACES is set")
    pytest.skip(f"{PHILLY_TRACE} not found under the trace root")


def pytest_configure(config):
    # The platform scenario's deliberate load warnings would fill the report of every test
    # that runs it; test_warnings.py checks them under its own filters.
    config.addinivalue_line("filterwarnings", "ignore::kueuesim.LoadWarning")


@pytest.fixture(scope="session")
def cli():
    binary = os.environ.get("KUEUESIM_BIN")
    if not binary:
        pytest.skip("KUEUESIM_BIN not set (scripts/python-test.sh sets it)")

    def run(*args):
        out = subprocess.run([binary, *map(str, args)], capture_output=True, text=True)
        return out

    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    def run(*args):
        out = cli("run", "--quiet", *args, "-o", "json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    return run
