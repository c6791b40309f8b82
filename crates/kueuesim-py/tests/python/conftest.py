"""Shared fixtures: the repository root, the CLI binary (KUEUESIM_BIN, which the cargo test
that runs this suite sets), and the CLI's own -o json for a scenario."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[4]
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"


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
