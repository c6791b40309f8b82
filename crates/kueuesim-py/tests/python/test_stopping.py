"""A run and the rest of the program: the GIL is released while the engine runs, Ctrl-C
stops a run with KeyboardInterrupt, sys.exit() and KeyboardInterrupt in a policy propagate
as themselves, and max_events/max_wall stop a run early as the command's --max-events and
--max-wall do (docs/python.md, "Threads, signals and budgets")."""

import json
import math
import os
import signal
import sys
import threading
import time

import pytest

import kueuesim
from conftest import FIXTURES, ROOT

# Ten million jobs, one a second: far more than any test waits for (fixtures/long).
LONG = FIXTURES / "long"
PLATFORM = ROOT / "scenarios" / "platform"


def test_a_run_in_a_thread_lets_the_main_thread_run_python():
    # A run without policies in a worker thread, stopped by its wall-time budget. While it
    # goes on, the main thread runs bytecode; with the GIL held by the run it would stand
    # still for the whole run (from `start()`, which waits for the worker to run), released
    # it barely pauses.
    box = {}

    def work():
        box["began"] = time.monotonic()
        box["result"] = kueuesim.run(LONG, tables=False, max_wall="2s")
        box["ended"] = time.monotonic()

    worker = threading.Thread(target=work)
    last = time.monotonic()
    worker.start()
    longest_gap, turns, seen = 0.0, 0, []
    while worker.is_alive():
        now = time.monotonic()
        longest_gap = max(longest_gap, now - last)
        last = now
        turns += 1
        if turns % 1000 == 0:
            seen.append(now)
    worker.join()
    r = box["result"]
    assert r.stopped_early["reason"] == "MaxWallTime"
    assert r.wall_seconds >= 2.0
    during = [t for t in seen if box["began"] < t < box["ended"]]
    assert len(during) > 10, "the main thread ran no Python while the run went on"
    assert longest_gap < 1.0, f"the main thread stood still for {longest_gap:.2f} s of a {r.wall_seconds:.2f} s run"


@pytest.fixture
def default_sigint():
    """Python's own SIGINT handler (KeyboardInterrupt), whatever the test runner installed."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.mark.parametrize("policy", [False, True], ids=["built-in", "python-policy"])
def test_ctrl_c_stops_a_run_with_keyboard_interrupt(default_sigint, policy):
    # SIGINT to this process half a second into a run on the main thread. The run would go
    # on for 30 s (its wall budget, a bound should the signal be missed); it ends with
    # KeyboardInterrupt within a few seconds. With a Python policy the signal may land while
    # the policy runs: KeyboardInterrupt all the same, not a PolicyError.
    kw = {}
    if policy:
        kw = {"sets": ["simulation/long:spec.policies.queueOrder=fifo"], "policies": {"fifo": lambda w: w.created_at}}
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.5, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            kueuesim.run(LONG, tables=False, max_wall="30s", **kw)
        caught = time.monotonic()
    finally:
        timer.cancel()
        timer.join()
    assert sent, "the run ended before the signal was sent"
    assert caught - sent[0] < 5.0, f"KeyboardInterrupt came {caught - sent[0]:.1f} s after SIGINT"


def test_sys_exit_in_a_policy_is_system_exit():
    def order(w):
        if w.name.startswith("job-c"):
            sys.exit(7)
        return w.duration

    with pytest.raises(SystemExit) as e:
        kueuesim.run(FIXTURES / "sjf", policies={"order": order})
    assert e.value.code == 7


def raise_interrupt(*_):
    raise KeyboardInterrupt


class Unreadable:
    """A score that raises KeyboardInterrupt when numpy reads it (`__float__`)."""

    def __float__(self):
        raise KeyboardInterrupt


@pytest.mark.parametrize(
    "fixture,policies",
    [
        ("sjf", {"order": raise_interrupt}),
        ("pack", {"score": raise_interrupt}),
        ("pack", {"score": lambda r: [Unreadable()] * len(r.candidates)}),
        ("pack", {"score": lambda r: {"gpu-1": Unreadable()}}),
    ],
    ids=["queueOrder", "nodeScore", "nodeScore-sequence", "nodeScore-dict"],
)
def test_keyboard_interrupt_in_a_policy_is_keyboard_interrupt(fixture, policies):
    with pytest.raises(KeyboardInterrupt):
        kueuesim.run(FIXTURES / fixture, policies=policies)
    # The engine was left consistent: the same run with a working policy still runs.
    assert kueuesim.run(FIXTURES / "sjf", policies={"order": lambda w: 0}).summary["workloads"]["total"] == 4


def test_an_exception_reading_a_score_is_still_a_policy_error():
    class Bad:
        def __float__(self):
            raise ArithmeticError("no score")

    with pytest.raises(kueuesim.PolicyError, match="is not a number"):
        kueuesim.run(FIXTURES / "pack", policies={"score": lambda r: {"gpu-1": Bad()}})


def test_max_events_stops_early_as_the_cli_does(cli):
    out = cli("run", "--quiet", PLATFORM, "--until", "6h", "--max-events", "100", "-o", "json")
    assert out.returncode == 3, out.stderr
    doc = json.loads(out.stdout)
    r = kueuesim.run(PLATFORM, until="6h", max_events=100)
    assert r.summary == doc["summary"]
    assert r.stopped_early == {
        "reason": "MaxEvents",
        "message": doc["summary"]["stoppedEarly"]["message"],
    }
    assert r.stopped_early["message"].startswith("the run processed its budget of 100 events at simulated ")
    assert r.summary["eventsProcessed"] == 100
    assert "stopped early: MaxEvents" in repr(r)
    # The tables describe the run up to then.
    assert r.events["at"].max() <= r.end_time


def test_max_wall_stops_a_long_run_early():
    r = kueuesim.run(LONG, tables=False, max_wall=0.5)
    assert r.stopped_early["reason"] == "MaxWallTime"
    assert r.stopped_early["message"].startswith("the run used its max_wall budget of 500ms at simulated ")
    assert 0 < r.summary["eventsProcessed"] < 10_000_000
    r = kueuesim.run(LONG, tables=False, max_wall="500ms", max_events=10)
    assert r.stopped_early["reason"] == "MaxEvents" and r.summary["eventsProcessed"] == 10


def test_a_run_to_its_end_is_not_stopped_early():
    r = kueuesim.run(FIXTURES / "sjf", policies={"order": lambda w: 0}, max_events=10**9, max_wall="1h")
    assert r.stopped_early is None and "stoppedEarly" not in r.summary


@pytest.mark.parametrize(
    "kw,error,message",
    [
        ({"max_wall": 0}, ValueError, r"max_wall: 0: expected a positive duration \(30s, 10m\) or seconds"),
        ({"max_wall": -1.5}, ValueError, r"max_wall: -1.5: expected a positive duration"),
        ({"max_wall": math.nan}, ValueError, r"max_wall: nan: expected a positive duration"),
        ({"max_wall": math.inf}, ValueError, r"max_wall: inf: expected a positive duration"),
        ({"max_wall": "0s"}, ValueError, r"max_wall: \"0s\": expected a positive duration"),
        ({"max_wall": "-5s"}, ValueError, r"max_wall: "),
        ({"max_wall": "soon"}, ValueError, r"max_wall: .*soon"),
        ({"max_wall": True}, TypeError, r"max_wall: expected a duration \(30s, 10m\) or seconds, got bool True"),
        ({"max_events": 0}, ValueError, r"max_events: 0: expected a positive number of events"),
        ({"max_events": -3}, ValueError, r"max_events: -3: expected a positive number of events"),
        ({"max_events": 2**64}, ValueError, r"max_events: \d+: expected a positive number of events"),
        ({"max_events": 1.5}, TypeError, r"max_events: expected a positive int, got float 1.5"),
        ({"max_events": True}, TypeError, r"max_events: expected a positive int, got bool True"),
    ],
)
def test_bad_budgets_are_refused_before_the_run(kw, error, message):
    with pytest.raises(error, match=message):
        kueuesim.run(FIXTURES / "sjf", policies={"order": lambda w: 0}, **kw)


def test_budgets_far_above_need_change_nothing():
    # The same runs with budgets they never reach: the engine is the same, released GIL,
    # signal checks and all; byte-identical summaries and tables.
    plain = kueuesim.run(PLATFORM, until="12h", seed=3)
    budget = kueuesim.run(PLATFORM, until="12h", seed=3, max_events=10**12, max_wall="1h")
    assert budget.stopped_early is None
    assert plain.summary == budget.summary
    for table in ["workloads", "pods", "events", "timeseries"]:
        assert getattr(plain, table).equals(getattr(budget, table)), table
    order = {"order": lambda w: w.duration}
    a = kueuesim.run(FIXTURES / "sjf", policies=order)
    b = kueuesim.run(FIXTURES / "sjf", policies=order, max_events=10**12, max_wall=3600)
    assert a.summary == b.summary and a.workloads.equals(b.workloads) and a.hook_calls == b.hook_calls
