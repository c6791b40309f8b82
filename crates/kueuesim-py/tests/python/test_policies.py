"""Python policies: the queue order and node scores take effect, are deterministic, and a
policy that raises or returns a bad decision is a PolicyError that leaves nothing half done."""

import traceback

import numpy as np
import pytest

import kueuesim
from conftest import FIXTURES


def admitted_order(r):
    w = r.workloads.sort_values("admittedAt")
    return [n.split("-")[1] for n in w.name]


def test_kueue_order_without_a_bound_policy_is_an_error():
    with pytest.raises(ValueError, match=r"scenario.yaml:9:\d+: spec.policies.queueOrder names 'order'|\"order\""):
        kueuesim.run(FIXTURES / "sjf")


def test_shortest_job_first_reorders_the_queue():
    fifo = kueuesim.run(FIXTURES / "sjf", policies={"order": lambda w: 0})
    assert admitted_order(fifo) == ["a", "b", "c", "d"]
    sjf = kueuesim.run(FIXTURES / "sjf", policies={"order": lambda w: w.duration})
    # a is alone at t=0 and admitted at once; then the shortest first.
    assert admitted_order(sjf) == ["a", "b", "d", "c"]
    assert sjf.hook_calls == 4
    longest = kueuesim.run(FIXTURES / "sjf", policies={"order": lambda w: -w.duration})
    assert admitted_order(longest) == ["a", "c", "d", "b"]


def test_the_order_request_carries_the_workload():
    seen = []

    def order(w):
        seen.append((w.name, w.cluster_queue, w.local_queue, w.gpus, w.pods, w.duration, w.attained_gpu_seconds))
        return 0

    kueuesim.run(FIXTURES / "sjf", policies={"order": order})
    assert seen[0][1:] == ("team", "q", 8.0, 1, 4 * 3600.0, 0.0)


def test_packing_score_puts_both_pods_on_one_node():
    spread = kueuesim.run(FIXTURES / "pack", policies={"score": lambda r: -(r.allocatable_gpus - r.free_gpus)})
    assert sorted(spread.pods.node) == ["gpu-0", "gpu-1"]
    pack = kueuesim.run(FIXTURES / "pack", policies={"score": lambda r: r.allocatable_gpus - r.free_gpus})
    assert list(pack.pods.node) == ["gpu-0", "gpu-0"]
    by_name = kueuesim.run(FIXTURES / "pack", policies={"score": lambda r: {"gpu-1": 1.0}})
    assert list(by_name.pods.node) == ["gpu-1", "gpu-1"]


def test_same_seed_same_output_with_policies():
    pol = {"score": lambda r: np.asarray(r.free_gpus, dtype=float) * 0.5}
    a = kueuesim.run(FIXTURES / "pack", seed=3, policies=pol)
    b = kueuesim.run(FIXTURES / "pack", seed=3, policies=pol)
    assert a.summary == b.summary
    assert a.workloads.equals(b.workloads) and a.events.equals(b.events) and a.pods.equals(b.pods)


def baseline():
    return kueuesim.run(FIXTURES / "pack", policies={"score": lambda r: np.zeros(len(r.candidates))})


@pytest.mark.parametrize(
    "decision,message",
    [
        (lambda r: {"gpu-9": 1.0}, "node 'gpu-9', which does not exist|node \"gpu-9\", which does not exist"),
        (lambda r: [1.0], "returned 1 scores for 2 candidate nodes"),
        (lambda r: [float("nan"), 1.0], "expected a finite number"),
        (lambda r: "gpu-0", "expected a sequence of numbers"),
    ],
)
def test_bad_decisions_are_policy_errors(decision, message):
    before = baseline()
    with pytest.raises(kueuesim.PolicyError, match=message):
        kueuesim.run(FIXTURES / "pack", policies={"score": decision})
    # Nothing was left behind: the same run again gives the same result.
    after = baseline()
    assert before.summary == after.summary and before.pods.equals(after.pods)


def test_a_node_that_cannot_take_the_pod_is_over_capacity(tmp_path):
    # Fill gpu-1 (8 GPUs) with a first pod of 8 GPUs, then try to score gpu-1 for the next.
    text = (FIXTURES / "pack" / "scenario.yaml").read_text()
    text = text.replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "8"', 1)
    (tmp_path / "s.yaml").write_text(text)
    with pytest.raises(kueuesim.PolicyError, match="cannot take pod 0 of team/job-y.*over capacity or filtered out: 0 GPUs free"):
        kueuesim.run(tmp_path / "s.yaml", policies={"score": lambda r: {"gpu-1": 1.0}})


def test_a_policy_that_raises_propagates_its_traceback():
    def sjf(w):
        if w.name.startswith("job-c"):
            raise KeyError("no estimate for c")
        return w.duration

    with pytest.raises(kueuesim.PolicyError, match="policy \"order\": failed on workload team/job-c") as e:
        kueuesim.run(FIXTURES / "sjf", policies={"order": sjf})
    cause = e.value.__cause__
    assert isinstance(cause, KeyError)
    frames = traceback.extract_tb(cause.__traceback__)
    assert any(f.name == "sjf" for f in frames)
