#!/usr/bin/env python3
"""How much a day varies in the Microsoft Philly trace (philly-pollux/philly.csv under the
trace root, docs/traces.md): the measurements behind the reference platform's
`Simulation.spec.variation` (scenarios/platform/00-simulation.yaml, docs/what-if.md).

Usage: scripts/trace-variation.py [TRACE_ROOT]
(default: $KUEUESIM_TRACE_ROOT, else shared/traces beside the checkout, as kueuesim looks)

The steady part of the trace is taken: the weekdays from 2017-09-25 (the first week after
the trace's ramp-up, when fewer than 20 jobs a day were logged) to 2017-12-12 (before the
six days of December with fewer than 70 jobs a day). Printed:
- per weekday, the jobs submitted, the submission groups (jobs of one virtual cluster and GPU
  count submitted in the same minute: the members of one sweep or array count once) and the
  GPU-hours submitted: mean and coefficient of variation across days, and the CV a Poisson
  count of that mean would have;
- the spread of ln(duration) within submission groups of 3 jobs or more (pooled standard
  deviation), over all jobs and over jobs of 10 minutes or more: how much the durations of
  near-identical jobs differ, the σ of `durations: lognormal`.
Standard library only.
"""

import collections
import csv
import datetime
import math
import os
import statistics
import sys

FIRST, LAST = datetime.date(2017, 9, 25), datetime.date(2017, 12, 12)


def main() -> None:
    beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "traces")
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("KUEUESIM_TRACE_ROOT", beside)
    path = os.path.join(root, "philly-pollux", "philly.csv")
    jobs = collections.Counter()
    groups_per_day = collections.defaultdict(set)
    gpu_hours = collections.defaultdict(float)
    groups = collections.defaultdict(list)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            t = datetime.datetime.strptime(r["timestamp"], "%Y-%m-%d %H:%M:%S")
            day = t.date()
            if not FIRST <= day <= LAST:
                continue
            group = (r["cluster"], r["num_gpus"], t.replace(second=0))
            duration = float(r["duration"])
            if duration > 0:
                groups[group].append(duration)
            if day.weekday() >= 5:
                continue
            jobs[day] += 1
            groups_per_day[day].add(group)
            gpu_hours[day] += float(r["gpu_time"]) / 3600

    days = sorted(jobs)
    print(f"Philly weekdays {days[0]} to {days[-1]}: {len(days)} days")

    def line(what: str, xs: list, count: bool) -> None:
        mean = statistics.mean(xs)
        cv = statistics.stdev(xs) / mean
        poisson = f"  (a Poisson count of that mean: {1 / math.sqrt(mean):.3f})" if count else ""
        print(f"  {what:<22} mean {mean:9.0f}  CV {cv:.2f}{poisson}")

    line("jobs per day", [jobs[d] for d in days], True)
    line("submission groups/day", [len(groups_per_day[d]) for d in days], True)
    line("GPU-hours per day", [gpu_hours[d] for d in days], False)

    for min_seconds in (0, 600):
        squares, df, n_groups = 0.0, 0, 0
        for durations in groups.values():
            logs = [math.log(d) for d in durations if d >= min_seconds]
            if len(logs) < 3:
                continue
            mean = statistics.mean(logs)
            squares += sum((x - mean) ** 2 for x in logs)
            df += len(logs) - 1
            n_groups += 1
        print(
            f"  sd of ln(duration) within submission groups ({FIRST} to {LAST}, every day), "
            f"jobs >= {min_seconds} s: {math.sqrt(squares / df):.2f} ({n_groups} groups of 3 or more)"
        )


if __name__ == "__main__":
    main()
