//! Resolution of a parsed `WorkloadGenerator` against the loaded world: every value checked
//! and parsed into Kueue units (distributions, CSV columns of values or inter-arrival times),
//! every name (LocalQueue, priority class, scheduler, topology) resolved once.

use std::collections::BTreeMap;
use std::path::Path;

use serde_saphyr::Spanned;

use kueuesim_model::limits;
use kueuesim_model::{
    KaiTopologyConstraint, LocalQueueId, NetworkTopology, SchedulerKind, SimDuration, SimTime,
    TierRef, TopologyRequest, World,
};

use super::rng::{fnv1a, splitmix64};
use super::{Arrivals, Dist, GeneratorSettings, Mix, QueueChoice, TopologyChoice};
use crate::convert::core::{err_at, err_obj};
use crate::convert::names;
use crate::error::{Pos, ScenarioError};
use crate::source::ObjectText;
use crate::wire;

/// The most pods a generated workload may have (`limits::MAX_PODS_PER_WORKLOAD`).
const MAX_PODS: i64 = limits::MAX_PODS_PER_WORKLOAD;
/// The longest duration a generator may draw or space arrivals by (`limits::MAX_DURATION`).
const MAX_DURATION_MS: i64 = limits::MAX_DURATION.millis();
/// No generated workload arrives later than this after the start (`limits::MAX_TIME`).
pub(crate) const MAX_ARRIVAL_MS: i64 = limits::MAX_TIME.millis();

/// What a distribution's values are.
#[derive(Clone, Copy)]
enum Unit<'r> {
    /// A positive count (pods).
    Count,
    /// A quantity of this resource, in Kueue units.
    Quantity(&'r str),
    /// A duration (Go syntax; a bare number in `unit`, default seconds, in a CSV).
    Duration,
}

fn parse_value(unit: Unit<'_>, text: &str, csv_unit_ms: Option<f64>) -> Result<i64, String> {
    let t = text.trim();
    match unit {
        Unit::Count => match t.parse::<i64>() {
            Ok(v) if (1..=MAX_PODS).contains(&v) => Ok(v),
            _ => Err(format!("{t:?}: expected an integer from 1 to {MAX_PODS}")),
        },
        Unit::Quantity(r) => {
            let q = kueuesim_model::Quantity::parse(t).map_err(|e| format!("{t:?}: {e}"))?;
            let v = kueuesim_model::resource_amount(r, &q).map_err(|e| format!("{r}: {e}"))?;
            if v < 0 {
                return Err(format!("{t:?}: expected a non-negative quantity"));
            }
            limits::check_quantity(r, v)
        }
        Unit::Duration => {
            let too_long = || {
                format!(
                    "{t:?} is too long: expected at most {} ({} years)",
                    limits::MAX_DURATION,
                    MAX_DURATION_MS / (365 * 24 * 3_600_000)
                )
            };
            if let (Some(ms), Ok(n)) = (csv_unit_ms, t.parse::<f64>()) {
                if n.is_finite() && n >= 0.0 {
                    let v = (n * ms).round();
                    return if v <= MAX_DURATION_MS as f64 {
                        Ok(v as i64)
                    } else {
                        Err(too_long())
                    };
                }
                return Err(format!("{t:?}: expected a non-negative number"));
            }
            SimDuration::parse(t)
                .map(|d| d.millis())
                .map_err(|e| format!("{t:?}: {e}"))
                .and_then(|v| {
                    if v < 0 {
                        Err(format!("{t:?}: expected a non-negative duration"))
                    } else if v > MAX_DURATION_MS {
                        Err(too_long())
                    } else {
                        Ok(v)
                    }
                })
        }
    }
}

fn value(src: &ObjectText<'_>, unit: Unit<'_>, s: &wire::S) -> Result<i64, ScenarioError> {
    parse_value(unit, &s.value, None).map_err(|e| err_at(src, s, e))
}

fn number(src: &ObjectText<'_>, s: &wire::S, what: &str) -> Result<f64, ScenarioError> {
    match s.value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(err_at(
            src,
            s,
            format!("{what} {:?}: expected a non-negative number", s.value),
        )),
    }
}

/// Milliseconds per unit of a CSV column of bare numbers.
fn csv_unit(src: &ObjectText<'_>, c: &wire::GenCsvColumn) -> Result<f64, ScenarioError> {
    Ok(match c.unit.as_ref() {
        None => 1000.0,
        Some(u) => match u.value.trim() {
            "ms" => 1.0,
            "s" => 1000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => {
                return Err(err_at(
                    src,
                    u,
                    format!("unit {:?}: expected one of ms, s, m, h", u.value),
                ));
            }
        },
    })
}

/// The values of one CSV column (header row names the columns; no quoting).
fn csv_column(
    src: &ObjectText<'_>,
    c: &wire::GenCsvColumn,
    unit: Unit<'_>,
    unit_ms: Option<f64>,
) -> Result<Vec<i64>, ScenarioError> {
    let base = Path::new(&src.file.name)
        .parent()
        .unwrap_or_else(|| Path::new(""));
    let path = base.join(c.path.value.trim());
    let shown = path.display().to_string();
    // At most `limits::MAX_INPUT_BYTES`, as every input file.
    let text = crate::source::read_text(&path, &shown).map_err(|e| match e {
        ScenarioError::Io { source, .. } => {
            err_at(src, &c.path, format!("cannot read CSV {shown}: {source}"))
        }
        e => e,
    })?;
    let mut lines = text.lines().enumerate();
    let Some((_, header)) = lines.next() else {
        return Err(err_at(
            src,
            &c.path,
            format!("CSV {shown} is empty: expected a header row"),
        ));
    };
    let col = header
        .split(',')
        .position(|h| h.trim() == c.column.value.trim())
        .ok_or_else(|| {
            // The header's cells are not listed: a file without the column may be any
            // file, and its text is not shown (as `ScenarioError::at_unframed`).
            err_at(
                src,
                &c.column,
                format!(
                    "CSV {shown} has no column {:?} in its header (line 1): expected a CSV file whose header names it",
                    c.column.value,
                ),
            )
        })?;
    let mut out = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let mut column = 1u64;
        let mut field = None;
        for (j, f) in line.split(',').enumerate() {
            if j == col {
                field = Some(f);
                break;
            }
            column += f.chars().count() as u64 + 1;
        }
        let pos = Pos {
            file: shown.clone(),
            line: i as u64 + 1,
            column,
        };
        let Some(f) = field else {
            return Err(ScenarioError::at(
                pos,
                format!("row has no column {:?}", c.column.value),
                &text,
            ));
        };
        out.push(parse_value(unit, f, unit_ms).map_err(|e| ScenarioError::at(pos, e, &text))?);
    }
    if out.is_empty() {
        return Err(err_at(
            src,
            &c.path,
            format!("CSV {shown} has no rows: expected at least one value"),
        ));
    }
    Ok(out)
}

/// A duration distribution written `at` (a Simulation's `spec.failures`), in milliseconds.
pub(crate) fn duration_dist<T>(
    src: &ObjectText<'_>,
    g: &wire::GenDist,
    at: &Spanned<T>,
    what: &str,
) -> Result<Dist, ScenarioError> {
    dist(src, g, at, Unit::Duration, what)
}

fn dist<T>(
    src: &ObjectText<'_>,
    g: &wire::GenDist,
    d: &Spanned<T>,
    unit: Unit<'_>,
    what: &str,
) -> Result<Dist, ScenarioError> {
    let set = [
        g.fixed.is_some(),
        g.uniform.is_some(),
        g.log_normal.is_some(),
        g.empirical.is_some(),
    ];
    if set.iter().filter(|&&b| b).count() != 1 {
        return Err(err_at(
            src,
            d,
            format!("{what}: expected exactly one of fixed, uniform, logNormal, empirical"),
        ));
    }
    if let Some(f) = &g.fixed {
        return Ok(Dist::Fixed(value(src, unit, f)?));
    }
    if let Some(u) = &g.uniform {
        let (min, max) = (value(src, unit, &u.min)?, value(src, unit, &u.max)?);
        if min > max {
            return Err(err_at(
                src,
                &u.max,
                format!("{what}: uniform max is below min: expected min ≤ max"),
            ));
        }
        return Ok(Dist::Uniform { min, max });
    }
    if let Some(l) = &g.log_normal {
        let median = value(src, unit, &l.median)?;
        if median <= 0 {
            return Err(err_at(
                src,
                &l.median,
                format!("{what}: logNormal median must be positive"),
            ));
        }
        let sigma = number(src, &l.sigma, "sigma")?;
        if sigma > limits::MAX_SIGMA {
            return Err(err_at(
                src,
                &l.sigma,
                format!(
                    "sigma {}: expected a number from 0 to {}",
                    l.sigma.value.trim(),
                    limits::MAX_SIGMA
                ),
            ));
        }
        let min = match &l.min {
            Some(m) => value(src, unit, m)?,
            None => match unit {
                Unit::Count => 1,
                _ => 0,
            },
        };
        // No max: the largest value the unit allows, so a draw is always a valid one.
        let max = match &l.max {
            Some(m) => value(src, unit, m)?,
            None => match unit {
                Unit::Count => MAX_PODS,
                Unit::Duration => MAX_DURATION_MS,
                Unit::Quantity(_) => limits::MAX_QUANTITY,
            },
        };
        if min > max {
            let at = l.max.as_ref().unwrap_or(&l.median);
            return Err(err_at(
                src,
                at,
                format!("{what}: logNormal max is below min: expected min ≤ max"),
            ));
        }
        return Ok(Dist::LogNormal {
            mu: (median as f64).ln(),
            sigma,
            min,
            max,
        });
    }
    let e = g.empirical.as_ref().expect("one is set");
    let unit_ms = match unit {
        Unit::Duration => Some(csv_unit(src, e)?),
        _ => {
            if let Some(u) = &e.unit {
                return Err(err_at(
                    src,
                    u,
                    format!("{what}: unit applies only to durations"),
                ));
            }
            None
        }
    };
    Ok(Dist::Empirical(csv_column(src, e, unit, unit_ms)?.into()))
}

fn weight(src: &ObjectText<'_>, w: Option<&wire::S>) -> Result<f64, ScenarioError> {
    match w {
        None => Ok(1.0),
        Some(s) => number(src, s, "weight"),
    }
}

fn mix<T>(
    src: &ObjectText<'_>,
    items: Vec<(T, f64)>,
    at: &Spanned<impl Sized>,
    what: &str,
) -> Result<Mix<T>, ScenarioError> {
    let mut cumulative = Vec::with_capacity(items.len());
    let mut total = 0.0;
    let mut out = Vec::with_capacity(items.len());
    for (t, w) in items {
        total += w;
        cumulative.push(total);
        out.push(t);
    }
    if total <= 0.0 {
        return Err(err_at(
            src,
            at,
            format!("{what}: the weights sum to 0: expected a positive weight"),
        ));
    }
    Ok(Mix {
        items: out,
        cumulative,
    })
}

/// Resolves a parsed `WorkloadGenerator` against the loaded world (queues, priority classes,
/// schedulers; resources are interned). `seed` is the Simulation seed.
pub(crate) fn resolve(
    src: &ObjectText<'_>,
    g: &wire::WorkloadGenerator,
    world: &mut World,
    seed: u64,
) -> Result<GeneratorSettings, ScenarioError> {
    let name = match &g.metadata.name {
        Some(n) if !n.value.is_empty() => n.value.clone(),
        _ => {
            return Err(err_obj(
                src,
                "WorkloadGenerator has no metadata.name: expected a name",
            ));
        }
    };
    let namespace = g
        .metadata
        .namespace
        .as_ref()
        .map_or_else(|| "default".to_string(), |n| n.value.clone());
    let spec = &g.spec;

    // Arrivals.
    let Some(arrival) = &spec.arrival else {
        return Err(err_obj(
            src,
            "WorkloadGenerator has no spec.arrival: expected interval, rate or interArrival",
        ));
    };
    let a = &arrival.value;
    let start = match &a.start {
        Some(s) => SimTime::from_millis(value(src, Unit::Duration, s)?),
        None => SimTime::ZERO,
    };
    let arrivals = match (&a.interval, &a.rate, &a.inter_arrival) {
        (Some(i), None, None) => {
            let every = value(src, Unit::Duration, i)?;
            if every == 0 && spec.count.is_none() {
                // Every arrival at the same time until `until`: never ends.
                return Err(err_at(
                    src,
                    i,
                    "interval 0s without a count: expected a positive interval, or a count",
                ));
            }
            Arrivals::Interval { every }
        }
        (None, Some(r), None) => {
            // `2.5` (per second) or `<n>/s`, `<n>/m`, `<n>/h`.
            let (n, per_ms) = match r.value.trim().split_once('/') {
                None => (r.value.trim(), 1000.0),
                Some((n, "s")) => (n.trim(), 1000.0),
                Some((n, "m")) => (n.trim(), 60_000.0),
                Some((n, "h")) => (n.trim(), 3_600_000.0),
                Some(_) => {
                    return Err(err_at(
                        src,
                        r,
                        format!(
                            "rate {:?}: expected arrivals per second, or <n>/s, <n>/m, <n>/h",
                            r.value
                        ),
                    ));
                }
            };
            match n.parse::<f64>() {
                Ok(v)
                    if v.is_finite()
                        && v > 0.0
                        && per_ms / v <= MAX_DURATION_MS as f64
                        && 1000.0 * v / per_ms <= limits::MAX_RATE_PER_SECOND =>
                {
                    Arrivals::Poisson {
                        mean_gap_ms: per_ms / v,
                    }
                }
                _ => {
                    return Err(err_at(
                        src,
                        r,
                        format!(
                            "rate {:?}: expected a number of arrivals from one per {} to {} per second",
                            r.value,
                            limits::MAX_DURATION,
                            limits::MAX_RATE_PER_SECOND
                        ),
                    ));
                }
            }
        }
        (None, None, Some(c)) => {
            let unit_ms = csv_unit(src, c)?;
            Arrivals::Trace(csv_column(src, c, Unit::Duration, Some(unit_ms))?.into())
        }
        _ => {
            return Err(err_at(
                src,
                arrival,
                "spec.arrival: expected exactly one of interval, rate, interArrival",
            ));
        }
    };
    let count = match &spec.count {
        None => None,
        Some(c) if (1..=limits::MAX_WORKLOADS).contains(&c.value) => Some(c.value as u64),
        Some(c) => {
            return Err(err_at(
                src,
                c,
                format!(
                    "count {}: expected an integer from 1 to {}",
                    c.value,
                    limits::MAX_WORKLOADS
                ),
            ));
        }
    };
    // Workload names are `<generator>-<index>` (`stream::workload_name`, the index counting
    // over every copy): with the highest index the generator can reach, still a DNS-1123
    // subdomain.
    if let Some(n) = &g.metadata.name {
        let copies = if spec.per_local_queue {
            world.local_queues.len().max(1) as u64
        } else {
            1
        };
        let per_copy = count.unwrap_or(limits::MAX_WORKLOADS as u64);
        let last = per_copy.saturating_mul(copies) - 1;
        names::generated(
            src,
            n,
            "workload names",
            &format!("{name}-{last}"),
            kueuesim_model::names::dns1123_subdomain,
        )?;
    }
    let until = match &spec.until {
        None => None,
        Some(u) => Some(SimTime::from_millis(value(src, Unit::Duration, u)?)),
    };
    if count.is_none() && until.is_none() && !matches!(arrivals, Arrivals::Trace(_)) {
        return Err(err_obj(
            src,
            format!(
                "WorkloadGenerator {name} has neither spec.count nor spec.until: expected at least one, so it ends"
            ),
        ));
    }

    // Sizes and durations.
    let pods = match &spec.pods {
        Some(d) => dist(src, &d.value, d, Unit::Count, "pods")?,
        None => Dist::Fixed(1),
    };
    names::resource_names(src, &spec.requests)?;
    let mut requests = Vec::new();
    for (r, d) in &spec.requests {
        let id = world.resources.intern(r);
        requests.push((id, dist(src, &d.value, d, Unit::Quantity(r), r)?));
    }
    requests.sort_by_key(|(r, _)| *r);
    let Some(duration) = &spec.duration else {
        return Err(err_obj(
            src,
            format!(
                "WorkloadGenerator {name} has no spec.duration: expected how long workloads run"
            ),
        ));
    };
    let duration = dist(src, &duration.value, duration, Unit::Duration, "duration")?;

    // Queues, found by (namespace, name) in a map made once: a mix of ten thousand
    // LocalQueues is resolved in ten thousand lookups, not a scan of them all for each.
    let mut queues = Vec::new();
    let mut by_name: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    if !spec.queues.is_empty() {
        for (i, l) in world.local_queues.iter().enumerate() {
            by_name
                .entry((l.namespace.as_str(), l.name.as_str()))
                .or_insert(i);
        }
    }
    for q in &spec.queues {
        let Some(qn) = &q.value.name else {
            return Err(err_at(src, q, "queue: expected a LocalQueue name"));
        };
        let ns = q
            .value
            .namespace
            .as_ref()
            .map_or_else(|| namespace.clone(), |n| n.value.clone());
        let Some(&id) = by_name.get(&(ns.as_str(), qn.value.as_str())) else {
            return Err(err_at(
                src,
                qn,
                format!(
                    "LocalQueue {ns}/{} does not exist: expected a LocalQueue defined in the input",
                    qn.value
                ),
            ));
        };
        queues.push((
            QueueChoice {
                id: Some(LocalQueueId::from_index(id)),
                name: qn.value.clone(),
                namespace: ns,
            },
            weight(src, q.value.weight.as_ref())?,
        ));
    }
    let queues = if !queues.is_empty() {
        mix(src, queues, &spec.queues[0], "queues")?
    } else if spec.per_local_queue {
        // Every LocalQueue of the input, in input order.
        if world.local_queues.is_empty() {
            return Err(err_obj(
                src,
                "perLocalQueue: the input has no LocalQueue: expected at least one",
            ));
        }
        Mix {
            items: world
                .local_queues
                .iter()
                .enumerate()
                .map(|(i, l)| QueueChoice {
                    id: Some(LocalQueueId::from_index(i)),
                    name: l.name.clone(),
                    namespace: l.namespace.clone(),
                })
                .collect(),
            cumulative: (1..=world.local_queues.len()).map(|i| i as f64).collect(),
        }
    } else {
        // No queue: workloads not managed by Kueue, in the generator's namespace.
        Mix::one(QueueChoice {
            id: None,
            name: String::new(),
            namespace: namespace.clone(),
        })
    };

    // Priorities.
    let mut priorities = Vec::new();
    for p in &spec.priorities {
        let item = match (&p.value.class_name, &p.value.value) {
            (Some(c), None) => {
                let pc = world
                    .priority_classes
                    .iter()
                    .find(|x| !x.is_pod_priority_class && x.name == c.value)
                    .or_else(|| world.priority_classes.iter().find(|x| x.name == c.value));
                match pc {
                    Some(pc) => (Some(pc.name.clone()), pc.value),
                    None => {
                        return Err(err_at(
                            src,
                            c,
                            format!(
                                "priority class {:?} does not exist: expected a WorkloadPriorityClass or PriorityClass of the input",
                                c.value
                            ),
                        ));
                    }
                }
            }
            (None, Some(v)) if i32::try_from(v.value).is_ok() => (None, v.value as i32),
            _ => {
                return Err(err_at(
                    src,
                    p,
                    "priority: expected exactly one of className, value (a 32-bit integer)",
                ));
            }
        };
        priorities.push((item, weight(src, p.value.weight.as_ref())?));
    }
    let priorities = if priorities.is_empty() {
        Mix::one((None, 0))
    } else {
        mix(src, priorities, &spec.priorities[0], "priorities")?
    };

    // Schedulers.
    let mut schedulers = Vec::new();
    for s in &spec.scheduler_names {
        let Some(n) = &s.value.name else {
            return Err(err_at(src, s, "schedulerNames: expected a name"));
        };
        let Some(kind) = world.config.scheduler(&n.value) else {
            let known: Vec<&str> = world
                .config
                .schedulers
                .iter()
                .map(|(n, _)| n.as_str())
                .collect();
            return Err(err_at(
                src,
                n,
                format!(
                    "schedulerName {:?} is run by no scheduler: expected one of {} (map more names in Simulation spec.schedulers)",
                    n.value,
                    known.join(", ")
                ),
            ));
        };
        schedulers.push((
            (n.value.clone(), kind),
            weight(src, s.value.weight.as_ref())?,
        ));
    }
    let schedulers = if schedulers.is_empty() {
        let kind = world
            .config
            .scheduler("default-scheduler")
            .unwrap_or(SchedulerKind::Kube);
        Mix::one(("default-scheduler".to_string(), kind))
    } else {
        mix(src, schedulers, &spec.scheduler_names[0], "schedulerNames")?
    };

    // Topology requests.
    let mut topologies = Vec::new();
    for t in &spec.topologies {
        let mut choice = TopologyChoice::default();
        if let Some(k) = &t.value.kueue {
            choice.kueue_slice = crate::convert::core::topology_slice(
                src,
                k.slice_required.as_ref(),
                k.slice_size.as_ref().map(|s| {
                    (
                        crate::convert::core::pos_of(src, s),
                        Some(s.value),
                        s.value.to_string(),
                    )
                }),
                ("sliceRequired", "sliceSize"),
            )?;
            let slice_only = choice.kueue_slice.is_some();
            choice.kueue = match (&k.required, &k.preferred, k.unconstrained) {
                (Some(r), None, None | Some(false)) => {
                    Some(TopologyRequest::Required(r.value.trim().to_string()))
                }
                (None, Some(p), None | Some(false)) => {
                    Some(TopologyRequest::Preferred(p.value.trim().to_string()))
                }
                (None, None, Some(true)) => Some(TopologyRequest::Unconstrained),
                // A slice-only request: TAS, unconstrained at the pod-set level
                // (`isSliceTopologyOnlyRequest`).
                (None, None, None | Some(false)) if slice_only => {
                    Some(TopologyRequest::Unconstrained)
                }
                _ => {
                    return Err(err_at(
                        src,
                        t,
                        "topologies kueue: expected exactly one of required, preferred, unconstrained: true, or a slice (sliceRequired with sliceSize)",
                    ));
                }
            };
        }
        if let Some(v) = &t.value.volcano {
            let hard = match v.mode.as_ref().map(|m| m.value.trim()) {
                None | Some("hard") => true,
                Some("soft") => false,
                Some(_) => {
                    let m = v.mode.as_ref().expect("some");
                    return Err(err_at(
                        src,
                        m,
                        format!("volcano mode {:?}: expected hard or soft", m.value),
                    ));
                }
            };
            let highest_tier = match (&v.highest_tier, &v.highest_tier_name) {
                (Some(n), None) => {
                    Some(TierRef::Number(i32::try_from(n.value).map_err(|_| {
                        err_at(src, n, "highestTier: expected a 32-bit integer")
                    })?))
                }
                (None, Some(n)) => Some(TierRef::Name(n.value.trim().to_string())),
                (None, None) => None,
                (Some(n), Some(_)) => {
                    return Err(err_at(
                        src,
                        n,
                        "volcano: expected at most one of highestTier, highestTierName",
                    ));
                }
            };
            choice.volcano = Some(NetworkTopology { hard, highest_tier });
        }
        if let Some(k) = &t.value.kai {
            let Some(topology) = &k.topology else {
                return Err(err_at(
                    src,
                    t,
                    "topologies kai: expected topology (the KAI Topology's name)",
                ));
            };
            choice.kai = Some(KaiTopologyConstraint {
                topology: topology.value.trim().to_string(),
                required: k.required.as_ref().map(|s| s.value.trim().to_string()),
                preferred: k.preferred.as_ref().map(|s| s.value.trim().to_string()),
            });
        }
        topologies.push((choice, weight(src, t.value.weight.as_ref())?));
    }
    let topologies = if topologies.is_empty() {
        Mix::one(TopologyChoice::default())
    } else {
        mix(src, topologies, &spec.topologies[0], "topologies")?
    };

    let resilience = kueuesim_model::Resilience {
        checkpoint_interval: spec
            .checkpoint_interval
            .as_ref()
            .map(|c| crate::convert::core::checkpoint_interval(src, c))
            .transpose()?,
        restart_cost: spec
            .restart_cost
            .as_ref()
            .map(|c| crate::convert::core::duration_field(src, c))
            .transpose()?
            .unwrap_or(SimDuration::ZERO),
        ..Default::default()
    };
    let mut s = seed ^ fnv1a(&name);
    Ok(GeneratorSettings {
        resilience,
        seed: splitmix64(&mut s),
        name,
        start,
        arrivals,
        count,
        until,
        pods,
        requests,
        duration,
        queues,
        per_local_queue: spec.per_local_queue,
        priorities,
        schedulers,
        topologies,
    })
}
