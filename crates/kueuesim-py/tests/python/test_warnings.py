"""The load's warnings issued through Python's `warnings` module as kueuesim.LoadWarning:
shown by default at the caller's line, filtered by the standard filters, raised before the
run under an "error" filter, and still listed in Result.warnings / Scenario.warnings."""

import warnings

import pytest

import kueuesim
from conftest import FIXTURES, ROOT

PLATFORM = ROOT / "scenarios/platform"
MISSING_QUEUE = "LocalQueue research/experiment is not defined in the input"


def test_load_warning_is_an_exported_user_warning():
    assert issubclass(kueuesim.LoadWarning, UserWarning)
    assert "LoadWarning" in kueuesim.__all__


def test_run_issues_each_load_warning_at_the_callers_line():
    with pytest.warns(kueuesim.LoadWarning, match="research/experiment is not defined") as seen:
        r = kueuesim.run(PLATFORM, until="1h")
    issued = [w for w in seen if w.category is kueuesim.LoadWarning]
    assert [str(w.message) for w in issued] == r.warnings
    assert any(MISSING_QUEUE in m for m in r.warnings)
    # Attributed to this file, not to kueuesim's own code.
    assert {w.filename for w in issued} == {__file__}


def test_load_and_sweep_issue_them_too():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        s = kueuesim.load(PLATFORM)
    assert [str(w.message) for w in seen if w.category is kueuesim.LoadWarning] == s.warnings
    assert {w.filename for w in seen} == {__file__}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        kueuesim.sweep(PLATFORM, {"clusterqueue/ml-team:spec.queueingStrategy": ["StrictFIFO"]},
                       seeds=[1, 2], until="1h", figures=["workloads.total"])
    load = [w for w in seen if w.category is kueuesim.LoadWarning]
    # One per run under "always"; the default filter shows each message once per line.
    assert len(load) == 2 * len(s.warnings)
    assert {w.filename for w in load} == {__file__}


def test_the_default_filter_shows_them_once_per_line():
    with warnings.catch_warnings(record=True) as seen:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for _ in range(3):
            kueuesim.run(PLATFORM, until="1h", tables=False)
    assert len([w for w in seen if w.category is kueuesim.LoadWarning]) == 1


def test_an_ignore_filter_silences_them_and_the_list_stays():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", kueuesim.LoadWarning)
        r = kueuesim.run(PLATFORM, until="1h", tables=False)
    assert [w for w in seen if w.category is kueuesim.LoadWarning] == []
    assert any(MISSING_QUEUE in m for m in r.warnings)


def test_an_error_filter_raises_before_the_run_starts():
    calls = []

    def order(w):
        calls.append(w.name)
        return 0

    named = ["simulation/platform-day:spec.policies.queueOrder=order"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", kueuesim.LoadWarning)
        with pytest.raises(kueuesim.LoadWarning, match="research/experiment"):
            kueuesim.run(PLATFORM, until="1h", sets=named, policies={"order": order})
    # The policy was never asked: the run did not start.
    assert calls == []
    r = kueuesim.run(PLATFORM, until="1h", sets=named, policies={"order": order})
    assert r.hook_calls == len(calls) > 0


def test_a_scenario_without_warnings_issues_none():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        r = kueuesim.run(FIXTURES / "sjf", policies={"order": lambda w: 0})
    assert r.warnings == [] and [w for w in seen if w.category is kueuesim.LoadWarning] == []
