"""The worked example of docs/python.md runs (on Philly's first days, the trace from the trace
root) and shows the three policies apart."""

import os
import pathlib
import runpy
import sys

import pytest

from conftest import ROOT

EXAMPLE = ROOT / "docs" / "examples" / "philly_policies.py"
TRACE = "philly-pollux/philly.csv"


def trace_root():
    for root in [os.environ.get("KUEUESIM_TRACE_ROOT"), ROOT.parent / "shared" / "traces"]:
        if root and (pathlib.Path(root) / TRACE).is_file():
            return str(root)
    if os.environ.get("KUEUESIM_REQUIRE_TRACES"):
        pytest.fail(f"{TRACE} not found under the trace root and KUEUESIM_REQUIRE_TRACES is set")
    pytest.skip(f"{TRACE} not found under the trace root")


def test_the_worked_example_runs(tmp_path, capsys, monkeypatch):
    root = trace_root()
    out = tmp_path / "cdf.png"
    monkeypatch.setattr(sys, "argv", [str(EXAMPLE), "--until", "30d", "--out", str(out), "--trace-root", root])
    with pytest.raises(SystemExit) as e:
        runpy.run_path(str(EXAMPLE), run_name="__main__")
    assert e.value.code == 0
    text = capsys.readouterr().out
    lines = {l.split("  ")[0].strip(): l for l in text.splitlines() if "JCT p50" in l}
    assert set(lines) == {"Kueue BestEffortFIFO", "SJF (Python)", "LAS (Python)"}
    # SJF never lengthens the median completion time against FIFO. (The first 30 days of
    # Philly at full capacity queue little: both medians print as 0.08 h.)
    p50 = {k: float(v.split("JCT p50")[1].split("h")[0]) for k, v in lines.items()}
    assert p50["SJF (Python)"] <= p50["Kueue BestEffortFIFO"]
