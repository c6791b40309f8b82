"""Times in the DataFrames as pandas types: instants as datetime64[ns, UTC] (the scenario's
start plus the JSON's seconds), durations as timedelta64[ns], NaT where there is none; the
summary keeps the JSON's seconds."""

import json
import subprocess
import sys

import pandas as pd
import pytest

import kueuesim
from conftest import FIXTURES, ROOT

PLATFORM = ROOT / "scenarios/platform"
START = pd.Timestamp("2026-03-02T00:00:00Z")
UTC_NS = "datetime64[ns, UTC]"
SPAN_NS = "timedelta64[ns]"


@pytest.fixture(scope="module")
def day():
    return kueuesim.run(PLATFORM, until="6h", sample="1h")


def test_every_time_column_is_a_pandas_time(day):
    w = day.workloads
    for c in ["createdAt", "admittedAt", "runningAt", "finishedAt"]:
        assert str(w[c].dtype) == UTC_NS, c
    for c in ["wait", "timeInQueue"]:
        assert str(w[c].dtype) == SPAN_NS, c
    # A clean break: the float-seconds columns are gone (their names fail loudly rather
    # than a Timedelta being divided by 3600 in old code); GPU-seconds are no times.
    assert "waitSeconds" not in w.columns and "timeInQueueSeconds" not in w.columns
    assert str(w.gpuSeconds.dtype) == "float64" and str(w.heldNotRunningGpuSeconds.dtype) == "float64"
    assert str(day.pods.boundAt.dtype) == UTC_NS
    assert str(day.events["at"].dtype) == UTC_NS
    assert str(day.timeseries.time.dtype) == UTC_NS
    assert day.timeseries.time.iloc[-1] == START + pd.Timedelta(hours=6)


def test_instants_are_the_start_plus_the_offsets_and_nulls_are_nat(day):
    w = day.workloads
    assert day.start_time == START and day.end_time == START + pd.Timedelta(hours=6)
    assert w.createdAt.min() >= START and w.createdAt.max() <= day.end_time
    pending = w[w.state == "Pending"]
    assert len(pending) > 0
    assert pending.admittedAt.isna().all() and pending.wait.isna().all() and pending.finishedAt.isna().all()
    admitted = w[w.admittedAt.notna()]
    assert (admitted.wait == admitted.admittedAt - admitted.createdAt).all()
    assert (admitted.wait >= pd.Timedelta(0)).all()
    # A pod binds at or after its workload's admission (the sandbox's notebook bypasses
    # Kueue: no admission); an unplaced one has NaT.
    pods = day.pods.merge(w[["namespace", "name", "admittedAt"]], left_on=["namespace", "workload"],
                          right_on=["namespace", "name"])
    placed = pods[pods.node.notna() & pods.admittedAt.notna()]
    assert len(placed) > 0 and (placed.boundAt >= placed.admittedAt).all()
    assert pods[pods.node.notna()].boundAt.notna().all()
    assert pods[pods.node.isna()].boundAt.isna().all()
    # Durations compose with instants: a finished workload's JCT.
    done = w[w.state == "Finished"]
    assert ((done.finishedAt - done.createdAt) > pd.Timedelta(0)).all()


def test_the_start_comes_from_the_scenario():
    moved = kueuesim.run(PLATFORM, until="1h", sets=["simulation/platform-day:spec.startTime=2030-01-01T06:00:00Z"])
    base = kueuesim.run(PLATFORM, until="1h")
    assert moved.start_time == pd.Timestamp("2030-01-01T06:00:00Z")
    shift = moved.start_time - base.start_time
    assert (moved.workloads.createdAt - base.workloads.createdAt == shift).all()
    assert moved.timeseries.time.iloc[0] == moved.start_time
    # The run itself does not depend on the calendar.
    assert (moved.workloads.wait.fillna(pd.Timedelta(-1)) == base.workloads.wait.fillna(pd.Timedelta(-1))).all()


def test_the_queues_table_has_timedeltas_and_the_summary_keeps_seconds(day):
    q = day.queues
    for stat in ["mean", "p50", "p95", "max"]:
        for name in ["waitAdmitted", "waitInclPending", "timeInQueueAdmitted", "jctFinished"]:
            assert str(q[f"{name}.{stat}"].dtype) == SPAN_NS, f"{name}.{stat}"
    assert str(q["waitAdmitted.count"].dtype) == "int64"
    assert not any("Seconds." in c for c in q.columns), list(q.columns)
    assert str(q["boundedSlowdownFinished.p95"].dtype) == "float64"
    ml = q[(q.scope == "ClusterQueue") & (q.clusterQueue == "ml-team")].iloc[0]
    summary = next(c for c in day.summary["clusterQueues"] if c["name"] == "ml-team")
    # The summary is the JSON's: numbers of seconds.
    p95 = summary["waitSecondsAdmitted"]["p95"]
    assert isinstance(p95, (int, float)) and p95 > 0
    assert ml["waitAdmitted.p95"] == pd.Timedelta(seconds=p95)
    assert isinstance(day.summary["endTime"], (int, float))


def test_load_gives_times_too():
    s = kueuesim.load(PLATFORM)
    assert str(s.workloads.createdAt.dtype) == UTC_NS
    assert str(s.workloads.duration.dtype) == SPAN_NS
    assert s.start_time == START and s.until == pd.Timedelta(hours=24)
    assert s.workloads.createdAt.min() >= START
    assert (s.workloads.duration.dropna() > pd.Timedelta(0)).all()


def test_tables_are_the_same_at_every_run():
    a = kueuesim.run(FIXTURES / "sjf", policies={"order": lambda w: w.duration})
    b = kueuesim.run(FIXTURES / "sjf", policies={"order": lambda w: w.duration})
    for t in ["workloads", "pods", "events", "timeseries", "queues"]:
        assert getattr(a, t).equals(getattr(b, t)), t


def test_polars_tables_have_time_types_too():
    pl = pytest.importorskip("polars")
    pytest.importorskip("pyarrow")  # polars reads the queues table's list columns through it
    t = kueuesim.run(PLATFORM, until="2h").polars()
    assert t["workloads"].schema["createdAt"] == pl.Datetime("ns", "UTC")
    assert t["workloads"].schema["wait"] == pl.Duration("ns")
    assert t["events"].schema["at"] == pl.Datetime("ns", "UTC")


def test_without_pandas_a_run_and_its_warnings_still_work():
    # pandas is a dependency of the wheel, but the module imports it only for the tables:
    # a summary-only run needs numpy alone, as before.
    code = (
        "import sys, warnings, json\n"
        "sys.modules['pandas'] = None\n"
        "import kueuesim\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    r = kueuesim.run(until='1h', tables=False)\n"
        "print(json.dumps({'start': r.start_time.isoformat(), 'end': r.end_time.isoformat(),\n"
        "  'warned': [type(w.message).__name__ for w in seen], 'total': r.summary['workloads']['total']}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["start"] == "2026-03-02T00:00:00+00:00" and got["end"] == "2026-03-02T01:00:00+00:00"
    assert got["warned"] == ["LoadWarning"] and got["total"] > 0
