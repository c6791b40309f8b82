//! From parsed manifests to a `World`: names resolved to ids, quantities and durations parsed,
//! references checked, jobs turned into workloads as Kueue derives them, times laid out.
//!
//! This module is the orchestration: `load` splits the files, reads WorkloadTraces first,
//! dispatches every object by apiVersion group and kind, builds the API families in their
//! order and hooks up the workload stream (objects, WorkloadGenerators, traces). Each family
//! is its own module over the shared `core`.

pub(crate) mod core;
mod epochs;
mod gang;
mod jobs;
mod kai_pod_group;
mod kube;
mod kube_fields;
mod kueue;
mod kueue_fields;
mod lint;
pub(crate) mod names;
mod owners;
mod pod_spec;
mod provisioning;
mod simulation;
mod timeline;
mod topology;
mod volcano_queues;
mod workload;

pub use self::core::{
    ARRIVAL_ANNOTATION, DEFAULT_LOCAL_QUEUE, DURATION_ANNOTATION, LoadOptions,
    PRIORITY_CLASS_LABEL, QUEUE_LABEL, REMAINING_ANNOTATION,
};
pub use self::jobs::kueue_workload_name;
pub(crate) use self::lint::check_override;

use std::collections::BTreeMap;

use kueuesim_model::{Workload, World};

use self::core::{Builder, Parsed, ensure_namespace, err_obj, name_of, namespace_of, parse};
use self::lint::Lint;
use crate::error::{Pos, ScenarioError};
use crate::overlay::{Overrides, kind_matches};
use crate::source::{ObjectText, SourceFile, split_objects};
use crate::stream::WorkloadStream;
use crate::wire;

/// A loaded scenario.
#[derive(Debug)]
pub struct Loaded {
    /// The world to simulate.
    pub world: World,
    /// Warnings for the user (skipped kinds, …), one line each.
    pub warnings: Vec<String>,
    /// The scenario's WorkloadTraces, checked; their workloads are already in
    /// `world.workloads` (`crate::trace::open` reads one again, row by row).
    pub traces: Vec<crate::trace::TraceDecl>,
    /// With `LoadOptions::stream`: every workload, in arrival order, still to be read
    /// (`world.workloads` is then empty).
    pub stream: Option<WorkloadStream>,
}

/// Loads every object of `files` into a world.
pub fn load(files: &[SourceFile], mut opts: LoadOptions) -> Result<Loaded, ScenarioError> {
    let patch_files = std::mem::take(&mut opts.patches);
    let set_files = crate::overlay::set_sources(&std::mem::take(&mut opts.sets));
    let mut overrides = Overrides::read(&patch_files, &set_files)?;
    let mut notes = Vec::new();
    let mut objects = Vec::new();
    for f in files {
        objects.extend(split_objects(f)?);
    }
    // A state, not a sequence: the order of files and documents changes nothing.
    crate::source::sort_canonically(&mut objects);
    // Overrides of WorkloadTraces apply first: they decide what a trace adapter generates.
    overrides.apply(
        &mut objects,
        |k| kind_matches(k, "WorkloadTrace"),
        &mut notes,
    )?;
    // WorkloadTraces: checked and their files found first, since an adapter may generate
    // cluster objects (nodes, flavors, queues) that the scenario then builds like its own.
    let traces = crate::trace::declarations(&objects, &opts)?;
    let generated = crate::trace::generate(&traces)?;
    for f in &generated {
        objects.extend(split_objects(f)?);
    }
    // The other overrides, on the user's objects and the generated ones alike.
    overrides.apply(&mut objects, |_| true, &mut notes)?;
    for (i, o) in objects.iter_mut().enumerate() {
        o.order = i;
    }
    // Timeline changes that set or patch objects: their epochs, worked out on the cluster's
    // objects alone before the build, which builds in the nodes and Cohorts they add.
    let epoch_plan = epochs::plan(&objects, &opts, &mut notes)?;
    let (seed, streamed) = (opts.seed, opts.stream);
    let Built {
        mut loaded,
        variation,
        parts,
        generators,
    } = Builder {
        epoch_plan: epoch_plan.as_ref(),
        ..Builder::default()
    }
    .build(&objects, opts)?;
    if let Some(seed) = seed {
        loaded.world.config.seed = seed;
    }
    let mut stream = loaded.stream.take().expect("built with the workloads");
    let mut opened = Vec::with_capacity(traces.len());
    for d in &traces {
        opened.push(crate::trace::open(d, &mut loaded.world)?);
    }
    // A resample reads the days afresh from the parts (the traces among them), not from this
    // stream.
    let parts = match parts {
        Some(p) => Some(p.with_traces(opened)),
        None => {
            for t in opened {
                stream.add_trace(t);
            }
            None
        }
    };
    let mut input_days = None;
    if variation.changes_workloads() {
        use crate::variation::{Input, Resampled, Varied};
        let seed = crate::variation::stream_seed(loaded.world.config.seed);
        let input = match parts {
            // The days are read afresh from the input's parts; the stream built above
            // is not used.
            Some(parts) => {
                let days = Resampled::new(parts, seed)?;
                input_days = Some(days.input_days());
                if days.input_days() == 1 {
                    loaded.warnings.push(
                        "Simulation spec.variation.resample: days: the input spans one day, so every seed draws that day".into(),
                    );
                }
                Input::Days(Box::new(days))
            }
            None => Input::Stream(Box::new(stream)),
        };
        stream = WorkloadStream::of_stage(Box::new(Varied::new(variation.clone(), seed, input)));
    }
    loaded.world.config.variation = variation_note(&variation, input_days, &generators, &traces);
    if !loaded.world.config.kueue_enabled {
        stream.set_without_kueue();
    }
    stream.prime()?;
    if streamed {
        // A streamed trace row's namespace is not added to the world: only a workload whose
        // LocalQueue exists is ever matched against a namespaceSelector, and a LocalQueue's
        // namespace always exists.
        loaded.stream = Some(stream);
    } else {
        while let Some(w) = stream.try_next()? {
            ensure_namespace(&mut loaded.world, &w.namespace);
            loaded.world.workloads.push(w);
        }
    }
    if let Some(plan) = &epoch_plan {
        // After every namespace is in: an epoch is the whole cluster but its workloads.
        loaded.world.epochs = epochs::epoch_worlds(&loaded.world, plan);
    }
    loaded.traces = traces;
    if !notes.is_empty() {
        notes.append(&mut loaded.warnings);
        loaded.warnings = notes;
    }
    Ok(loaded)
}

/// What the seed changes, for the summary: the variation's part, the generators and traces
/// that draw from the run's seed, and the schedulers' tie-breaks.
fn variation_note(
    variation: &crate::variation::Variation,
    input_days: Option<u64>,
    generators: &[String],
    traces: &[crate::trace::TraceDecl],
) -> kueuesim_model::VariationNote {
    let mut note = variation.note(input_days);
    if !generators.is_empty() {
        note.seeds_vary.push(format!(
            "generated workloads (WorkloadGenerator {})",
            generators.join(", ")
        ));
    }
    let drawn: Vec<&str> = traces
        .iter()
        .filter(|t| t.draws_from_run_seed())
        .map(|t| t.name.as_str())
        .collect();
    if !drawn.is_empty() {
        note.seeds_vary.push(format!(
            "trace values drawn at random (WorkloadTrace {})",
            drawn.join(", ")
        ));
    }
    note.seeds_vary.push("tie-breaks".into());
    note
}

/// The group part of an apiVersion (`""` for the core group).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// What the build gives `load`: the loaded scenario, its variation, and what to open its
/// workload stream again from (only when the variation resamples days).
struct Built {
    loaded: Loaded,
    variation: crate::variation::Variation,
    parts: Option<crate::variation::StreamParts>,
    /// The WorkloadGenerators' names (their workloads are drawn from the run's seed).
    generators: Vec<String>,
}

impl<'a> Builder<'a> {
    fn build(
        mut self,
        objects: &'a [ObjectText<'a>],
        opts: LoadOptions,
    ) -> Result<Built, ScenarioError> {
        let mut skipped: BTreeMap<String, (usize, Pos)> = BTreeMap::new();
        let mut lint = Lint::default();
        for src in objects {
            let group = group_of(&src.api_version);
            let mut read = true;
            // Kueue's kinds are linted before they are read, so that under --strict a
            // misspelt required field is reported as the typo it is.
            let kueue_kind = lint::is_kueue_kind(group, &src.kind);
            if kueue_kind {
                lint.object(src, group, opts.strict)?;
            }
            let kueue_version_ok = matches!(
                src.api_version.as_str(),
                "kueue.x-k8s.io/v1beta1" | "kueue.x-k8s.io/v1beta2"
            );
            match (group, src.kind.as_str()) {
                (
                    "kueue.x-k8s.io",
                    "ResourceFlavor"
                    | "ClusterQueue"
                    | "LocalQueue"
                    | "WorkloadPriorityClass"
                    | "Workload",
                ) if !kueue_version_ok => {
                    return Err(err_obj(
                        src,
                        format!(
                            "unsupported apiVersion {:?} for {}: expected kueue.x-k8s.io/v1beta1 or kueue.x-k8s.io/v1beta2",
                            src.api_version, src.kind
                        ),
                    ));
                }
                ("kueue.x-k8s.io", "ResourceFlavor") => self.flavors.push(parse(src)?),
                ("kueue.x-k8s.io", "ClusterQueue") => self.cluster_queues.push(parse(src)?),
                ("kueue.x-k8s.io", "Cohort") => self.cohorts.push(parse(src)?),
                ("kueue.x-k8s.io", "LocalQueue") => self.local_queues.push(parse(src)?),
                ("kueue.x-k8s.io", "AdmissionCheck") => self.admission_checks.push(parse(src)?),
                ("kueue.x-k8s.io", "ProvisioningRequestConfig") => {
                    self.provisioning_configs.push(parse(src)?)
                }
                ("kueue.x-k8s.io", "WorkloadPriorityClass") => self.wpcs.push(parse(src)?),
                ("kueue.x-k8s.io", "Workload") => self.workloads.push(parse(src)?),
                ("", "Node") => self.nodes.push(parse(src)?),
                ("", "Namespace") => self.namespaces.push(parse(src)?),
                ("scheduling.k8s.io", "PriorityClass") => self.pcs.push(parse(src)?),
                ("batch", "Job") => self.jobs.push(parse(src)?),
                ("jobset.x-k8s.io", "JobSet") => self.jobsets.push(parse(src)?),
                (
                    "kubeflow.org",
                    kind @ ("PyTorchJob" | "TFJob" | "XGBoostJob" | "PaddleJob" | "JAXJob"
                    | "MPIJob"),
                ) => {
                    let kind: &'static str = match kind {
                        "PyTorchJob" => "PyTorchJob",
                        "TFJob" => "TFJob",
                        "XGBoostJob" => "XGBoostJob",
                        "PaddleJob" => "PaddleJob",
                        "JAXJob" => "JAXJob",
                        _ => "MPIJob",
                    };
                    self.kubeflow_jobs.push((kind, parse(src)?));
                }
                ("ray.io", "RayJob") => self.ray_jobs.push(parse(src)?),
                ("trainer.kubeflow.org", "TrainJob") => self.train_jobs.push(parse(src)?),
                ("batch.volcano.sh", "Job") => self.volcano_jobs.push(parse(src)?),
                ("trainer.kubeflow.org", "ClusterTrainingRuntime") => {
                    self.training_runtimes.push((true, parse(src)?))
                }
                ("trainer.kubeflow.org", "TrainingRuntime") => {
                    self.training_runtimes.push((false, parse(src)?))
                }
                ("ray.io", "RayCluster") => self.ray_clusters.push(parse(src)?),
                ("apps", "Deployment") => self.deployments.push(parse(src)?),
                ("apps", "StatefulSet") => self.statefulsets.push(parse(src)?),
                ("leaderworkerset.x-k8s.io", "LeaderWorkerSet") => {
                    self.leader_worker_sets.push(parse(src)?)
                }
                ("", "Pod") => self.pods.push(parse(src)?),
                ("grove.io", "PodCliqueSet") => self.pod_clique_sets.push(parse(src)?),
                ("grove.io", "ClusterTopology") => {
                    let p: Parsed<'a, wire::ClusterTopology> = parse(src)?;
                    let name = name_of(src, &p.obj.metadata)?.to_string();
                    self.remember(src, "", &name)?;
                    self.grove_topologies.insert(name, p);
                }
                // Read for whom they own: a Deployment's pods are its ReplicaSet's, a
                // DaemonSet's pods run where the input has them (`owners`).
                ("apps", "ReplicaSet") => {
                    let p: Parsed<'a, wire::ObjectOnly> = parse(src)?;
                    let meta = &p.obj.metadata;
                    let name = name_of(src, meta)?.to_string();
                    let deployment = meta
                        .controller()
                        .filter(|(kind, _)| *kind == "Deployment")
                        .map(|(_, d)| d.to_string());
                    self.replica_sets
                        .insert((namespace_of(meta), name), deployment);
                }
                ("apps", "DaemonSet") => {
                    let p: Parsed<'a, wire::ObjectOnly> = parse(src)?;
                    name_of(src, &p.obj.metadata)?;
                }
                // A dump's Events are history: the run writes its own.
                ("", "Event") | ("events.k8s.io", "Event") => {
                    crate::source::from_yaml::<serde::de::IgnoredAny>(&src.text)
                        .map_err(|e| src.yaml_error(&e))?;
                }
                ("kueuesim.io", "Simulation") => {
                    let p: Parsed<'a, wire::Simulation> = parse(src)?;
                    if let Some(first) = &self.simulation {
                        return Err(err_obj(
                            src,
                            format!(
                                "duplicate Simulation: first defined at {}; expected at most one",
                                first.src.kind_pos
                            ),
                        ));
                    }
                    self.simulation = Some(p);
                }
                ("kueuesim.io", "NodePool") => self.node_pools.push(parse(src)?),
                ("kueuesim.io", "Timeline") => self.timelines.push(parse(src)?),
                // Read by `crate::trace` before the build.
                ("kueuesim.io", "WorkloadTrace") => {}
                ("kueuesim.io", "WorkloadGenerator") => {
                    let p: Parsed<'a, wire::WorkloadGenerator> = parse(src)?;
                    let name = name_of(src, &p.obj.metadata)?.to_string();
                    self.remember(src, "", &name)?;
                    self.generators.push(p);
                }
                ("kueue.x-k8s.io", "Topology") => self.topologies.push((false, parse(src)?)),
                ("kai.scheduler", "Topology") => self.topologies.push((true, parse(src)?)),
                ("topology.volcano.sh", "HyperNode") => self.hypernodes.push(parse(src)?),
                ("scheduling.volcano.sh", "Queue") => self.volcano_queues.push(parse(src)?),
                ("scheduling.volcano.sh", "PodGroup") => {
                    let p: Parsed<'a, wire::VolcanoPodGroup> = parse(src)?;
                    let name = name_of(src, &p.obj.metadata)?.to_string();
                    let ns = namespace_of(&p.obj.metadata);
                    self.remember(src, &ns, &name)?;
                    self.volcano_pod_groups.insert((ns, name), p);
                }
                ("scheduling.run.ai", "Queue") => self.kai_queues.push(parse(src)?),
                ("scheduling.run.ai", "PodGroup") => {
                    let p: Parsed<'a, wire::KaiPodGroup> = parse(src)?;
                    let name = name_of(src, &p.obj.metadata)?.to_string();
                    let ns = namespace_of(&p.obj.metadata);
                    self.remember(src, &ns, &name)?;
                    self.kai_pod_groups.insert((ns, name), p);
                }
                ("config.kueue.x-k8s.io", "Configuration") => {
                    let p: Parsed<'a, wire::Configuration> = parse(src)?;
                    if let Some(first) = &self.configuration {
                        return Err(err_obj(
                            src,
                            format!(
                                "duplicate Kueue Configuration: first defined at {}; expected at most one",
                                first.src.kind_pos
                            ),
                        ));
                    }
                    self.configuration = Some(p);
                }
                _ => {
                    // Not read any further, but a syntax error is still an error (the
                    // splitter read only its head).
                    crate::source::from_yaml::<serde::de::IgnoredAny>(&src.text)
                        .map_err(|e| src.yaml_error(&e))?;
                    let label = if src.api_version.is_empty() {
                        src.kind.clone()
                    } else {
                        format!("{} ({})", src.kind, src.api_version)
                    };
                    let e = skipped.entry(label).or_insert((0, src.kind_pos.clone()));
                    e.0 += 1;
                    read = false;
                }
            }
            if read && !kueue_kind {
                lint.object(src, group, opts.strict)?;
            }
        }
        lint.finish(opts.strict, &mut self.warnings)?;
        if !skipped.is_empty() {
            if opts.strict {
                let (label, (_, pos)) = skipped
                    .iter()
                    .min_by_key(|(_, (_, pos))| objects.iter().position(|o| o.kind_pos == *pos))
                    .expect("non-empty");
                let src_text = objects
                    .iter()
                    .find(|o| o.kind_pos == *pos)
                    .map_or("", |o| o.file.text.as_str());
                return Err(ScenarioError::at(
                    pos.clone(),
                    format!(
                        "unsupported kind {} (--strict): expected one of the kinds in docs/scenario-format.md",
                        kueuesim_model::names::escaped(label)
                    ),
                    src_text,
                ));
            }
            let list: Vec<String> = skipped
                .iter()
                .map(|(k, (n, _))| format!("{n} {}", kueuesim_model::names::escaped(k)))
                .collect();
            self.warnings.push(format!(
                "skipped objects of kinds the simulator does not read: {}",
                list.join(", ")
            ));
        }
        self.build_config()?;
        if let Some(seed) = opts.seed {
            self.world.config.seed = seed;
        }
        self.build_namespaces()?;
        self.build_flavors()?;
        self.build_cohorts()?;
        // ClusterQueues by cohort, then name: the order of a cycle's heads that tie (upstream
        // iterates a map there), and of the outputs. Grouped by cohort, as Kueue's snapshot
        // holds them in cohort trees.
        self.cluster_queues.sort_by(|a, b| {
            let cohort = |c: &Parsed<'_, wire::ClusterQueue>| {
                let s = &c.obj.spec;
                s.cohort_name
                    .as_ref()
                    .or(s.cohort.as_ref())
                    .map_or(String::new(), |c| c.value.clone())
            };
            crate::source::natural_cmp(&cohort(a), &cohort(b))
        });
        self.build_cluster_queues()?;
        self.build_local_queues()?;
        self.build_priority_classes()?;
        self.build_volcano_queues()?;
        self.build_nodes()?;
        self.build_admission_checks()?;
        self.build_topologies()?;
        self.build_timeline()?;
        self.build_failures()?;
        self.build_kai_queues()?;
        self.resolve_owners();
        let mut out = Vec::new();
        self.build_jobs(&mut out)?;
        self.build_workload_objects(&mut out)?;
        self.attach_owned_pods(&mut out);
        self.apply_node_affinities();
        self.warn_unnamed_pod_groups();
        self.missing_queue_warnings();
        let (stream, parts, generators) = self.workload_stream(out)?;
        Ok(Built {
            loaded: Loaded {
                world: self.world,
                warnings: self.warnings,
                traces: Vec::new(),
                stream: Some(stream),
            },
            variation: self.variation,
            parts,
            generators,
        })
    }

    /// The workloads as one stream: the objects' (`out`, with their document order) and the
    /// WorkloadGenerators'; with `resample: days`, also what to open it again from; and the
    /// generators' names.
    #[allow(clippy::type_complexity)]
    fn workload_stream(
        &mut self,
        out: Vec<(usize, Workload)>,
    ) -> Result<
        (
            WorkloadStream,
            Option<crate::variation::StreamParts>,
            Vec<String>,
        ),
        ScenarioError,
    > {
        // WorkloadGenerators: merged by arrival (ties: document order), pulled lazily.
        let generators = std::mem::take(&mut self.generators);
        let mut streams = Vec::with_capacity(generators.len());
        let mut places = Vec::with_capacity(generators.len());
        let mut settings_of = Vec::new();
        let mut names = Vec::with_capacity(generators.len());
        for p in &generators {
            let seed = self.world.config.seed;
            let settings = crate::generator::resolve(p.src, &p.obj, &mut self.world, seed)?;
            for q in &settings.queues.items {
                self.ensure_namespace(&q.namespace);
            }
            names.push(settings.name.clone());
            if self.variation.resample_days {
                settings_of.push(settings.clone());
            }
            streams.push(crate::generator::GeneratorStream::new(settings));
            places.push((
                p.src.order,
                p.src.kind_pos.clone(),
                std::rc::Rc::from(p.src.file.text.as_str()),
            ));
        }
        let parts = self
            .variation
            .resample_days
            .then(|| crate::variation::StreamParts::new(out.clone(), settings_of, places.clone()));
        let generated = crate::generator::GeneratedWorkloads::new(streams);
        Ok((WorkloadStream::new(out, generated, places), parts, names))
    }
}
