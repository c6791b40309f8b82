"""kueuesim.run against the CLI's -o json, field by field; tables; errors; load."""

import math

import pandas as pd
import pytest

import kueuesim
from conftest import FIXTURES, ROOT, trace_root

SCENARIOS = [
    (["scenarios/golden/fifo-strategies"], {}),
    (["scenarios/platform"], {"until": "6h"}),
    (["scenarios/platform"], {"seed": 7, "until": "12h"}),
]


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def seconds_after(instant, start):
    """A table's instant as the JSON's seconds after the start (NaT: None)."""
    return None if pd.isna(instant) else (instant - start).total_seconds()


def seconds(duration):
    """A table's duration as the JSON's seconds (NaT: None)."""
    return None if pd.isna(duration) else duration.total_seconds()


@pytest.mark.parametrize("paths,kw", SCENARIOS)
def test_summary_and_workloads_equal_the_cli(cli_json, paths, kw):
    paths = [ROOT / p for p in paths]
    args = [*paths]
    if "until" in kw:
        args += ["--until", kw["until"]]
    if "seed" in kw:
        args += ["--seed", kw["seed"]]
    doc = cli_json(*args)
    r = kueuesim.run(paths, **kw)
    assert r.summary.keys() == doc["summary"].keys()
    for key, value in doc["summary"].items():
        assert r.summary[key] == value, key
    w = r.workloads
    start = pd.Timestamp(doc["summary"]["startTime"])
    assert r.start_time == start and str(r.start_time.tz) == "UTC"
    assert len(w) == len(doc["workloads"])
    for row, entry in zip(w.itertuples(index=False), doc["workloads"]):
        row = row._asdict()
        for field in ["namespace", "name", "kind", "priority", "schedulerName", "state",
                      "gpuSeconds", "lostGpuSeconds", "requeueCount", "heldNotRunningGpuSeconds"]:
            assert row[field] == entry[field], (entry["name"], field)
        # Instants: the start plus the JSON's seconds; durations: the JSON's seconds.
        for field in ["createdAt", "admittedAt", "runningAt", "finishedAt"]:
            assert seconds_after(row[field], start) == entry.get(field), (entry["name"], field)
        assert seconds(row["timeInQueue"]) == entry["timeInQueueSeconds"], entry["name"]
        admitted = entry.get("admittedAt")
        # Whole milliseconds: the JSON's two times subtracted as floats can be off in the
        # last digit (a varied day's times have millisecond fractions).
        assert seconds(row["wait"]) == (None if admitted is None else round(admitted - entry["createdAt"], 3))
        assert row["localQueue"] == (entry.get("localQueue") or "")
        assert row["clusterQueue"] == (entry.get("clusterQueue") or "")
        assert row["evictions"] == len(entry.get("evictions", []))
        nodes = [p["node"] for ps in entry["podSets"] for p in ps["pods"]]
        mine = r.pods[(r.pods.namespace == entry["namespace"]) & (r.pods.workload == entry["name"])]
        assert [n if isinstance(n, str) else None for n in mine.node] == nodes
    events = sorted(ev["at"] for e in doc["workloads"] for ev in e.get("events", []))
    assert [seconds_after(t, start) for t in r.events["at"]] == events


@pytest.mark.parametrize("path,until", [("scenarios/platform", "6h"), ("scenarios/traces/philly.yaml", "3d")])
def test_a_summary_only_run_has_the_same_summary(path, until):
    # tables=False runs as `kueuesim run` does for a summary: streamed (the trace) and lean.
    kw = {"trace_root": trace_root()} if "traces" in path else {}
    full = kueuesim.run(ROOT / path, until=until, **kw)
    lean = kueuesim.run(ROOT / path, until=until, tables=False, **kw)
    assert full.summary["workloads"]["total"] > 0
    assert lean.summary == full.summary
    assert lean.queues.equals(full.queues)
    assert lean.frames_seconds == 0
    with pytest.raises(ValueError, match="summary only"):
        lean.workloads


def test_tables_have_the_files_columns():
    r = kueuesim.run(ROOT / "scenarios/platform", until="2h", sample="30m")
    # The tables are built on first access: reading the summary costs nothing more.
    assert r.summary["endTime"] == 7200 and r.frames_seconds == 0
    assert r.workloads.columns[0] == "namespace" and "wait" in r.workloads.columns
    assert str(r.workloads.priority.dtype) == "int64"
    start = pd.Timestamp("2026-03-02T00:00:00Z")
    assert list(r.timeseries.time) == [start + pd.Timedelta(minutes=m) for m in (0, 30, 60, 90, 120)]
    assert "gpuQuota:cq=ml-team" in r.timeseries.columns
    assert set(r.queues.scope) == {"ClusterQueue", "LocalQueue"}
    assert r.wall_seconds > 0 and r.frames_seconds > 0


def test_the_embedded_scenario_runs_without_paths():
    r = kueuesim.run(until="1h")
    assert r.summary["endTime"] == 3600


def test_bad_input_is_an_input_error_with_its_place(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: x\nspec:\n  queueingStrategy: Sideways\n")
    with pytest.raises(kueuesim.InputError) as e:
        kueuesim.run(bad)
    assert e.value.file == str(bad)
    assert e.value.line == 6
    assert e.value.column > 1
    assert f"{bad}:6:" in str(e.value)
    with pytest.raises(ValueError):
        kueuesim.run(ROOT / "scenarios/platform", until="soon")


def test_load_lists_the_objects():
    s = kueuesim.load(ROOT / "scenarios/platform")
    assert len(s.nodes) == 32 and s.nodes.gpus.sum() == 256
    assert set(s.cluster_queues.name) >= {"ml-team"}
    assert len(s.workloads) > 0 and s.policies == {"queueOrder": None, "nodeScore": None}
    p = kueuesim.load(FIXTURES / "sjf")
    assert p.policies["queueOrder"] == "order"


def test_sets_and_seeds_change_the_run_as_the_cli_does(cli_json):
    s = "clusterqueue/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota=16"
    doc = cli_json(ROOT / "scenarios/platform", "--until", "6h", "--set", s)
    r = kueuesim.run(ROOT / "scenarios/platform", until="6h", sets=[s])
    assert r.summary == doc["summary"]


def test_sweep_runs_the_grid():
    s = "clusterqueue/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota"
    df = kueuesim.sweep(ROOT / "scenarios/platform", {s: [64, 128]}, seeds=[1, 2], until="6h",
                        figures=["workloads.total", "gpu.utilization"])
    assert len(df) == 4 and list(df[s]) == [64, 64, 128, 128] and list(df.seed) == [1, 2, 1, 2]
    assert df["workloads.total"].notna().all()


def test_the_installed_wheel_declares_what_a_fresh_machine_needs():
    # `pip install kueuesim-*.whl` on a machine without numpy or pandas pulls them from
    # these requirements; the version is the workspace's.
    import importlib.metadata
    import re

    requires = importlib.metadata.requires("kueuesim")
    names = {re.split(r"[ ;<>=!~]", r)[0]: r for r in requires}
    assert "extra" not in names["numpy"] and "extra" not in names["pandas"]
    assert "extra == 'polars'" in names["polars"]
    assert "extra == 'examples'" in names["matplotlib"]
    cargo = (ROOT / "Cargo.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)
    assert importlib.metadata.version("kueuesim") == version
