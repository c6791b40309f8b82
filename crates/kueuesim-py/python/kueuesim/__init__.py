"""kueuesim from Python: run scenarios, read the results as DataFrames, and replace two of the
built-in scheduling policies by Python callables (docs/python.md).

    >>> import kueuesim
    >>> r = kueuesim.run([], until="6h")            # the embedded platform day, to 6h
    >>> r.summary["workloads"]["total"]
    >>> r.workloads.groupby("clusterQueue").waitSeconds.describe()
"""

from __future__ import annotations

import itertools
import os
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from . import _kueuesim
from ._kueuesim import InputError, NodeScoreRequest, OrderRequest, PolicyError

__version__: str = _kueuesim.__version__
__all__ = [
    "run",
    "load",
    "sweep",
    "Result",
    "Scenario",
    "InputError",
    "PolicyError",
    "OrderRequest",
    "NodeScoreRequest",
]

PathLike = "str | os.PathLike[str]"


def _paths(paths: Any) -> list[str]:
    if paths is None:
        return []
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def _duration(d: Any, what: str) -> str | None:
    """A duration as the engine reads it: "6h", "90m", "1d12h", or seconds as a number."""
    if d is None:
        return None
    if isinstance(d, (int, float)):
        return f"{int(round(d * 1000))}ms"
    text = str(d).strip()
    if "d" in text:
        days, _, rest = text.partition("d")
        try:
            hours = float(days) * 24
        except ValueError:
            raise ValueError(f"{what}: invalid duration {text!r}: expected 90m, 6h or 1d12h") from None
        return f"{hours}h{rest}" if rest else f"{hours}h"
    return text


def _frame(columns: list, backend: str = "pandas"):
    """Typed columns from the extension as a DataFrame (numbers read in place by numpy)."""
    data = {}
    for name, kind, payload in columns:
        if kind == "str":
            data[name] = payload
        else:
            data[name] = np.frombuffer(payload, dtype=np.dtype(kind))
    if backend == "polars":
        import polars as pl

        return pl.DataFrame(data)
    import pandas as pd

    return pd.DataFrame(data, columns=[c[0] for c in columns])


class Result:
    """The outcome of one run.

    ``summary`` is the ``summary`` of ``kueuesim run -o json`` as a dict. ``workloads``,
    ``queues``, ``events`` and ``timeseries`` are pandas DataFrames with the columns of
    ``run --out``'s ``workloads.csv``, ``queues.csv``, ``events.jsonl`` and
    ``timeseries.csv``; ``polars()`` gives the same tables as polars DataFrames.
    """

    def __init__(self, raw: dict):
        self._raw = raw
        self.summary: dict = raw["summary"]
        self.warnings: list[str] = raw["warnings"]
        #: Calls made to Python policies.
        self.hook_calls: int = raw["hook_calls"]
        #: Wall seconds of the simulation alone.
        self.wall_seconds: float = raw["wall_seconds"]
        self._tables = raw["tables"]
        self._columns: dict = {}
        self._cache: dict = {}

    @property
    def frames_seconds(self) -> float:
        """Wall seconds spent so far building the tables' columns: each table is built on its
        first access, so a caller who reads only the summary pays nothing for them."""
        return self._tables.build_seconds if self._tables is not None else 0.0

    def _get(self, key: str, backend: str = "pandas"):
        if (key, backend) not in self._cache:
            if key == "queues":
                self._cache[(key, backend)] = self._queues(backend)
            else:
                if key not in self._columns:
                    if self._tables is None:
                        raise ValueError(f"{key}: this run kept the summary only (run(..., tables=False))")
                    self._columns[key] = self._tables.table(key)
                self._cache[(key, backend)] = _frame(self._columns[key], backend)
        return self._cache[(key, backend)]

    def _queues(self, backend: str):
        import pandas as pd

        rows = []
        s = self.summary
        cohorts = {c["name"]: c.get("cohort") for c in s.get("clusterQueues", [])}
        for scope, key in (("ClusterQueue", "clusterQueues"), ("LocalQueue", "localQueues")):
            for q in s.get(key, []):
                row = {"scope": scope}
                if scope == "ClusterQueue":
                    row.update(namespace=None, clusterQueue=q["name"])
                else:
                    row["cohort"] = cohorts.get(q.get("clusterQueue"))
                row.update(q)
                rows.append(row)
        df = pd.json_normalize(rows)
        if backend == "polars":
            import polars as pl

            return pl.from_pandas(df)
        return df

    @property
    def workloads(self):
        """One row per workload (``workloads.csv``); times in seconds from the start."""
        return self._get("workloads")

    @property
    def queues(self):
        """One row per ClusterQueue, then per LocalQueue (``summary.clusterQueues`` flattened)."""
        return self._get("queues")

    @property
    def pods(self):
        """One row per pod: its workload, pod set, name, node (None: pending) and bind time."""
        return self._get("pods")

    @property
    def events(self):
        """Every recorded event, in time order (``events.jsonl``)."""
        return self._get("events")

    @property
    def timeseries(self):
        """The sampled state (``timeseries.csv``): one row per ``sample`` step."""
        return self._get("timeseries")

    def polars(self) -> dict:
        """The four tables as polars DataFrames (needs polars installed)."""
        return {k: self._get(k, "polars") for k in ("workloads", "queues", "pods", "events", "timeseries")}

    def __repr__(self) -> str:
        w = self.summary.get("workloads", {})
        return f"<kueuesim.Result {w.get('total')} workloads, end {self.summary.get('endTime')}s>"


def run(
    paths: "Sequence[str | os.PathLike[str]] | str | os.PathLike[str] | None" = None,
    *,
    seed: int | None = None,
    until: "str | float | None" = None,
    patches: Iterable = (),
    sets: Iterable[str] = (),
    policies: Mapping[str, Callable[..., Any]] | None = None,
    sample: "str | float" = "10m",
    trace_root: "str | os.PathLike[str] | None" = None,
    strict: bool = False,
    tables: bool = True,
) -> Result:
    """Runs a scenario as ``kueuesim run`` does and returns its :class:`Result`.

    ``paths``: files or directories (none: the embedded platform day). ``seed`` overrides
    ``spec.seed``; ``until`` is the horizon ("6h", "1d", or seconds). ``patches`` and ``sets``
    are ``--patch`` files and ``--set`` strings. ``policies`` binds the names the scenario's
    ``Simulation.spec.policies`` gives (``queueOrder``, ``nodeScore``) to callables: a
    queue-order policy takes an :class:`OrderRequest` and returns a number (lower first), a
    node-score policy takes a :class:`NodeScoreRequest` and returns one score per candidate
    (a sequence or numpy array) or a dict ``{node name: score}``. ``sample`` is the time
    series' step. ``tables=False`` keeps the summary only and runs as ``kueuesim run`` does
    for it: the workloads are streamed from the input and let go of as they finish (a
    million-workload trace in the memory of its live workloads); the tables then raise.

    Raises :class:`InputError` (with ``file``, ``line``, ``column``) for bad input and
    :class:`PolicyError` (the policy's own exception as ``__cause__``) when a policy raises or
    returns a decision the engine cannot use.
    """
    raw = _kueuesim.run(
        _paths(paths),
        seed=seed,
        until=_duration(until, "until"),
        patches=_paths(list(patches)),
        sets=list(sets),
        policies=dict(policies) if policies else None,
        sample=_duration(sample, "sample"),
        trace_root=os.fspath(trace_root) if trace_root is not None else None,
        strict=strict,
        tables=tables,
    )
    return Result(raw)


class Scenario:
    """A loaded scenario (``kueuesim.load``): its objects as DataFrames, before any run."""

    def __init__(self, raw: dict):
        self._raw = raw
        self.nodes = _frame(raw["nodes"])
        self.cluster_queues = _frame(raw["cluster_queues"])
        self.local_queues = _frame(raw["local_queues"])
        self.workloads = _frame(raw["workloads"])
        self.flavors: list[str] = raw["flavors"]
        self.seed: int = raw["seed"]
        self.until: float | None = raw["until"]
        #: The policy names of ``spec.policies`` (None: built in).
        self.policies: dict = raw["policies"]
        self.warnings: list[str] = raw["warnings"]

    def __repr__(self) -> str:
        return (
            f"<kueuesim.Scenario {len(self.nodes)} nodes, {len(self.cluster_queues)} ClusterQueues, "
            f"{len(self.workloads)} workloads>"
        )


def load(
    paths: "Sequence[str | os.PathLike[str]] | str | os.PathLike[str] | None" = None,
    *,
    seed: int | None = None,
    until: "str | float | None" = None,
    patches: Iterable = (),
    sets: Iterable[str] = (),
    trace_root: "str | os.PathLike[str] | None" = None,
    strict: bool = False,
) -> Scenario:
    """Loads a scenario as ``kueuesim validate`` does and returns its objects."""
    raw = _kueuesim.load_scenario(
        _paths(paths),
        seed=seed,
        until=_duration(until, "until"),
        patches=_paths(list(patches)),
        sets=list(sets),
        trace_root=os.fspath(trace_root) if trace_root is not None else None,
        strict=strict,
    )
    return Scenario(raw)


def _flatten(prefix: str, v: Any, out: dict) -> None:
    if isinstance(v, dict):
        for k, x in v.items():
            _flatten(f"{prefix}.{k}" if prefix else k, x, out)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        out[prefix] = v


def sweep(
    paths: Any = None,
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    seeds: Sequence[int] = (None,),  # type: ignore[assignment]
    until: "str | float | None" = None,
    patches: Iterable = (),
    policies: Mapping[str, Callable[..., Any]] | None = None,
    figures: Sequence[str] | None = None,
):
    """Runs every combination of ``grid`` (``--set`` targets ``KIND/NAME:PATH`` → values) for
    every seed, as ``kueuesim sweep`` runs a grid, and returns one row per run: the grid's
    values, the seed, and the summary's numeric figures flattened (``workloads.total``,
    ``waitSecondsInclPending.p95``, …; ``figures`` keeps only those named).
    """
    import pandas as pd

    grid = dict(grid or {})
    keys = list(grid)
    rows = []
    for values in itertools.product(*(grid[k] for k in keys)):
        sets = [f"{k}={_yaml_scalar(v)}" for k, v in zip(keys, values)]
        for seed in seeds:
            r = run(paths, seed=seed, until=until, patches=patches, sets=sets, policies=policies, tables=False)
            row: dict = dict(zip(keys, values))
            row["seed"] = seed
            flat: dict = {}
            _flatten("", {k: v for k, v in r.summary.items() if k not in ("clusterQueues", "localQueues")}, flat)
            if figures is not None:
                flat = {k: flat.get(k) for k in figures}
            row.update(flat)
            rows.append(row)
    return pd.DataFrame(rows)


def _yaml_scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
