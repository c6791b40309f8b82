//! Integration tests of loading manifests, traces and generators, and of the runs they make,
//! checked through kueuesim-report's result document.

/// Malformed or inconsistent input: each case names file:line:column and what was expected.
mod autoscale;
mod bad_input;
/// Files that are not what they were given as (a symlink to a system file, a binary file):
/// errors without the file's text.
mod foreign_files;
/// WorkloadGenerator: seeded arrivals, distributions, mixes, replication, bad settings.
mod generator;
/// Golden scenarios of `scenarios/golden/`: hand-computed outcomes plus snapshots.
mod golden;
/// Grove PodCliqueSets: PodGangs as KAI PodGroups, Grove's validation, Kueue in front.
mod grove;
/// Every job kind Kueue admits, with the pod sets Kueue derives.
mod job_kinds;
/// KAI's allocate action: its unit-test cases written from their tables.
mod kai_allocate_cases;
/// KAI's allocate action: upstream's fractional, GPU-memory, queue and topology cases.
mod kai_allocate_fraction_cases;
/// KAI's consolidation action: its unit-test cases (K25–K36, K46–K51, K54) as scenarios.
mod kai_consolidation;
/// KAI's queues over CPU and memory: fair shares, reclaim and limits per resource.
mod kai_cpu_memory;
/// KAI's reclaim and preempt of elastic jobs pod by pod: their unit-test cases (K37–K45,
/// K52, K53).
mod kai_elastic_victims;
/// KAI's reclaim, preempt and queue limits with GPU shares (upstream's fractional cases).
mod kai_fractions;
/// What the KAI case harnesses write and read alike (Simulation, Node, PriorityClass and
/// Queue documents, the run, a job's evictions).
mod kai_harness;
/// KAI's reclaim, preempt and consolidation over whole clusters with GPU jobs: upstream's
/// integration cases (`integration_tests/{reclaim,preempt,consolidation,…}`).
mod kai_integration_cases;
/// KAI's preempt action: its unit-test cases written from their tables.
mod kai_preempt_unit_cases;
/// KAI's queue actions: preemptibility, `LastStartTimestamp`, victim order, the session's
/// action order.
mod kai_queues;
/// KAI's reclaim over whole clusters: upstream's integration cases with CPU-only or mixed
/// CPU and GPU tasks.
mod kai_reclaim_cases;
/// KAI's reclaim action: upstream's unit cases of `pkg/scheduler/actions/reclaim` (plain,
/// departments, subgroups, gangs).
mod kai_reclaim_unit_cases;
/// KAI's staleGangEviction action.
mod kai_stale_gang;
/// The table harness of the KAI action cases transcribed from upstream's unit tests.
mod kai_tables;
/// Kueue's own scheduler unit-test cases (kueue-cases.md S-*, O-*) as scenarios.
mod kueue_cases;
/// Kueue features as golden scenarios of `scenarios/kueue/`: cohorts, flavors, partial
/// admission, queue policies, preemption; hand-computed outcomes asserted field by field.
mod kueue_features;
/// Kueue behaviours the differential oracle against upstream Kueue found, as scenarios of
/// `scenarios/kueue/` with hand-computed outcomes.
mod kueue_oracle;
/// Kueue's scheduler performance scenarios against their published bands.
mod kueue_perf;
/// Kueue preemption as golden scenarios of `scenarios/kueue/`: within a ClusterQueue, in a
/// cohort, victim order, the eviction writes.
mod kueue_preemption;
/// Both layers (Kueue, then KAI's or Volcano's queues) and each gang scheduler alone.
mod layers;
/// The lint for likely typos: unknown keys and Kueue fields, missing LocalQueues.
mod lint;
/// How objects become workloads: document order, times, snapshot state.
mod loading;
/// Mutation fuzzing: extreme numbers, lost and doubled lines, flipped bytes never panic.
mod mutation;
/// Names as the API server checks them: hostile names refused at their place, valid ones
/// loading, trace cells mapped to valid names.
mod names;
/// `--patch` and `--set`: overrides merged into the scenario's objects.
mod overrides;
/// `pendingBoundBy`: what held each queue back, one scenario per constraint, and the
/// platform's ml-team across its GPU quota.
mod pending_bound;
/// Volcano and KAI placement cases (volcano-kai-cases.md V*, K*) as scenarios.
mod placement_cases;
/// PodGroup + bare Pods input: one gang per PodGroup, errors and warnings.
mod pod_groups;
/// The summary's queue figures and the capacity checks, hand-computed.
mod queue_figures;
/// Serving that scales: Deployments, StatefulSets and LeaderWorkerSets following a schedule
/// or a load, their scale-ups admitted (and preempting) through Kueue, their scale-downs.
mod serving;
/// A cluster dump is a state: what it holds is booked first, in any object order.
mod snapshot_state;
/// Streamed runs: the summary of the full run, and memory that follows the live workloads.
mod streaming;
/// A living cluster: Timeline drains and removals, node and GPU failures, checkpoints, job
/// reactions, seeded reruns, and the loader's errors for them.
mod timeline;
/// WorkloadTrace: the native CSV format, mappings, the trace root, and the public traces
/// replayed (conservation, invariants).
mod traces;
/// Helpers to load text and run it.
mod util;
/// `Simulation.spec.variation`: what a seed changes in the workloads.
mod variation;
mod volcano_evictions;
mod volcano_queues;
