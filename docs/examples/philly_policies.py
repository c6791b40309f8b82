"""Worked example (docs/python.md): replay Microsoft's Philly trace under Kueue's
BestEffortFIFO, under a shortest-job-first order written in Python, and under a
least-attained-service order (Tiresias, non-preemptive), and plot the job-completion-time CDFs
side by side.

    python docs/examples/philly_policies.py [--until 25d|all] [--node-percent 15] [--out philly-policies.png]

The order of waiting jobs matters only when jobs wait: by default the cluster keeps 15 % of
each virtual cluster's nodes (the trace adapter's nodePercent), where Philly queues for hours;
``--node-percent 100`` replays it on the full cluster, where little waits. The default
horizon is the first 25 days (seconds per policy); ``--until all`` replays the whole trace
(minutes per policy at 15 %).

The trace files are read from the trace root (docs/traces.md). matplotlib is optional
(``pip install kueuesim[examples]``); without it the CDFs are printed as percentiles.
CI runs this file with a short horizon (crates/kueuesim-py/tests/python/test_example.py).
"""

import argparse
import pathlib
import sys

import numpy as np

import kueuesim

ROOT = pathlib.Path(__file__).resolve().parents[2]
PHILLY = ROOT / "scenarios" / "traces" / "philly.yaml"
# Every Philly workload goes through the queue-order policy the Simulation names: one --set
# (a patch file would do as well) adds spec.policies to the scenario's Simulation object.
NAME_POLICY = "simulation/philly:spec.policies.queueOrder=order"


def shortest_job_first(w: kueuesim.OrderRequest) -> float:
    """Shortest first, by the run time the trace gives (an oracle SJF: Gavel's and Tiresias'
    upper bound); lower keys go first."""
    return w.duration if w.duration is not None else float("inf")


def least_attained_service(w: kueuesim.OrderRequest) -> float:
    """Tiresias' LAS: the GPU time a job has had so far, asked when it enters the queue (on
    arrival, 0; after a preemption, what it ran). A new job goes ahead of one that already
    ran; among new jobs Kueue's order (creation time) stands."""
    return w.attained_gpu_seconds


POLICIES = {
    "Kueue BestEffortFIFO": None,
    "SJF (Python)": shortest_job_first,
    "LAS (Python)": least_attained_service,
}


def replay(policy, until, node_percent, trace_root):
    sets = [f"workloadtrace/philly:spec.philly.nodePercent={node_percent}"]
    if policy is None:
        return kueuesim.run(PHILLY, until=until, trace_root=trace_root, sample="1h", sets=sets)
    return kueuesim.run(
        PHILLY,
        until=until,
        trace_root=trace_root,
        sample="1h",
        sets=sets + [NAME_POLICY],
        policies={"order": policy},
    )


def jct_hours(result: kueuesim.Result) -> np.ndarray:
    w = result.workloads
    done = w[w.state == "Finished"]
    return np.sort((done.finishedAt - done.createdAt).dt.total_seconds().to_numpy() / 3600.0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--until", default="25d", help="horizon, e.g. 14d, or all (default 25d)")
    ap.add_argument("--node-percent", type=int, default=15, help="share of each virtual cluster's nodes kept (default 15)")
    ap.add_argument("--out", default="philly-policies.png", help="the plot (needs matplotlib)")
    ap.add_argument("--trace-root", default=None)
    args = ap.parse_args(argv)
    if args.until == "all":
        args.until = None

    jcts = {}
    for label, policy in POLICIES.items():
        r = replay(policy, args.until, args.node_percent, args.trace_root)
        jcts[label] = jct_hours(r)
        s = r.summary
        if len(jcts[label]) == 0:
            print(f"{label:22} no job finished by {args.until}")
            continue
        print(
            f"{label:22} finished {len(jcts[label]):6d}  "
            f"JCT p50 {np.percentile(jcts[label], 50):7.2f} h  p90 {np.percentile(jcts[label], 90):7.2f} h  "
            f"mean {jcts[label].mean():7.2f} h  "
            # The headline counts the jobs still waiting at the end at their wait so far; the
            # admitted-only mean leaves out the longest waits (docs/python.md).
            f"mean wait {s['waitSecondsInclPending']['mean'] / 3600:6.2f} h "
            f"(admitted only {s['waitSecondsAdmitted']['mean'] / 3600:5.2f} h)  "
            f"simulated in {r.wall_seconds:.1f} s (+{r.frames_seconds:.2f} s tables, {r.hook_calls} policy calls)"
        )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot (pip install kueuesim[examples])")
        return 0
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, x in jcts.items():
        ax.plot(x, np.arange(1, len(x) + 1) / max(len(x), 1), label=label)
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (hours)")
    ax.set_ylabel("fraction of finished jobs")
    ax.set_title(
        "Philly"
        + (f", first {args.until}" if args.until else "")
        + (f", {args.node_percent} % of the nodes" if args.node_percent != 100 else "")
    )
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
