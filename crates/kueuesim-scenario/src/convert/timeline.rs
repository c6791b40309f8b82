//! The living cluster's input: `Timeline` objects (changes at offsets: node operations, and
//! `--set` / strategic-merge patches of the objects, read by `crate::timeline`) and the
//! Simulation's `spec.failures` (seeded node and GPU failures), resolved against the nodes.

use serde_saphyr::Spanned;

use kueuesim_model::{
    Change, DurationDist, FailureConfig, GpuFailures, NodeFailures, NodeId, NodeOp, SimDuration,
};

use super::core::{Builder, err_at, err_obj, name_of, pos_of, selector};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

/// The mean time between failures of one node by default: Llama 3's interruptions not
/// attributed to GPUs but to other hardware (docs/scenario-format.md, "Failures").
pub(super) const DEFAULT_NODE_MTBF: SimDuration = SimDuration::from_secs(32_800 * 3600);
/// The mean time between failures of one GPU by default, from Llama 3's GPU interruptions.
pub(super) const DEFAULT_GPU_MTBF: SimDuration = SimDuration::from_secs(86_300 * 3600);
/// The mean repair time by default: an assumption, not a published figure.
pub(super) const DEFAULT_REPAIR: SimDuration = SimDuration::from_secs(24 * 3600);

impl<'a> Builder<'a> {
    /// Every Timeline's changes, in the order they apply (time, then document order), with
    /// their nodes resolved. Needs the nodes built.
    pub(super) fn build_timeline(&mut self) -> Result<(), ScenarioError> {
        let timelines = std::mem::take(&mut self.timelines);
        let mut changes: Vec<Change> = Vec::new();
        // The Cohorts a change brings: in the world from the start, empty until then.
        if let Some(plan) = self.epoch_plan {
            for name in &plan.late_cohorts {
                if !self.world.cohorts.iter().any(|c| &c.name == name) {
                    self.world.cohorts.push(super::epochs::empty_cohort(name));
                }
            }
        }
        for p in &timelines {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            self.remember(src, "", &name)?;
            if p.obj.spec.changes.is_empty() {
                return Err(err_obj(
                    src,
                    format!("Timeline {name} has no spec.changes: expected at least one change"),
                ));
            }
            for (i, c) in p.obj.spec.changes.iter().enumerate() {
                changes.push(self.change(src, c, (src.order, i))?);
            }
        }
        // A stable sort: equal times keep document order.
        changes.sort_by_key(|c| c.at);
        self.world.timeline = changes;
        Ok(())
    }

    fn change(
        &self,
        src: &ObjectText<'_>,
        c: &Spanned<wire::TimelineChange>,
        key: (usize, usize),
    ) -> Result<Change, ScenarioError> {
        let at = match &c.value.at {
            Some(at) => {
                kueuesim_model::SimTime::ZERO
                    + kueuesim_model::limits::parse_offset_days(at.value.trim())
                        .map_err(|e| err_at(src, at, e))?
            }
            None => {
                return Err(err_at(
                    src,
                    c,
                    "a change has no `at`: expected an offset from the start such as 10d or 2h30m",
                ));
            }
        };
        let mut nodes = Vec::new();
        // What its `set` and `patch` do (worked out before the build): the epoch from this
        // change on, the ClusterQueues it updates, the nodes it adds and takes away (first,
        // before the change's own node operations).
        let mut epoch = None;
        let mut updated = Vec::new();
        if let Some(plan) = self.epoch_plan.and_then(|p| p.changes.get(&key)) {
            epoch = Some(plan.epoch);
            for name in &plan.updated {
                let i = self
                    .world
                    .cluster_queues
                    .iter()
                    .position(|q| &q.name == name)
                    .expect("an epoch has the start's ClusterQueues");
                updated.push(kueuesim_model::ClusterQueueId::from_index(i));
            }
            let ids = |names: &[String]| -> Vec<NodeId> {
                let mut v: Vec<NodeId> = names
                    .iter()
                    .map(|n| NodeId::from_index(self.index.nodes[n.as_str()]))
                    .collect();
                v.sort();
                v
            };
            if !plan.added.is_empty() {
                nodes.push((NodeOp::Add, ids(&plan.added)));
            }
            if !plan.removed.is_empty() {
                nodes.push((NodeOp::Remove, ids(&plan.removed)));
            }
        }
        if let Some(n) = &c.value.nodes {
            let ops = [
                (NodeOp::Cordon, &n.value.cordon),
                (NodeOp::Uncordon, &n.value.uncordon),
                (NodeOp::Drain, &n.value.drain),
                (NodeOp::Remove, &n.value.remove),
            ];
            for (op, targets) in ops {
                if let Some(t) = targets {
                    nodes.push((op, self.node_targets(src, t, op)?));
                }
            }
        }
        if nodes.is_empty() && epoch.is_none() {
            return Err(err_at(
                src,
                c,
                "a change does nothing: expected set, patch or nodes (cordon, uncordon, drain, remove)",
            ));
        }
        Ok(Change {
            at,
            epoch,
            updated,
            nodes,
            source: pos_of(src, c).to_string(),
        })
    }

    /// The nodes a node operation names: a list of names, or a label selector.
    fn node_targets(
        &self,
        src: &ObjectText<'_>,
        t: &Spanned<wire::NodeTargets>,
        op: NodeOp,
    ) -> Result<Vec<NodeId>, ScenarioError> {
        match &t.value {
            wire::NodeTargets::Names(names) => {
                if names.is_empty() {
                    return Err(err_at(
                        src,
                        t,
                        format!(
                            "nodes.{} lists no node: expected node names or a selector",
                            op.as_str()
                        ),
                    ));
                }
                let mut out = Vec::with_capacity(names.len());
                for n in names {
                    match self.index.nodes.get(n.value.as_str()) {
                        Some(&i) => out.push(NodeId::from_index(i)),
                        None => {
                            return Err(err_at(
                                src,
                                n,
                                format!(
                                    "node {} does not exist: expected the name of a Node or of a NodePool's node",
                                    kueuesim_model::names::shown(&n.value)
                                ),
                            ));
                        }
                    }
                }
                out.sort();
                out.dedup();
                Ok(out)
            }
            wire::NodeTargets::Selector(sel) => {
                let sel = selector(src, sel)?;
                let out: Vec<NodeId> = (0..self.world.nodes.len())
                    .map(NodeId::from_index)
                    .filter(|&n| sel.matches(&self.world.node(n).labels))
                    .collect();
                if out.is_empty() {
                    return Err(err_at(
                        src,
                        t,
                        format!(
                            "the selector of nodes.{} matches no node: expected a selector of some nodes' labels",
                            op.as_str()
                        ),
                    ));
                }
                Ok(out)
            }
        }
    }

    /// The Simulation's `spec.failures`, with their nodes resolved. Needs the nodes built.
    pub(super) fn build_failures(&mut self) -> Result<(), ScenarioError> {
        let Some(sim) = &self.simulation else {
            return Ok(());
        };
        let src = sim.src;
        let Some(f) = &sim.obj.spec.failures else {
            return Ok(());
        };
        if self.world.nodes.is_empty() {
            return Err(err_at(
                src,
                f,
                "spec.failures needs nodes (Node objects or a NodePool): nodes fail, quota does not",
            ));
        }
        let mut cfg = FailureConfig::default();
        if let Some(n) = &f.value.nodes {
            let nodes = self.failure_nodes(src, n, false)?;
            cfg.nodes.push(NodeFailures {
                nodes,
                mtbf: self.dist_or(src, n.value.mtbf.as_ref(), DEFAULT_NODE_MTBF, "mtbf")?,
                repair: self.dist_or(src, n.value.repair.as_ref(), DEFAULT_REPAIR, "repair")?,
            });
        }
        if let Some(g) = &f.value.gpus {
            // Volcano's vGPU book keeps devices of its own, which failures do not reach yet.
            if self.world.config.volcano.deviceshare.is_some() {
                return Err(err_at(
                    src,
                    g,
                    "spec.failures.gpus with Volcano vGPU devices is not simulated yet: expected node failures alone (spec.failures.nodes)",
                ));
            }
            let nodes = self.failure_nodes(src, g, true)?;
            cfg.gpus.push(GpuFailures {
                nodes,
                mtbf: self.dist_or(src, g.value.mtbf.as_ref(), DEFAULT_GPU_MTBF, "mtbf")?,
                repair: self.dist_or(src, g.value.repair.as_ref(), DEFAULT_REPAIR, "repair")?,
            });
        }
        self.world.config.failures = cfg;
        Ok(())
    }

    /// The nodes a failure setting applies to: every node, or those of its `pools` and its
    /// `selector` (both: the pools' nodes the selector matches); for GPU failures, only nodes
    /// with GPUs.
    fn failure_nodes(
        &self,
        src: &ObjectText<'_>,
        s: &Spanned<wire::NodeFailureSettings>,
        gpus: bool,
    ) -> Result<Vec<NodeId>, ScenarioError> {
        let mut keep = vec![s.value.pools.is_empty(); self.world.nodes.len()];
        for pool in &s.value.pools {
            let Some(range) = self.pool_nodes.get(pool.value.as_str()) else {
                let known: Vec<&str> = self.pool_nodes.keys().map(String::as_str).collect();
                return Err(err_at(
                    src,
                    pool,
                    format!(
                        "NodePool {} does not exist: expected one of {}",
                        kueuesim_model::names::shown(&pool.value),
                        if known.is_empty() {
                            "the NodePools (there are none)".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            };
            for k in range.clone() {
                keep[k] = true;
            }
        }
        if let Some(sel) = &s.value.selector {
            let sel = selector(src, &sel.value)?;
            for (k, node) in self.world.nodes.iter().enumerate() {
                keep[k] &= sel.matches(&node.labels);
            }
        }
        let gpu = self.world.resources.lookup(kueuesim_model::resources::GPU);
        let out: Vec<NodeId> = keep
            .iter()
            .enumerate()
            .filter(|&(k, &kept)| {
                kept && (!gpus
                    || gpu.is_some_and(|g| {
                        self.world.nodes[k]
                            .allocatable
                            .get(g.index())
                            .copied()
                            .unwrap_or(0)
                            > 0
                    }))
            })
            .map(|(k, _)| NodeId::from_index(k))
            .collect();
        if out.is_empty() {
            return Err(err_at(
                src,
                s,
                if gpus {
                    "spec.failures.gpus applies to no node with GPUs: expected pools or a selector of nodes with nvidia.com/gpu"
                } else {
                    "spec.failures.nodes applies to no node: expected pools or a selector of some nodes"
                },
            ));
        }
        Ok(out)
    }

    /// A failure distribution: a duration alone is an exponential's mean; absent, the default.
    fn dist_or(
        &self,
        src: &ObjectText<'_>,
        d: Option<&Spanned<wire::DistOrDuration>>,
        default: SimDuration,
        what: &str,
    ) -> Result<DurationDist, ScenarioError> {
        let Some(d) = d else {
            return Ok(DurationDist::Exponential {
                mean_ms: default.millis() as f64,
            });
        };
        match &d.value {
            wire::DistOrDuration::Duration(text) => {
                let v = kueuesim_model::limits::parse_duration(text.trim())
                    .map_err(|e| err_at(src, d, e))?;
                if v <= SimDuration::ZERO {
                    return Err(err_at(
                        src,
                        d,
                        format!("{what} {text:?}: expected a positive duration such as 8000h"),
                    ));
                }
                Ok(DurationDist::Exponential {
                    mean_ms: v.millis() as f64,
                })
            }
            wire::DistOrDuration::Dist(g) => {
                let dist = crate::generator::duration_dist(src, g, d, what)?;
                let out = match dist {
                    crate::generator::Dist::Fixed(v) => DurationDist::Fixed(v),
                    crate::generator::Dist::Uniform { min, max } => {
                        DurationDist::Uniform { min, max }
                    }
                    crate::generator::Dist::LogNormal {
                        mu,
                        sigma,
                        min,
                        max,
                    } => DurationDist::LogNormal {
                        mu,
                        sigma,
                        min,
                        max,
                    },
                    crate::generator::Dist::Empirical(v) => DurationDist::Empirical(v),
                };
                // A time between failures of 0 would fail a node again at once, forever.
                if what == "mtbf" && out.mean_ms() <= 0.0 {
                    return Err(err_at(
                        src,
                        d,
                        "mtbf: expected a distribution with a positive mean",
                    ));
                }
                Ok(out)
            }
        }
    }
}
