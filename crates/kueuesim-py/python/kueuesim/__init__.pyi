"""Type hints of kueuesim (docs/python.md)."""

import os
from typing import Any, Callable, Iterable, Mapping, Sequence, Union

import numpy as np
import numpy.typing as npt
import pandas as pd

__version__: str

_Paths = Union[str, os.PathLike[str], Sequence[Union[str, os.PathLike[str]]], None]
_Duration = Union[str, float, None]

class LoadWarning(UserWarning):
    """A warning of the scenario's load, issued through :mod:`warnings` by ``run``, ``load``
    and ``sweep`` before the run; ``Result.warnings`` keeps the list."""

class InputError(ValueError):
    """Invalid input; ``file``, ``line`` and ``column`` say where (None: the input as a whole)."""

    file: str | None
    line: int | None
    column: int | None

class PolicyError(RuntimeError):
    """A Python policy raised an ``Exception`` (it is ``__cause__``) or returned a decision
    the engine cannot use (an unknown node, a node that cannot take the pod, a bad score)."""

class OrderRequest:
    """A workload entering its ClusterQueue's queue (arrival or requeue), for a queue-order
    policy: return a number, lower first (within a priority level)."""

    id: int
    namespace: str
    name: str
    kind: str
    local_queue: str | None
    cluster_queue: str
    priority: int
    created_at: float
    now: float
    duration: float | None
    pods: int
    gpus: float
    attained_gpu_seconds: float
    evictions: int

class NodeScoreRequest:
    """One kube-scheduler pod and its feasible nodes, for a node-score policy: return one
    score per candidate (sequence or array; -inf: do not use) or ``{node name: score}``."""

    id: int
    namespace: str
    name: str
    priority: int
    duration: float | None
    now: float
    pod_set: int
    pod: int
    request_gpus: int
    request_cpu_milli: int
    request_memory: int
    node_count: int
    candidates: npt.NDArray[np.int64]
    free_gpus: npt.NDArray[np.int64]
    free_cpu_milli: npt.NDArray[np.int64]
    free_memory: npt.NDArray[np.int64]
    allocatable_gpus: npt.NDArray[np.int64]
    allocatable_cpu_milli: npt.NDArray[np.int64]
    allocatable_memory: npt.NDArray[np.int64]
    @property
    def names(self) -> list[str]: ...

class Result:
    summary: dict[str, Any]
    warnings: list[str]
    hook_calls: int
    wall_seconds: float
    stopped_early: dict[str, str] | None
    @property
    def start_time(self) -> pd.Timestamp: ...
    @property
    def end_time(self) -> pd.Timestamp: ...
    @property
    def frames_seconds(self) -> float: ...
    @property
    def workloads(self) -> pd.DataFrame: ...
    @property
    def queues(self) -> pd.DataFrame: ...
    @property
    def pods(self) -> pd.DataFrame: ...
    @property
    def events(self) -> pd.DataFrame: ...
    @property
    def timeseries(self) -> pd.DataFrame: ...
    def polars(self) -> dict[str, Any]: ...

class Scenario:
    nodes: pd.DataFrame
    cluster_queues: pd.DataFrame
    local_queues: pd.DataFrame
    workloads: pd.DataFrame
    flavors: list[str]
    seed: int
    start_time: pd.Timestamp
    until: pd.Timedelta | None
    policies: dict[str, str | None]
    warnings: list[str]

def run(
    paths: _Paths = None,
    *,
    seed: int | None = None,
    until: _Duration = None,
    patches: Iterable[Union[str, os.PathLike[str]]] = (),
    sets: Iterable[str] = (),
    policies: Mapping[str, Callable[..., Any]] | None = None,
    sample: Union[str, float] = "10m",
    trace_root: Union[str, os.PathLike[str], None] = None,
    strict: bool = False,
    tables: bool = True,
    max_events: int | None = None,
    max_wall: _Duration = None,
) -> Result: ...
def load(
    paths: _Paths = None,
    *,
    seed: int | None = None,
    until: _Duration = None,
    patches: Iterable[Union[str, os.PathLike[str]]] = (),
    sets: Iterable[str] = (),
    trace_root: Union[str, os.PathLike[str], None] = None,
    strict: bool = False,
) -> Scenario: ...
def sweep(
    paths: _Paths = None,
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    seeds: Sequence[int | None] = ...,
    until: _Duration = None,
    patches: Iterable[Union[str, os.PathLike[str]]] = (),
    policies: Mapping[str, Callable[..., Any]] | None = None,
    figures: Sequence[str] | None = None,
) -> pd.DataFrame: ...
