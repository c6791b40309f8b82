//! Serving objects that scale: a Deployment's, StatefulSet's or LeaderWorkerSet's replicas
//! following `kueuesim.io/replicas` (a step schedule), or a load (`kueuesim.io/load-trace`, a
//! CSV of time and load; or `kueuesim.io/load`, the same written inline) with
//! `kueuesim.io/load-per-replica`, which a HorizontalPodAutoscaler follows
//! (`kueuesim_model::serving::hpa_schedule`).

use std::path::Path;

use kueuesim_model::serving::{
    Autoscaler, ServingObject, ServingRef, hpa_schedule, parse_steps, steps_from,
};
use kueuesim_model::{ServingKind, SimDuration, SimTime, Workload, limits};

use crate::convert::core::{Builder, DURATION_ANNOTATION, err_at, err_obj};
use crate::error::{Pos, ScenarioError};
use crate::source::ObjectText;
use serde_saphyr::Spanned;

use crate::wire;

/// A step schedule of the replicas: `"<offset>=<n>,…"`.
pub(super) const REPLICAS_ANNOTATION: &str = "kueuesim.io/replicas";
/// A CSV file (relative to the YAML file) with columns `time` and `load`.
pub(super) const LOAD_TRACE_ANNOTATION: &str = "kueuesim.io/load-trace";
/// A load series written inline: `"<offset>=<load>,…"`.
pub(super) const LOAD_ANNOTATION: &str = "kueuesim.io/load";
/// The HPA's target: load per replica (an `AverageValue` target).
pub(super) const LOAD_PER_REPLICA_ANNOTATION: &str = "kueuesim.io/load-per-replica";
/// The HPA's `minReplicas` (default 1).
pub(super) const MIN_REPLICAS_ANNOTATION: &str = "kueuesim.io/min-replicas";
/// The HPA's `maxReplicas` (default `limits::MAX_REPLICAS`).
pub(super) const MAX_REPLICAS_ANNOTATION: &str = "kueuesim.io/max-replicas";
/// `behavior.scaleDown.stabilizationWindowSeconds` as a duration (default 5m).
pub(super) const SCALE_DOWN_ANNOTATION: &str = "kueuesim.io/scale-down-stabilization";
/// `behavior.scaleUp.stabilizationWindowSeconds` as a duration (default 0s).
pub(super) const SCALE_UP_ANNOTATION: &str = "kueuesim.io/scale-up-stabilization";

/// How a serving object scales: its replicas over time, from its arrival.
pub(super) struct Scaling {
    pub(super) steps: Vec<(SimTime, u32)>,
}

impl Scaling {
    /// The `World::serving` entry.
    pub(super) fn object(self, kind: ServingKind, namespace: &str, name: &str) -> ServingObject {
        ServingObject {
            kind,
            namespace: namespace.to_string(),
            name: name.to_string(),
            steps: self.steps,
        }
    }
}

/// Makes `w` replica `ordinal` of serving object `object`, standing for `replicas` replicas,
/// created at the scale-up at `at` (a StatefulSet's pod group, taken off hold, keeps its
/// creation time: `keep_created`). Serving pods run until a scale-down deletes them.
pub(super) fn scaled_replica(
    w: &mut Workload,
    at: SimTime,
    object: u32,
    ordinal: u32,
    replicas: u32,
    keep_created: bool,
) {
    if at > w.arrival {
        w.arrival = at;
        if !keep_created {
            w.created_at = at;
        }
    }
    w.duration = None;
    w.serving = Some(ServingRef {
        object,
        ordinal,
        replicas,
    });
}

impl Builder<'_> {
    /// The scaling of a serving object from its annotations; None when it has none (its
    /// `spec.replicas` stands as written).
    pub(super) fn serving_scaling(
        &mut self,
        src: &ObjectText<'_>,
        meta: &wire::ObjectMeta,
        kind: ServingKind,
        spec_replicas: Option<&Spanned<i64>>,
    ) -> Result<Option<Scaling>, ScenarioError> {
        let ann = |k: &str| meta.annotations.get(k);
        let schedule = ann(REPLICAS_ANNOTATION);
        let load = ann(LOAD_TRACE_ANNOTATION).map(|a| (a, true));
        let inline = ann(LOAD_ANNOTATION).map(|a| (a, false));
        let per = ann(LOAD_PER_REPLICA_ANNOTATION);
        let hpa_keys = [
            MIN_REPLICAS_ANNOTATION,
            MAX_REPLICAS_ANNOTATION,
            SCALE_DOWN_ANNOTATION,
            SCALE_UP_ANNOTATION,
        ];
        let hpa_key = hpa_keys.iter().find(|k| ann(k).is_some());
        if schedule.is_none() && load.is_none() && inline.is_none() && per.is_none() {
            if let Some(k) = hpa_key {
                return Err(err_at(
                    src,
                    ann(k).expect("found"),
                    format!(
                        "annotation {k}: expected it with a load ({LOAD_TRACE_ANNOTATION} or {LOAD_ANNOTATION}) and {LOAD_PER_REPLICA_ANNOTATION}"
                    ),
                ));
            }
            return Ok(None);
        }
        if let Some(d) = ann(DURATION_ANNOTATION) {
            return Err(err_at(
                src,
                d,
                format!(
                    "annotation {DURATION_ANNOTATION} on a {} that scales: expected none (serving pods run until a scale-down deletes them, or the run ends)",
                    kind.as_str()
                ),
            ));
        }
        let initial = match spec_replicas {
            None => 1,
            Some(r) if (0..=limits::MAX_REPLICAS).contains(&r.value) => r.value as u32,
            Some(r) => {
                return Err(err_at(
                    src,
                    r,
                    format!(
                        "replicas {}: expected an integer from 0 to {}",
                        r.value,
                        limits::MAX_REPLICAS
                    ),
                ));
            }
        };
        let (_, arrival) = self.times(src, meta)?;
        let max_replicas = limits::MAX_REPLICAS as u32;
        let steps = match (schedule, load.or(inline)) {
            (Some(s), None) => {
                if let (Some(p), _) | (_, Some(p)) = (per, hpa_key.and_then(|k| ann(k))) {
                    return Err(err_at(
                        src,
                        p,
                        format!(
                            "a load autoscaler's annotation beside {REPLICAS_ANNOTATION}: expected either a step schedule or a load with {LOAD_PER_REPLICA_ANNOTATION}"
                        ),
                    ));
                }
                let sched = parse_steps(&s.value, max_replicas).map_err(|e| {
                    err_at(src, s, format!("annotation {REPLICAS_ANNOTATION}: {e}"))
                })?;
                steps_from(arrival, initial, &sched)
            }
            (Some(s), Some(_)) => {
                return Err(err_at(
                    src,
                    s,
                    format!(
                        "{REPLICAS_ANNOTATION} beside a load: expected either a step schedule or a load with {LOAD_PER_REPLICA_ANNOTATION}"
                    ),
                ));
            }
            (None, None) => {
                let p = per.expect("one annotation at least");
                return Err(err_at(
                    src,
                    p,
                    format!(
                        "annotation {LOAD_PER_REPLICA_ANNOTATION}: expected a load with it ({LOAD_TRACE_ANNOTATION} or {LOAD_ANNOTATION})"
                    ),
                ));
            }
            (None, Some((l, from_file))) => {
                if let (Some(_), Some((b, _))) = (load, inline) {
                    return Err(err_at(
                        src,
                        b,
                        format!(
                            "{LOAD_ANNOTATION} beside {LOAD_TRACE_ANNOTATION}: expected one load"
                        ),
                    ));
                }
                let Some(p) = per else {
                    return Err(err_at(
                        src,
                        l,
                        format!(
                            "a load without {LOAD_PER_REPLICA_ANNOTATION}: expected the load one replica serves"
                        ),
                    ));
                };
                let per_replica = positive_number(src, p, LOAD_PER_REPLICA_ANNOTATION)?;
                let series = if from_file {
                    load_csv(src, l)?
                } else {
                    parse_load(&l.value)
                        .map_err(|e| err_at(src, l, format!("annotation {LOAD_ANNOTATION}: {e}")))?
                };
                if initial == 0 {
                    return Err(err_obj(
                        src,
                        "spec.replicas 0 with a load: expected at least 1 (the HorizontalPodAutoscaler leaves a workload scaled to zero alone)",
                    ));
                }
                let min = match ann(MIN_REPLICAS_ANNOTATION) {
                    None => 1,
                    Some(m) => count(src, m, MIN_REPLICAS_ANNOTATION, 1, max_replicas)?,
                };
                let max = match ann(MAX_REPLICAS_ANNOTATION) {
                    None => max_replicas,
                    Some(m) => count(src, m, MAX_REPLICAS_ANNOTATION, min, max_replicas)?,
                };
                let window =
                    |k: &str, default: SimDuration| -> Result<SimDuration, ScenarioError> {
                        match ann(k) {
                            None => Ok(default),
                            Some(d) => crate::convert::core::duration_field(src, d),
                        }
                    };
                let a = Autoscaler {
                    load: series,
                    per_replica,
                    min,
                    max,
                    behavior: ann(SCALE_UP_ANNOTATION).is_some()
                        || ann(SCALE_DOWN_ANNOTATION).is_some(),
                    scale_up_window: window(SCALE_UP_ANNOTATION, SimDuration::ZERO)?,
                    scale_down_window: window(SCALE_DOWN_ANNOTATION, SimDuration::from_secs(300))?,
                };
                let until = self
                    .world
                    .config
                    .until
                    .unwrap_or(SimTime::ZERO + limits::MAX_TIME);
                hpa_schedule(&a, arrival, initial, until)
            }
        };
        if kind == ServingKind::StatefulSet {
            // Kueue's StatefulSet webhook refuses any other resize (kueue#3279).
            let sizes: Vec<u32> = steps.iter().map(|s| s.1).filter(|&n| n > 0).collect();
            if load.or(inline).is_some() || sizes.windows(2).any(|w| w[0] != w[1]) {
                let at = schedule
                    .or(load.or(inline).map(|l| l.0))
                    .expect("one annotation");
                return Err(err_at(
                    src,
                    at,
                    "a StatefulSet managed by Kueue scales only to zero and back to one size (Kueue's StatefulSet webhook, kueue#3279): expected a kueuesim.io/replicas schedule of 0 and one other count",
                ));
            }
        }
        Ok(Some(Scaling { steps }))
    }
}

/// A positive finite number annotation.
fn positive_number(
    src: &ObjectText<'_>,
    s: &Spanned<String>,
    what: &str,
) -> Result<f64, ScenarioError> {
    match s.value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(err_at(
            src,
            s,
            format!(
                "annotation {what} {:?}: expected a positive number",
                s.value
            ),
        )),
    }
}

/// A whole-number annotation in `min..=max`.
fn count(
    src: &ObjectText<'_>,
    s: &Spanned<String>,
    what: &str,
    min: u32,
    max: u32,
) -> Result<u32, ScenarioError> {
    match s.value.trim().parse::<u32>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(err_at(
            src,
            s,
            format!(
                "annotation {what} {:?}: expected an integer from {min} to {max}",
                s.value
            ),
        )),
    }
}

/// A load value: a finite number, at least 0.
fn load_value(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "load {:?}: expected a number, at least 0",
            text.trim()
        )),
    }
}

/// A time cell or offset: Go duration syntax (`1h30m`), or a plain number of seconds.
fn offset(text: &str) -> Result<SimTime, String> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>() {
        if !(secs.is_finite() && secs >= 0.0 && secs <= limits::MAX_TIME.as_secs_f64()) {
            return Err(format!(
                "time {t:?}: expected seconds from 0 to {}",
                limits::MAX_TIME
            ));
        }
        return Ok(SimTime::from_millis((secs * 1000.0).round() as i64));
    }
    Ok(SimTime::ZERO + limits::parse_time_offset(t)?)
}

/// An inline load series `"<offset>=<load>,…"`, offsets increasing.
fn parse_load(text: &str) -> Result<Vec<(SimTime, f64)>, String> {
    let mut out: Vec<(SimTime, f64)> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((at, v)) = part.split_once('=') else {
            return Err(format!(
                "point {part:?}: expected <offset>=<load>, e.g. \"0s=40,6h=120\""
            ));
        };
        let at = offset(at).map_err(|e| format!("point {part:?}: {e}"))?;
        let v = load_value(v).map_err(|e| format!("point {part:?}: {e}"))?;
        if out.last().is_some_and(|l| l.0 >= at) {
            return Err(format!(
                "point {part:?}: expected offsets in increasing order"
            ));
        }
        out.push((at, v));
    }
    if out.is_empty() {
        return Err("expected at least one point <offset>=<load>".into());
    }
    Ok(out)
}

/// A load trace: a CSV file (path relative to the YAML file) whose header names columns
/// `time` (an offset from the start: Go duration syntax or seconds) and `load`.
fn load_csv(
    src: &ObjectText<'_>,
    path: &Spanned<String>,
) -> Result<Vec<(SimTime, f64)>, ScenarioError> {
    let base = Path::new(&src.file.name)
        .parent()
        .unwrap_or_else(|| Path::new(""));
    let file = base.join(path.value.trim());
    let shown = file.display().to_string();
    let text = crate::source::read_text(&file, &shown).map_err(|e| match e {
        ScenarioError::Io { source, .. } => err_at(
            src,
            path,
            format!("annotation {LOAD_TRACE_ANNOTATION}: cannot read CSV {shown}: {source}"),
        ),
        e => e,
    })?;
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = lines
        .next()
        .map(|(_, h)| h.split(',').map(str::trim).collect())
        .unwrap_or_default();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let (Some(tc), Some(lc)) = (col("time"), col("load")) else {
        return Err(err_at(
            src,
            path,
            format!(
                "annotation {LOAD_TRACE_ANNOTATION}: CSV {shown} has no columns time and load in its header (line 1): expected a CSV file whose header names both"
            ),
        ));
    };
    let mut out: Vec<(SimTime, f64)> = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split(',').collect();
        let at_cell = |c: usize| Pos {
            file: shown.clone(),
            line: i as u64 + 1,
            column: 1 + cells
                .iter()
                .take(c)
                .map(|f| f.chars().count() as u64 + 1)
                .sum::<u64>(),
        };
        let (Some(t), Some(l)) = (cells.get(tc), cells.get(lc)) else {
            return Err(ScenarioError::at(
                at_cell(cells.len()),
                "row has fewer cells than its header: expected time and load",
                &text,
            ));
        };
        let t = offset(t).map_err(|e| ScenarioError::at(at_cell(tc), e, &text))?;
        let l = load_value(l).map_err(|e| ScenarioError::at(at_cell(lc), e, &text))?;
        if out.last().is_some_and(|p| p.0 >= t) {
            return Err(ScenarioError::at(
                at_cell(tc),
                "time: expected times in increasing order",
                &text,
            ));
        }
        out.push((t, l));
    }
    if out.is_empty() {
        return Err(err_at(
            src,
            path,
            format!(
                "annotation {LOAD_TRACE_ANNOTATION}: CSV {shown} has no rows: expected time,load rows"
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_loads_and_offsets_parse() {
        assert_eq!(
            parse_load("0=40, 6h=120.5,90=3").unwrap_err(),
            "point \"90=3\": expected offsets in increasing order"
        );
        assert_eq!(
            parse_load("0=40,6h=120.5").unwrap(),
            vec![(SimTime::ZERO, 40.0), (SimTime::from_secs(6 * 3600), 120.5)]
        );
        assert!(parse_load("0=-1").is_err());
        assert!(parse_load("x=1").is_err());
        assert_eq!(offset("90").unwrap(), SimTime::from_secs(90));
        assert_eq!(offset("1m30s").unwrap(), SimTime::from_secs(90));
    }
}
