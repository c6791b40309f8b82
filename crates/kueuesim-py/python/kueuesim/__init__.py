"""kueuesim from Python: run scenarios, read the results as DataFrames, and replace two of the
built-in scheduling policies by Python callables (docs/python.md).

    >>> import kueuesim
    >>> r = kueuesim.run([], until="6h")            # the embedded platform day, to 6h
    >>> r.summary["workloads"]["total"]
    >>> r.workloads.groupby("clusterQueue").wait.describe()   # Timedeltas
"""

from __future__ import annotations

import datetime
import itertools
import math
import os
import re
import sys
import warnings
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from . import _kueuesim
from ._kueuesim import InputError, NodeScoreRequest, OrderRequest, PolicyError

__version__: str = _kueuesim.__version__
__all__ = [
    "LoadWarning",
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


class LoadWarning(UserWarning):
    """A warning of the scenario's load: what ``kueuesim run`` prints as ``warning:`` lines
    (an object of a kind the simulator does not read, a LocalQueue no object defines, …).
    ``run`` and ``load`` issue each through :mod:`warnings`, so they show by default and the
    standard filters apply: ``warnings.simplefilter("ignore", kueuesim.LoadWarning)``
    silences them, ``"error"`` makes them raise before the run starts. ``Result.warnings``
    and ``Scenario.warnings`` keep the list either way."""


def _warn(messages: Sequence[str]) -> None:
    """Issues each of the load's warnings as a :class:`LoadWarning`, attributed to the first
    caller outside this package (the user's ``run``, ``load`` or ``sweep`` line), so that
    the default filter shows each once per line of the caller's code."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == __name__:
        frame = frame.f_back
        level += 1
    for message in messages:
        warnings.warn(message, LoadWarning, stacklevel=level)


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _instant(unix_ms: int):
    """An instant as a ``pandas.Timestamp`` in UTC (a ``datetime.datetime`` in UTC when
    pandas is not installed)."""
    try:
        import pandas as pd
    except ImportError:
        return _EPOCH + datetime.timedelta(milliseconds=unix_ms)
    return pd.Timestamp(unix_ms, unit="ms", tz="UTC")


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
        if not math.isfinite(d):
            raise ValueError(f"{what}: {d!r}: expected a finite number of seconds")
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


def _max_events(n: Any) -> int | None:
    """The event budget, checked here so that a bool, a float or a negative number gets a
    clear message (the extension takes an unsigned 64-bit count)."""
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"max_events: expected a positive int, got {type(n).__name__} {n!r}")
    if not 0 < n < 2**64:
        raise ValueError(f"max_events: {n}: expected a positive number of events")
    return n


def _max_wall(d: Any) -> str | None:
    """The wall-time budget as the extension reads it: a duration ("30s", "10m", "1h") or a
    number of seconds; zero, negative, NaN and infinite are refused."""
    if d is None:
        return None
    if isinstance(d, bool) or not isinstance(d, (str, int, float)):
        raise TypeError(f"max_wall: expected a duration (30s, 10m) or seconds, got {type(d).__name__} {d!r}")
    if isinstance(d, (int, float)):
        if not (math.isfinite(d) and d > 0):
            raise ValueError(f"max_wall: {d!r}: expected a positive duration (30s, 10m) or seconds")
        # At least a millisecond: the extension counts wall time in milliseconds.
        return f"{max(1, int(round(d * 1000)))}ms"
    return _duration(d, "max_wall")


def _frame(columns: list, backend: str = "pandas"):
    """Typed columns from the extension as a DataFrame (numbers read in place by numpy).
    Instants (``M8[ns]``, nanoseconds since the Unix epoch) become UTC datetimes, durations
    (``m8[ns]``) timedeltas; numpy's NaT is pandas' ``NaT`` and polars' null."""
    data = {}
    instants = []
    for name, kind, payload in columns:
        if kind == "str":
            data[name] = payload
        else:
            data[name] = np.frombuffer(payload, dtype=np.dtype(kind))
            if kind == "M8[ns]":
                instants.append(name)
    if backend == "polars":
        import polars as pl

        df = pl.DataFrame(data)
        if instants:
            df = df.with_columns(pl.col(instants).dt.replace_time_zone("UTC"))
        return df
    import pandas as pd

    for name in instants:
        data[name] = pd.array(data[name]).tz_localize("UTC")
    return pd.DataFrame(data, columns=[c[0] for c in columns])


#: A distribution of the summary in seconds, flattened (``waitSecondsAdmitted.p95``): its name
#: without the unit, and the statistic.
_SECONDS_STAT = re.compile(r"^(?P<name>\w+?)Seconds(?P<rest>\w*)\.(?P<stat>count|mean|max|min|p\d+)$")


def _queue_times(df):
    """The queues table's distributions of seconds (``waitSecondsAdmitted.p95``,
    ``jctSecondsFinished.mean``) as timedeltas named without the unit (``waitAdmitted.p95``,
    ``jctFinished.mean``); their ``count`` stays
    a number. Other figures (GPU-seconds and -hours, shares, slowdowns) are not times."""
    import pandas as pd

    renames = {}
    for column in df.columns:
        m = _SECONDS_STAT.match(column)
        if m is None or m["name"].lower().endswith("gpu"):
            continue
        renames[column] = f"{m['name']}{m['rest']}.{m['stat']}"
        if m["stat"] != "count":
            df[column] = pd.to_timedelta(df[column].astype("float64"), unit="s")
    return df.rename(columns=renames)


class Result:
    """The outcome of one run.

    ``summary`` is the ``summary`` of ``kueuesim run -o json`` as a dict, its times in
    seconds as in the JSON. ``workloads``, ``queues``, ``events`` and ``timeseries`` are
    pandas DataFrames with the columns of ``run --out``'s ``workloads.csv``, ``queues.csv``,
    ``events.jsonl`` and ``timeseries.csv``, their times as pandas types: instants
    (``createdAt``, ``at``) as ``datetime64[ns, UTC]``, durations (``wait``,
    ``timeInQueue``, ``wait.p95``) as ``timedelta64[ns]``, ``NaT`` where there is none;
    ``polars()`` gives the same tables as polars DataFrames.
    """

    def __init__(self, raw: dict):
        self._raw = raw
        self.summary: dict = raw["summary"]
        self.warnings: list[str] = raw["warnings"]
        #: Calls made to Python policies.
        self.hook_calls: int = raw["hook_calls"]
        #: Wall seconds of the simulation alone.
        self.wall_seconds: float = raw["wall_seconds"]
        #: Why the run stopped before its end, as ``summary["stoppedEarly"]``: a dict with
        #: ``reason`` (``MaxEvents``, ``MaxWallTime``, ``Livelock``) and ``message``; None when
        #: it ran to its end. A stopped run's figures describe the run up to ``endTime``.
        self.stopped_early: dict | None = self.summary.get("stoppedEarly")
        self._start_unix_ms: int = raw["start_unix_ms"]
        self._tables = raw["tables"]
        self._columns: dict = {}
        self._cache: dict = {}

    @property
    def start_time(self):
        """The instant of simulated time 0 (``summary["startTime"]``) as a
        ``pandas.Timestamp`` in UTC: the tables' instants are it plus the JSON's seconds."""
        return _instant(self._start_unix_ms)

    @property
    def end_time(self):
        """The instant the run's figures describe (``summary["endTime"]`` seconds after
        ``start_time``), as a ``pandas.Timestamp`` in UTC."""
        return _instant(self._start_unix_ms + round(self.summary["endTime"] * 1000))

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
        df = _queue_times(pd.json_normalize(rows))
        if backend == "polars":
            import polars as pl

            return pl.from_pandas(df)
        return df

    @property
    def workloads(self):
        """One row per workload (``workloads.csv``): ``createdAt``, ``admittedAt``,
        ``runningAt``, ``finishedAt`` as UTC datetimes, ``wait`` and ``timeInQueue`` (the
        CSV's ``waitSeconds``, ``timeInQueueSeconds``) as timedeltas."""
        return self._get("workloads")

    @property
    def queues(self):
        """One row per ClusterQueue, then per LocalQueue (``summary.clusterQueues`` flattened),
        the distributions of seconds as timedeltas named without the unit (``wait.p95``)."""
        return self._get("queues")

    @property
    def pods(self):
        """One row per pod: its workload, pod set, name, node (None: pending) and bind time
        (``boundAt``, a UTC datetime; NaT: pending)."""
        return self._get("pods")

    @property
    def events(self):
        """Every recorded event, in time order (``events.jsonl``); ``at`` a UTC datetime."""
        return self._get("events")

    @property
    def timeseries(self):
        """The sampled state (``timeseries.csv``): one row per ``sample`` step, at ``time``
        (a UTC datetime)."""
        return self._get("timeseries")

    def polars(self) -> dict:
        """The four tables as polars DataFrames (needs polars installed)."""
        return {k: self._get(k, "polars") for k in ("workloads", "queues", "pods", "events", "timeseries")}

    def __repr__(self) -> str:
        w = self.summary.get("workloads", {})
        stopped = f", stopped early: {self.stopped_early['reason']}" if self.stopped_early else ""
        return f"<kueuesim.Result {w.get('total')} workloads, end {self.summary.get('endTime')}s{stopped}>"


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
    max_events: int | None = None,
    max_wall: "str | float | None" = None,
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

    The load's warnings (``kueuesim run``'s ``warning:`` lines) are issued as
    :class:`LoadWarning` through :mod:`warnings` once the scenario is loaded, before it runs,
    and kept in :attr:`Result.warnings`.

    ``max_events`` and ``max_wall`` are the budgets of ``kueuesim run --max-events`` and
    ``--max-wall``: the run stops after that many events, or that much wall time ("30s",
    "10m", or seconds; checked every 4,096 events), and returns its result up to then with
    :attr:`Result.stopped_early` set (the command exits 3 there); nothing is raised.

    The GIL is released while the scenario loads and runs (the policies take it back for
    each call), so other Python threads run meanwhile; on the main thread Python's signal
    handlers run every 4,096 events (at most every tenth of a second), so Ctrl-C raises
    ``KeyboardInterrupt``.

    Raises :class:`InputError` (with ``file``, ``line``, ``column``) for bad input and
    :class:`PolicyError` (the policy's own exception as ``__cause__``) when a policy raises an
    ``Exception`` or returns a decision the engine cannot use; a ``KeyboardInterrupt``,
    ``SystemExit`` or other ``BaseException`` raised in a policy propagates as itself.
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
        max_events=_max_events(max_events),
        max_wall=_max_wall(max_wall),
        on_warnings=_warn,
    )
    return Result(raw)


class Scenario:
    """A loaded scenario (``kueuesim.load``): its objects as DataFrames, before any run.
    ``workloads.createdAt`` is a UTC datetime and ``workloads.duration`` a timedelta (NaT:
    none given); ``until`` is the horizon as a ``pandas.Timedelta`` after ``start_time``
    (None: none)."""

    def __init__(self, raw: dict):
        import pandas as pd

        self._raw = raw
        self.nodes = _frame(raw["nodes"])
        self.cluster_queues = _frame(raw["cluster_queues"])
        self.local_queues = _frame(raw["local_queues"])
        self.workloads = _frame(raw["workloads"])
        self.flavors: list[str] = raw["flavors"]
        self.seed: int = raw["seed"]
        #: The instant of simulated time 0, a ``pandas.Timestamp`` in UTC.
        self.start_time = _instant(raw["start_unix_ms"])
        self.until = None if raw["until"] is None else pd.Timedelta(round(raw["until"] * 1000), unit="ms")
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
    """Loads a scenario as ``kueuesim validate`` does and returns its objects; its warnings
    are issued as :class:`LoadWarning` (and kept in ``Scenario.warnings``)."""
    raw = _kueuesim.load_scenario(
        _paths(paths),
        seed=seed,
        until=_duration(until, "until"),
        patches=_paths(list(patches)),
        sets=list(sets),
        trace_root=os.fspath(trace_root) if trace_root is not None else None,
        strict=strict,
    )
    _warn(raw["warnings"])
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
    ``waitSecondsInclPending.p95``, …, numbers as in the summary and ``sweep.csv``; ``figures``
    keeps only those named).
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
