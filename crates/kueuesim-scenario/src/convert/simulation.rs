//! The simulator's own kinds (kueuesim.io): the Simulation (start time, seed, latencies,
//! progress on preemption, scheduler names, KAI defaults, a volcano-scheduler.conf) and
//! NodePools, which make many nodes (and Volcano HyperNodes) from one template.

use std::collections::BTreeMap;

use kueuesim_model::time::{SimDuration, parse_rfc3339};
use kueuesim_model::{
    BinpackArgs, DeviceShareArgs, EnqueueVoter, EvictVoter, HyperNodeMember, HyperNodeSpec,
    KueueGates, Labels, NetworkTopologyAwareArgs, Node, NodeId, NodeOrderWeights,
    PlacementStrategy, ProgressPolicy, QueuePlugin, SchedulerKind, SimConfig, VgpuPolicy,
    VolcanoAction, VolcanoConfig, VolcanoQueueing,
};

use super::core::{
    ARRIVAL_ANNOTATION, Builder, count_in, duration, err_at, err_obj, name_of, one_of, pos_of,
    taints,
};
use super::names;
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

/// `spec.volcano.configuration`: the node-order plugins of a volcano-scheduler.conf and
/// their arguments (other plugins do not change where resource-only pods go and are not
/// modelled; see docs/semantics.md).
fn volcano_config(
    src: &ObjectText<'_>,
    text: &wire::S,
    warnings: &mut Vec<String>,
) -> Result<VolcanoConfig, ScenarioError> {
    let conf: wire::VolcanoConf = crate::source::from_yaml(&text.value).map_err(|e| {
        err_at(
            src,
            text,
            format!(
                "spec.volcano.configuration is not a volcano-scheduler.conf: {}",
                crate::source::yaml_message(&e)
            ),
        )
    })?;
    let int = |p: &wire::VolcanoPlugin, key: &str, default: i64| -> Result<i64, ScenarioError> {
        match p.arguments.get(key) {
            None => Ok(default),
            Some(serde_json::Value::Number(n)) if n.as_i64().is_some() => {
                Ok(n.as_i64().unwrap_or(default))
            }
            Some(serde_json::Value::String(s)) if s.trim().parse::<i64>().is_ok() => {
                Ok(s.trim().parse().unwrap_or(default))
            }
            Some(v) => Err(err_at(
                src,
                text,
                format!(
                    "plugin {} argument {key} is {v}: expected an integer",
                    p.name
                ),
            )),
        }
    };
    let float = |p: &wire::VolcanoPlugin, key: &str, default: f64| -> Result<f64, ScenarioError> {
        match p.arguments.get(key) {
            None => Ok(default),
            Some(serde_json::Value::Number(n)) => Ok(n.as_f64().unwrap_or(default)),
            Some(serde_json::Value::String(s)) if s.trim().parse::<f64>().is_ok() => {
                Ok(s.trim().parse().unwrap_or(default))
            }
            Some(v) => Err(err_at(
                src,
                text,
                format!("plugin {} argument {key} is {v}: expected a number", p.name),
            )),
        }
    };
    let mut cfg = VolcanoConfig {
        nodeorder: None,
        binpack: None,
        network_topology_aware: None,
        deviceshare: None,
        queues: None,
    };
    let mut queues = VolcanoQueueing {
        actions: volcano_actions(src, text, &conf)?,
        plugin: None,
        overcommit_factor: None,
        enqueue_tiers: conf
            .tiers
            .iter()
            .map(|t| {
                t.plugins
                    .iter()
                    // `enableJobEnqueued: false` takes a plugin out of the vote.
                    .filter(|p| p.enable_job_enqueued != Some(false))
                    .filter_map(|p| match p.name.as_str() {
                        "overcommit" => Some(EnqueueVoter::Overcommit),
                        "proportion" | "capacity" => Some(EnqueueVoter::Queue),
                        _ => None,
                    })
                    .collect()
            })
            .collect(),
        allocatable: true,
        overused: true,
        queue_order: true,
        // Each `enable…` switch takes a plugin out of its own session function only
        // (`isEnabled`, default on).
        preempt_tiers: evict_tiers(&conf, |p| p.enable_preemptable),
        reclaim_tiers: evict_tiers(&conf, |p| p.enable_reclaimable),
        starving_tiers: evict_tiers(&conf, |p| p.enable_job_starving),
        gang_pipelined: conf
            .tiers
            .iter()
            .flat_map(|t| &t.plugins)
            .any(|p| p.name == "gang"),
        ancestor_reclaim_level: 0,
    };
    if conf.configurations.is_some() {
        warnings.push(format!(
            "{}: spec.volcano.configuration: configurations (the actions' own arguments) are not simulated: every action runs with its defaults",
            pos_of(src, text)
        ));
    }
    for p in conf.tiers.iter().flat_map(|t| &t.plugins) {
        if !VOLCANO_PLUGINS.contains(&p.name.as_str()) {
            return Err(err_at(
                src,
                text,
                format!(
                    "spec.volcano.configuration: plugin {:?} is not a Volcano scheduler plugin{}: expected one of {}",
                    p.name,
                    crate::overlay::closest_hint(&p.name, VOLCANO_PLUGINS.iter().copied()),
                    VOLCANO_PLUGINS.join(", ")
                ),
            ));
        }
        // After the name's check: only a known plugin's name reaches the terminal.
        let unsimulated = p.unsimulated_switches();
        if !unsimulated.is_empty() {
            warnings.push(format!(
                "{}: spec.volcano.configuration: plugin {}: {} not simulated: the plugin takes part as by default",
                pos_of(src, text),
                p.name,
                unsimulated.join(", ")
                    + if unsimulated.len() == 1 { " is" } else { " are" }
            ));
        }
        // drf's `enableHierarchy` is hierarchical DRF (hdrf: a queue order and a reclaim
        // vote by the namespace hierarchy), which kueuesim does not simulate.
        if p.name == "drf" && p.enable_hierarchy == Some(true) {
            warnings.push(format!(
                "{}: spec.volcano.configuration: plugin drf: enableHierarchy (hierarchical DRF) is not simulated: drf votes in preempt only, as without it",
                pos_of(src, text)
            ));
        }
        match p.name.as_str() {
            "proportion" | "capacity" => {
                let plugin = if p.name == "proportion" {
                    QueuePlugin::Proportion
                } else {
                    QueuePlugin::Capacity {
                        hierarchy: p.enable_hierarchy == Some(true),
                    }
                };
                // Upstream's docs: use one of them; both at once would each veto the
                // other's allocations, which no real configuration means.
                if let Some(first) = queues.plugin.filter(|f| *f != plugin) {
                    return Err(err_at(
                        src,
                        text,
                        format!(
                            "spec.volcano.configuration lists both proportion and capacity (first {first:?}): expected one queue plugin"
                        ),
                    ));
                }
                queues.plugin = Some(plugin);
                if p.name == "capacity" {
                    // `parseArguments`: a negative level falls back to 0.
                    queues.ancestor_reclaim_level =
                        int(p, "ancestorReclaimLevel", 0)?.clamp(0, i64::from(u32::MAX)) as u32;
                }
                queues.allocatable = p.enabled_allocatable != Some(false);
                queues.overused = p.enabled_overused != Some(false);
                queues.queue_order = p.enable_queue_order != Some(false);
            }
            "overcommit" => {
                let factor = float(p, "overcommit-factor", 1.2)?;
                // Upstream warns and takes the default below 1 (overcommit's `New`).
                if factor < 1.0 {
                    warnings.push(format!(
                        "{}: spec.volcano.configuration: overcommit-factor {factor} is below 1: the overcommit plugin takes its default, 1.2, as upstream does",
                        pos_of(src, text)
                    ));
                }
                queues.overcommit_factor = Some(if factor < 1.0 { 1.2 } else { factor });
            }
            _ => {}
        }
        match p.name.as_str() {
            "nodeorder" => {
                cfg.nodeorder = Some(NodeOrderWeights {
                    least_requested: int(p, "leastrequested.weight", 1)?,
                    most_requested: int(p, "mostrequested.weight", 0)?,
                    balanced_resource: int(p, "balancedresource.weight", 1)?,
                });
            }
            "binpack" => {
                let mut resources = vec![
                    ("cpu".to_string(), int(p, "binpack.cpu", 1)?),
                    ("memory".to_string(), int(p, "binpack.memory", 1)?),
                ];
                if let Some(serde_json::Value::String(list)) = p.arguments.get("binpack.resources")
                {
                    for r in list.split(',').map(str::trim).filter(|r| !r.is_empty()) {
                        let w = int(p, &format!("binpack.resources.{r}"), 1)?;
                        resources.push((r.to_string(), w));
                    }
                }
                cfg.binpack = Some(BinpackArgs {
                    weight: int(p, "binpack.weight", 1)?,
                    resources,
                });
            }
            "network-topology-aware" => {
                let enable = match p.arguments.get("hypernode.binpack.normal-pod.enable") {
                    None => true,
                    Some(serde_json::Value::Bool(b)) => *b,
                    Some(serde_json::Value::String(s)) => s.trim() != "false",
                    Some(v) => {
                        return Err(err_at(
                            src,
                            text,
                            format!(
                                "hypernode.binpack.normal-pod.enable is {v}: expected true or false"
                            ),
                        ));
                    }
                };
                let weight = float(p, "weight", 1.0)?;
                let fading = float(p, "hypernode.binpack.normal-pod.fading", 0.8)?;
                cfg.network_topology_aware = Some(NetworkTopologyAwareArgs {
                    weight: if weight < 0.0 { 1.0 } else { weight },
                    normal_pod_binpack: enable,
                    fading: if fading < 0.0 { 0.8 } else { fading },
                });
            }
            "deviceshare" => {
                // The plugin's vGPU support (`deviceshare.VGPUEnable`); its other device
                // kinds (gpushare, Ascend vNPU) are not modelled.
                let enabled = match p.arguments.get("deviceshare.VGPUEnable") {
                    None => false,
                    Some(serde_json::Value::Bool(b)) => *b,
                    Some(serde_json::Value::String(s)) if s.trim() == "true" => true,
                    Some(serde_json::Value::String(s)) if s.trim() == "false" => false,
                    Some(v) => {
                        return Err(err_at(
                            src,
                            text,
                            format!("deviceshare.VGPUEnable is {v}: expected true or false"),
                        ));
                    }
                };
                let policy = match p.arguments.get("deviceshare.SchedulePolicy") {
                    None => VgpuPolicy::None,
                    Some(serde_json::Value::String(s)) => match s.trim() {
                        "binpack" => VgpuPolicy::Binpack,
                        "spread" => VgpuPolicy::Spread,
                        // Upstream takes any other string as no policy.
                        _ => VgpuPolicy::None,
                    },
                    Some(v) => {
                        return Err(err_at(
                            src,
                            text,
                            format!(
                                "deviceshare.SchedulePolicy is {v}: expected binpack or spread"
                            ),
                        ));
                    }
                };
                let weight = int(p, "deviceshare.ScheduleWeight", 0)?;
                if enabled {
                    cfg.deviceshare = Some(DeviceShareArgs { policy, weight });
                }
            }
            _ => {}
        }
    }
    cfg.queues = Some(queues);
    Ok(cfg)
}

/// The plugin names Volcano's scheduler registers (`pkg/scheduler/plugins/factory.go`):
/// upstream logs and skips an unknown one; here it is an error, so a typo does not silently
/// drop a plugin.
const VOLCANO_PLUGINS: &[&str] = &[
    "binpack",
    "capacity",
    "cdp",
    "conformance",
    "deviceshare",
    "drf",
    "extender",
    "gang",
    "network-topology-aware",
    "nodegroup",
    "nodeorder",
    "numa-aware",
    "overcommit",
    "pdb",
    "predicates",
    "priority",
    "proportion",
    "rescheduling",
    "resource-strategy-fit",
    "resourcequota",
    "sla",
    "task-topology",
    "tdm",
    "usage",
];

/// The plugins with a say in the preempt and reclaim actions, tier by tier, without those
/// whose `switch` (`enablePreemptable`, `enableReclaimable`, `enableJobStarving`) is false.
fn evict_tiers(
    conf: &wire::VolcanoConf,
    switch: impl Fn(&wire::VolcanoPlugin) -> Option<bool>,
) -> Vec<Vec<EvictVoter>> {
    conf.tiers
        .iter()
        .map(|t| {
            t.plugins
                .iter()
                .filter(|p| switch(p) != Some(false))
                .filter_map(|p| match p.name.as_str() {
                    "conformance" => Some(EvictVoter::Conformance),
                    "gang" => Some(EvictVoter::Gang),
                    "priority" => Some(EvictVoter::Priority),
                    "proportion" | "capacity" => Some(EvictVoter::Queue),
                    "drf" => Some(EvictVoter::Drf),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// The conf's `actions`, comma-separated (`UnmarshalSchedulerConf`: an unknown name is an
/// error upstream too). Two confs that upstream takes without a word are load errors here,
/// since neither is what their writer meant: without `actions` upstream's conf fails to load
/// and the scheduler keeps its whole default conf (`enqueue, allocate, backfill` with its own
/// tiers), so the tiers written would be ignored; and without `allocate` Volcano places no
/// pod with resource requests (`backfill` takes best-effort pods only), so no gang would
/// ever run.
fn volcano_actions(
    src: &ObjectText<'_>,
    text: &wire::S,
    conf: &wire::VolcanoConf,
) -> Result<Vec<VolcanoAction>, ScenarioError> {
    let Some(list) = conf.actions.as_deref() else {
        return Err(err_at(
            src,
            text,
            "spec.volcano.configuration has no `actions`: Volcano does not load such a conf and keeps its default one (actions \"enqueue, allocate, backfill\" with its default tiers), ignoring the tiers written here; write the actions, e.g. actions: \"enqueue, allocate, backfill\"".to_string(),
        ));
    };
    if !list.split(',').any(|a| a.trim() == "allocate") {
        return Err(err_at(
            src,
            text,
            format!(
                "spec.volcano.configuration: actions {list:?} lack \"allocate\": Volcano would place no pod with resource requests (backfill takes best-effort pods only); add allocate, e.g. actions: \"enqueue, allocate, backfill\""
            ),
        ));
    }
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim) {
        match VolcanoAction::ALL.iter().find(|(n, _)| *n == name) {
            Some(&(_, a)) => out.push(a),
            None => {
                return Err(err_at(
                    src,
                    text,
                    format!(
                        "spec.volcano.configuration: action {name:?} is not a Volcano action{}: expected one of {}",
                        crate::overlay::closest_hint(
                            name,
                            VolcanoAction::ALL.iter().map(|(n, _)| *n)
                        ),
                        VolcanoAction::ALL.map(|(n, _)| n).join(", ")
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// `spec.kueue.featureGates`: the Kueue feature gates kueuesim models as switchable.
/// An unknown gate is a warning (a gate of a newer Kueue, or one whose behaviour is not
/// simulated, changes nothing here); a value other than true or false is an error.
fn feature_gates(
    src: &ObjectText<'_>,
    gates: &BTreeMap<String, wire::S>,
    out: &mut KueueGates,
    warnings: &mut Vec<String>,
) -> Result<(), ScenarioError> {
    for (name, value) in gates {
        let on = match value.value.trim() {
            "true" => true,
            "false" => false,
            other => {
                return Err(err_at(
                    src,
                    value,
                    format!("featureGates.{name} is {other:?}: expected true or false"),
                ));
            }
        };
        match name.as_str() {
            "FlavorFungibilityPreserveScanProgress" => out.preserve_scan_progress = on,
            "RecomputeAssignmentUponPreemptionTargetsOverlap" => out.recompute_on_overlap = on,
            "SchedulingEquivalenceHashing" => out.scheduling_equivalence_hashing = on,
            "TASFailedNodeReplacement" => out.tas_failed_node_replacement = on,
            "TASFailedNodeReplacementFailFast" => out.tas_failed_node_replacement_fail_fast = on,
            _ => warnings.push(format!(
                "{}: featureGates.{name} is not a Kueue feature gate kueuesim models \
                 (known: FlavorFungibilityPreserveScanProgress, \
                 RecomputeAssignmentUponPreemptionTargetsOverlap, \
                 SchedulingEquivalenceHashing, TASFailedNodeReplacement, \
                 TASFailedNodeReplacementFailFast); ignored",
                pos_of(src, value)
            )),
        }
    }
    Ok(())
}

impl Builder<'_> {
    pub(super) fn build_config(&mut self) -> Result<(), ScenarioError> {
        let mut cfg = SimConfig::default();
        // startTime default: the earliest creationTimestamp in the input (epoch if none).
        let mut earliest: Option<i64> = None;
        let mut consider =
            |src: &ObjectText<'_>, meta: &wire::ObjectMeta| -> Result<(), ScenarioError> {
                // An arrival annotation overrides the object's times, so its timestamp does not count.
                if let Some(ts) = meta
                    .creation_timestamp
                    .as_ref()
                    .filter(|_| !meta.annotations.contains_key(ARRIVAL_ANNOTATION))
                {
                    let ms = parse_rfc3339(ts.value.trim())
                        .map_err(|e| err_at(src, ts, e.to_string()))?;
                    earliest = Some(earliest.map_or(ms, |e: i64| e.min(ms)));
                }
                Ok(())
            };
        for p in &self.jobs {
            consider(p.src, &p.obj.metadata)?;
        }
        for p in &self.workloads {
            consider(p.src, &p.obj.metadata)?;
        }
        cfg.start_unix_ms = earliest.unwrap_or(0);
        if let Some(sim) = &self.simulation {
            let src = sim.src;
            let spec = &sim.obj.spec;
            if let Some(seed) = spec.seed {
                cfg.seed = seed;
            }
            if let Some(p) = &spec.policies {
                cfg.policies = kueuesim_model::PolicyNames {
                    queue_order: policy_ref(src, p.queue_order.as_ref(), "kueue")?,
                    node_score: policy_ref(src, p.node_score.as_ref(), "scheduler")?,
                };
            }
            if let Some(st) = &spec.start_time {
                cfg.start_unix_ms =
                    parse_rfc3339(st.value.trim()).map_err(|e| err_at(src, st, e.to_string()))?;
            }
            if let Some(u) = &spec.until {
                // A kueuesim kind's offset: days as `--until` takes them (`40d`, `12d2h`).
                let d = kueuesim_model::limits::parse_offset_days(u.value.trim())
                    .map_err(|e| err_at(src, u, e))?;
                cfg.until = Some(kueuesim_model::SimTime::ZERO + d);
            }
            if let Some(d) = &spec.pod_startup {
                cfg.pod_startup = duration(src, d)?;
            }
            if let Some(d) = &spec.default_remaining {
                self.default_remaining = Some(duration(src, d)?);
            }
            if let Some(v) = &spec.variation {
                self.variation = crate::variation::read(src, v)?;
            }
            if let Some(l) = spec
                .kueue
                .as_ref()
                .and_then(|k| k.controller_latency.as_ref())
            {
                let d = |v: &Option<wire::S>| v.as_ref().map(|v| duration(src, v)).transpose();
                let lat = &mut cfg.controller_latency;
                lat.cycle = d(&l.cycle)?.unwrap_or_default();
                lat.per_cluster_queue = d(&l.per_cluster_queue)?.unwrap_or_default();
                lat.per_tas_flavor = d(&l.per_tas_flavor)?.unwrap_or_default();
                lat.per_head = d(&l.per_head)?.unwrap_or_default();
                lat.per_admission = d(&l.per_admission)?.unwrap_or_default();
                lat.api_write = d(&l.api_write)?.unwrap_or_default();
                lat.status_write = d(&l.status_write)?.unwrap_or_default();
                if let Some(b) = &l.api_burst {
                    // client-go takes any int (and reads 0 as its default, 10; here 0 and 1 both mean one
                    // write at a time, docs/scenario-format.md); beyond a million tokens the burst outlasts
                    // every scenario's writes.
                    lat.api_burst = count_in(src, b, "apiBurst", 0, 1_000_000)? as u32;
                }
            }
            if let Some(k) = &spec.kueue {
                if let Some(e) = &k.enabled {
                    // Whether Kueue is installed in front of the schedulers: off, the
                    // workload stream hands every job to its scheduler directly
                    // (`crate::stream::without_kueue`).
                    cfg.kueue_enabled =
                        one_of(src, e, "kueue.enabled", &[("true", true), ("false", false)])?;
                }
                feature_gates(
                    src,
                    &k.feature_gates,
                    &mut cfg.kueue_gates,
                    &mut self.warnings,
                )?;
            }
            if let Some(d) = &spec.pod_termination {
                cfg.pod_termination = duration(src, d)?;
            }
            if let Some(pp) = &spec.preemption {
                let progress = match &pp.progress {
                    None => "restart",
                    Some(s) => one_of(
                        src,
                        s,
                        "preemption.progress",
                        &[("restart", "restart"), ("checkpoint", "checkpoint")],
                    )?,
                };
                cfg.progress = match (progress, &pp.checkpoint_interval) {
                    ("checkpoint", Some(i)) => {
                        let interval = duration(src, i)?;
                        if interval <= SimDuration::ZERO {
                            return Err(err_at(
                                src,
                                i,
                                "checkpointInterval must be positive: expected a duration such as 30m",
                            ));
                        }
                        ProgressPolicy::Checkpoint { interval }
                    }
                    ("checkpoint", None) => {
                        return Err(err_obj(
                            src,
                            "preemption.progress checkpoint needs preemption.checkpointInterval: expected a duration such as 30m",
                        ));
                    }
                    _ => ProgressPolicy::Restart,
                };
            }
            // A scheduler's name is what pods write as schedulerName: a DNS-1123 subdomain.
            for (name, _) in &spec.schedulers.entries {
                names::reference(src, name, "scheduler name")?;
            }
            for (name, kind) in &spec.schedulers {
                let k = one_of(
                    src,
                    kind,
                    "scheduler",
                    &[
                        ("kube", SchedulerKind::Kube),
                        ("kai", SchedulerKind::Kai),
                        ("volcano", SchedulerKind::Volcano),
                    ],
                )?;
                match cfg
                    .schedulers
                    .binary_search_by(|(n, _)| n.as_str().cmp(name))
                {
                    Ok(i) => cfg.schedulers[i].1 = k,
                    Err(i) => cfg.schedulers.insert(i, (name.clone(), k)),
                }
            }
        }
        if let Some(sim) = &self.simulation
            && let Some(kai) = &sim.obj.spec.kai
        {
            let src = sim.src;
            cfg.kai.default_preferred_level = kai
                .default_preferred_topology_level
                .as_ref()
                .map(|s| s.value.clone());
            cfg.kai.default_topology = kai.default_topology.as_ref().map(|s| s.value.clone());
            if let Some(p) = &kai.placement_strategy {
                cfg.kai.placement_strategy = one_of(
                    src,
                    p,
                    "placementStrategy",
                    &[
                        ("binpack", PlacementStrategy::Binpack),
                        ("spread", PlacementStrategy::Spread),
                    ],
                )?;
            }
        }
        let mut conf_warnings = Vec::new();
        if let Some(sim) = &self.simulation
            && let Some(text) = sim
                .obj
                .spec
                .volcano
                .as_ref()
                .and_then(|v| v.configuration.as_ref())
        {
            cfg.volcano = volcano_config(sim.src, text, &mut conf_warnings)?;
        }
        self.warnings.extend(conf_warnings);
        if let Some(sim) = &self.simulation
            && let Some(g) = &sim.obj.spec.gpu_placement
        {
            // The openb adapter's `gpuSharing: device` may have switched devices on already.
            cfg.gpu.devices |= g.devices.unwrap_or(false);
            if let Some(p) = &g.policy {
                cfg.gpu.policy = one_of(
                    sim.src,
                    p,
                    "gpuPlacement.policy",
                    &kueuesim_model::gpu::GpuPolicy::NAMES,
                )?;
                // A policy for shared GPUs needs the devices.
                cfg.gpu.devices |= cfg.gpu.policy != kueuesim_model::gpu::GpuPolicy::Default;
            }
        }
        if let Some(conf) = self.configuration.take() {
            cfg.kueue = self.kueue_config(&conf)?;
        }
        cfg.gpu.devices |= self.world.config.gpu.devices;
        cfg.gpu.target = std::mem::take(&mut self.world.config.gpu.target);
        self.world.config = cfg;
        Ok(())
    }

    /// NodePools: nodes named `<prefix>-<n>` laid out depth-first over the pool's levels,
    /// appended to `built` after the Node objects.
    pub(super) fn build_node_pools(
        &mut self,
        built: &mut Vec<(Node, Vec<(usize, i64)>)>,
    ) -> Result<(), ScenarioError> {
        let node_pools = std::mem::take(&mut self.node_pools);
        for p in &node_pools {
            let src = p.src;
            let pool = name_of(src, &p.obj.metadata)?.to_string();
            let spec = &p.obj.spec;
            self.remember(src, "", &pool)?;
            let prefix = spec
                .name_prefix
                .as_ref()
                .map_or_else(|| pool.clone(), |s| s.value.clone());
            names::labels(src, &spec.template.labels, "template label")?;
            let alloc = self.allocatable(src, &spec.template.allocatable)?;
            let node_taints = taints(src, &spec.template.taints)?;
            let per_domain = match &spec.nodes_per_domain {
                None => 1,
                Some(n) if (1..=kueuesim_model::limits::MAX_NODES).contains(&n.value) => n.value,
                Some(n) => {
                    return Err(err_at(
                        src,
                        n,
                        format!(
                            "nodesPerDomain {}: expected an integer from 1 to {}",
                            n.value,
                            kueuesim_model::limits::MAX_NODES
                        ),
                    ));
                }
            };
            let mut total: i64 = per_domain;
            for l in &spec.levels {
                if !(1..=kueuesim_model::limits::MAX_NODES).contains(&l.count.value) {
                    return Err(err_at(
                        src,
                        &l.count,
                        format!(
                            "count {}: expected an integer from 1 to {}",
                            l.count.value,
                            kueuesim_model::limits::MAX_NODES
                        ),
                    ));
                }
                total = total.saturating_mul(l.count.value);
            }
            // With the nodes already built (Node objects, earlier pools).
            let all = total.saturating_add(built.len() as i64);
            if all > kueuesim_model::limits::MAX_NODES {
                return Err(err_obj(
                    src,
                    format!(
                        "NodePool {pool:?} would make {total} nodes, {all} in all: expected at most {} nodes",
                        kueuesim_model::limits::MAX_NODES
                    ),
                ));
            }
            let width = (total - 1).max(0).to_string().len();
            // The names the pool makes follow the rules of what they name: node names
            // (`IsDNS1123Subdomain`; all of one length, so the last stands for all), each
            // level's label key and values (`IsQualifiedName`, `IsValidLabelValue`; the
            // highest index is the longest) and the HyperNodes' names.
            let prefix_at = spec
                .name_prefix
                .as_ref()
                .or(p.obj.metadata.name.as_ref())
                .expect("name_of found a name");
            names::generated(
                src,
                prefix_at,
                "node names",
                &format!("{prefix}-{:0width$}", total - 1),
                kueuesim_model::names::dns1123_subdomain,
            )?;
            let mut domains: i64 = 1;
            for level in &spec.levels {
                names::label_key(src, &level.node_label, "nodeLabel")?;
                domains = domains.saturating_mul(level.count.value);
                let value = level_value_prefix(level);
                let at = level.value_prefix.as_ref().unwrap_or(&level.node_label);
                let last = format!("{value}-{}", domains - 1);
                names::generated(
                    src,
                    at,
                    "label values",
                    &last,
                    kueuesim_model::names::label_value,
                )?;
                if level.hyper_node_tier.is_some() {
                    names::generated(
                        src,
                        at,
                        "HyperNode names",
                        &format!("{pool}-{last}"),
                        kueuesim_model::names::dns1123_subdomain,
                    )?;
                }
            }
            // Levels that also make Volcano HyperNodes: tiers must fall going down.
            let mut tiered: Vec<(usize, i32)> = Vec::new();
            for (i, level) in spec.levels.iter().enumerate() {
                if let Some(t) = &level.hyper_node_tier {
                    if t.value < 0 || t.value > i64::from(i32::MAX) {
                        return Err(err_at(
                            src,
                            t,
                            format!(
                                "hyperNodeTier {}: expected an integer from 0 to {}",
                                t.value,
                                i32::MAX
                            ),
                        ));
                    }
                    if let Some(&(_, above)) = tiered.last()
                        && t.value as i32 >= above
                    {
                        return Err(err_at(
                            src,
                            t,
                            format!(
                                "hyperNodeTier {} is not below the tier {above} of a broader level: expected tiers to fall from the broadest level down",
                                t.value
                            ),
                        ));
                    }
                    tiered.push((i, t.value as i32));
                }
            }
            let mut hn_index: BTreeMap<String, usize> = BTreeMap::new();
            let node_base = built.len();
            if let Some(a) = &spec.autoscaling {
                let pool_spec =
                    super::provisioning::autoscaled_pool(src, &pool, a, total, node_base)?;
                self.autoscaled_pools.push(pool_spec);
            }
            self.pool_nodes
                .insert(pool.clone(), node_base..node_base + total as usize);
            for n in 0..total {
                let name = format!("{prefix}-{n:0width$}");
                let mut l: Vec<(String, String)> = spec
                    .template
                    .labels
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                // Domain index at each level: nodes are laid out depth-first, broadest first.
                let mut span = total;
                for level in &spec.levels {
                    let domains_above = total / span;
                    span /= level.count.value;
                    let index = n / span;
                    let _ = domains_above;
                    let value_prefix = level_value_prefix(level);
                    l.push((
                        level.node_label.value.clone(),
                        format!("{value_prefix}-{index}"),
                    ));
                }
                l.push(("kubernetes.io/hostname".into(), name.clone()));
                // This node's HyperNodes: one per tiered level, each a member of the one above.
                let mut parent_hn: Option<usize> = None;
                for &(li, tier) in &tiered {
                    let value = &l[l.len() - 1 - (spec.levels.len() - li)].1;
                    let hn_name = format!("{pool}-{value}");
                    let k = match hn_index.get(&hn_name) {
                        Some(&k) => k,
                        None => {
                            let k = self.generated_hypernodes.len();
                            if let Some(p) = parent_hn {
                                self.generated_hypernodes[p]
                                    .0
                                    .members
                                    .push(HyperNodeMember::HyperNode(hn_name.clone()));
                            }
                            self.generated_hypernodes.push((
                                HyperNodeSpec {
                                    name: hn_name.clone(),
                                    tier,
                                    tier_name: None,
                                    members: Vec::new(),
                                },
                                src,
                            ));
                            hn_index.insert(hn_name, k);
                            k
                        }
                    };
                    parent_hn = Some(k);
                }
                if let Some(p) = parent_hn {
                    let id = NodeId::from_index(node_base + n as usize);
                    self.generated_hypernodes[p]
                        .0
                        .members
                        .push(HyperNodeMember::Node(id));
                }
                let dup_key = (
                    String::new(),
                    "Node".to_string(),
                    String::new(),
                    name.clone(),
                );
                if let Some(first) = self.seen.get(&dup_key) {
                    return Err(err_obj(
                        src,
                        format!(
                            "NodePool {pool:?} makes node {name:?}, which is already defined at {first}: expected unique node names (set spec.namePrefix)"
                        ),
                    ));
                }
                self.seen.insert(dup_key, src.kind_pos.clone());
                built.push((
                    Node {
                        name,
                        labels: Labels::new(l),
                        allocatable: Vec::new(),
                        taints: node_taints.clone(),
                        unschedulable: false,
                    },
                    alloc.clone(),
                ));
            }
        }
        Ok(())
    }
}

/// A `spec.policies` entry: None for the built-in name (or none given), else the name and
/// its place. A name is a Python identifier-like word, so a typo of the built-in name reads
/// as a policy the caller must bind, and the error says so.
fn policy_ref(
    src: &ObjectText<'_>,
    name: Option<&wire::S>,
    builtin: &str,
) -> Result<Option<kueuesim_model::PolicyRef>, ScenarioError> {
    let Some(s) = name else { return Ok(None) };
    let v = s.value.trim();
    if v == builtin {
        return Ok(None);
    }
    let ok = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    if !ok {
        return Err(err_at(
            src,
            s,
            format!(
                "policy name {v:?}: expected {builtin} (built in) or a name of letters, digits, '_', '-', '.'"
            ),
        ));
    }
    Ok(Some(kueuesim_model::PolicyRef {
        name: v.to_string(),
        at: pos_of(src, s).to_string(),
    }))
}

/// The prefix of a NodePool level's label values: `valuePrefix`, else the label's last path
/// segment.
fn level_value_prefix(level: &wire::NodePoolLevel) -> String {
    level.value_prefix.as_ref().map_or_else(
        || {
            level
                .node_label
                .value
                .rsplit(['/', '.'])
                .next()
                .unwrap_or("domain")
                .to_string()
        },
        |v| v.value.clone(),
    )
}
