//! Serving that scales: Deployments, StatefulSets and LeaderWorkerSets whose replicas follow a
//! step schedule (`kueuesim.io/replicas`) or a load with a load per replica (the
//! HorizontalPodAutoscaler's algorithm, `hpa_schedule`), and the tag each replica workload
//! carries (`ServingRef`) so the engine can scale it down as the object's controller would.

use crate::time::{SimDuration, SimTime};

/// The kinds Kueue manages for serving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ServingKind {
    /// apps/v1 Deployment: each pod its own Workload (Kueue's pod integration); a scale-down
    /// deletes the pods the ReplicaSet controller ranks first (`getPodsToDelete`).
    Deployment,
    /// apps/v1 StatefulSet: one pod group; Kueue's webhook lets it scale only to zero and
    /// back (kueue#3279), and scaling to zero puts its Workload on hold.
    StatefulSet,
    /// LeaderWorkerSet: one Workload per group (leader and workers); a scale-down deletes the
    /// groups of the highest indexes.
    LeaderWorkerSet,
}

impl ServingKind {
    /// The Kubernetes kind.
    pub fn as_str(self) -> &'static str {
        match self {
            ServingKind::Deployment => "Deployment",
            ServingKind::StatefulSet => "StatefulSet",
            ServingKind::LeaderWorkerSet => "LeaderWorkerSet",
        }
    }
}

/// One scaling serving object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServingObject {
    /// Its kind.
    pub kind: ServingKind,
    /// Namespace.
    pub namespace: String,
    /// Object name.
    pub name: String,
    /// The replicas wanted from each time on (its `spec.replicas` as the schedule or the
    /// autoscaler sets it): times strictly increasing, the first at the object's arrival,
    /// no two neighbours equal.
    pub steps: Vec<(SimTime, u32)>,
}

impl ServingObject {
    /// Replica-milliseconds wanted from its arrival up to `end`.
    pub fn wanted_ms(&self, end: SimTime) -> i128 {
        let mut total = 0i128;
        for (i, &(at, n)) in self.steps.iter().enumerate() {
            let until = self.steps.get(i + 1).map_or(end, |s| s.0).min(end);
            if until > at {
                total += i128::from(n) * i128::from((until - at).millis());
            }
        }
        total
    }
}

/// What a replica workload stands for in its serving object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServingRef {
    /// Index into `World::serving`.
    pub object: u32,
    /// A LeaderWorkerSet group's index, a Deployment pod's creation number; 0 for a
    /// StatefulSet's pod group.
    pub ordinal: u32,
    /// Replicas it stands for: 1 (a Deployment's pod, a LeaderWorkerSet's group), or a
    /// StatefulSet's replica count (its pod group).
    pub replicas: u32,
}

/// A HorizontalPodAutoscaler (autoscaling/v2) on a load: an `External` metric with an
/// `AverageValue` target of `per_replica`, without `spec.behavior` or with one whose unwritten
/// fields take the defaults (`SetDefaults_HorizontalPodAutoscalerBehavior`).
#[derive(Clone, Debug, PartialEq)]
pub struct Autoscaler {
    /// The load from each time on (a step function, times increasing).
    pub load: Vec<(SimTime, f64)>,
    /// The target load per replica.
    pub per_replica: f64,
    /// `minReplicas` (at least 1).
    pub min: u32,
    /// `maxReplicas`.
    pub max: u32,
    /// Whether `spec.behavior` is written. Without it the controller takes its older path
    /// (`normalizeDesiredReplicas`): no scale-up window, the scale-down window of the
    /// controller's flag (`scale_down_window`, 300 s) counting proposals exactly that old, and
    /// a scale-up limit of max(2 × current, 4) per sync (`calculateScaleUpLimit`).
    pub behavior: bool,
    /// `behavior.scaleUp.stabilizationWindowSeconds` (default 0; unused without `behavior`).
    pub scale_up_window: SimDuration,
    /// `behavior.scaleDown.stabilizationWindowSeconds` (default 300 s, the controller's
    /// `--horizontal-pod-autoscaler-downscale-stabilization`, which is also the window
    /// without `behavior`).
    pub scale_down_window: SimDuration,
}

/// The HPA controller's `--horizontal-pod-autoscaler-sync-period` (15 s), also the period of
/// the default scaling policies.
pub const HPA_SYNC_PERIOD: SimDuration = SimDuration::from_secs(15);
/// `--horizontal-pod-autoscaler-tolerance`: no change while the usage ratio is within 10 %.
pub const HPA_TOLERANCE: f64 = 0.1;
/// The default scale-up policy `Pods`: 4 pods per period (with `Percent` 100, the larger).
const HPA_SCALE_UP_PODS: u32 = 4;
/// Without `behavior`: `scaleUpLimitMinimum`, the least a sync may scale up to.
const HPA_LEGACY_SCALE_UP_MIN: u32 = 4;

/// The longest stabilisation window in use: without `behavior` there is no scale-up window.
fn window_horizon(a: &Autoscaler) -> SimDuration {
    if a.behavior {
        a.scale_up_window.max(a.scale_down_window)
    } else {
        a.scale_down_window
    }
}

impl Autoscaler {
    /// The load at `t` (the latest point at or before it); none before the first point, where
    /// the metric has no value yet.
    pub fn load_at(&self, t: SimTime) -> Option<f64> {
        match self.load.partition_point(|&(at, _)| at <= t) {
            0 => None,
            i => Some(self.load[i - 1].1),
        }
    }
}

/// The replicas an autoscaler sets, as a step schedule: syncs every `HPA_SYNC_PERIOD` from
/// `start` (its first at `start`, with `initial` replicas) until the replicas have settled
/// after the load's last change, or `until`. Upstream the HPA syncs for as long as it exists
/// (`reconcileAutoscaler`); once the load is constant, a sync that changes nothing and that
/// counted no proposal other than its own is a fixed point (the next sync sees the same
/// replicas, load and proposals), so every later sync would change nothing either. Rate limits and windows
/// can take many syncs to get there (e.g. 2 → 100 replicas at max(4, 100 %) per sync).
///
/// Each sync mirrors the HPA controller (`pkg/controller/podautoscaler`):
/// - below `minReplicas` or above `maxReplicas` it moves to the bound;
/// - otherwise, before the load's first point (no metric yet), it keeps the replicas;
/// - otherwise the metric's proposal (`GetExternalPerPodMetricReplicas`): the current
///   replicas while `load / (per_replica × current)` is within `HPA_TOLERANCE` of 1, else
///   `ceil(load / per_replica)`;
/// - with `behavior` (`normalizeDesiredReplicasWithBehaviors`):
///   `stabilizeRecommendationWithBehaviors` holds the proposal between the smallest proposal
///   of the scale-up window and the largest of the scale-down window (proposals exactly a
///   window old left out, `After(cutoff)`); `convertDesiredReplicasWithBehaviorRate` with the
///   default policies: up by at most max(4 pods, 100 %) per 15 s period, down by up to
///   100 %, within min and max. Syncs are one period apart, so each period starts with the
///   current replicas;
/// - without `behavior` (`normalizeDesiredReplicas`): `stabilizeRecommendation` takes the
///   largest proposal of the scale-down window (proposals exactly a window old counted,
///   `!Before(cutoff)`); `convertDesiredReplicasWithRules`: up to at most
///   max(2 × current, 4) (`calculateScaleUpLimit`), within min and max.
pub fn hpa_schedule(
    a: &Autoscaler,
    start: SimTime,
    initial: u32,
    until: SimTime,
) -> Vec<(SimTime, u32)> {
    let last_change = a.load.last().map_or(start, |l| l.0).max(start);
    // A guard only: the schedule settles long before (a window, then at most ~17 doublings
    // to the 100,000-replica bound).
    let guard = last_change
        + window_horizon(a)
        + window_horizon(a)
        + SimDuration::from_millis(HPA_SYNC_PERIOD.millis() * 10_000);
    let stop = guard.min(until);
    let mut steps = vec![(start, initial)];
    let mut current = initial;
    // The unstabilised proposals of the syncs so far (`recommendations`), oldest first.
    let mut proposals: std::collections::VecDeque<(SimTime, u32)> = Default::default();
    let mut t = start;
    while t <= stop {
        // Whether this sync is a fixed point (set where a proposal is made).
        let mut settled = false;
        let desired = if current > a.max {
            a.max
        } else if current < a.min {
            a.min
        } else if let Some(load) = a.load_at(t) {
            let proposal = metric_proposal(a, load, current);
            let horizon = window_horizon(a);
            let desired = if a.behavior {
                // Stabilise: proposals strictly after `t − window` count (`After(cutoff)`).
                let mut up = proposal;
                let mut down = proposal;
                for &(at, p) in &proposals {
                    if at > t - a.scale_up_window {
                        up = up.min(p);
                    }
                    if at > t - a.scale_down_window {
                        down = down.max(p);
                    }
                }
                let stabilised = current.max(up).min(down);
                // Rate limits of the default policies, then min and max.
                if stabilised > current {
                    let limit = (current + HPA_SCALE_UP_PODS).max(current.saturating_mul(2));
                    stabilised.min(limit.min(a.max))
                } else if stabilised < current {
                    stabilised.max(a.min)
                } else {
                    stabilised
                }
            } else {
                // `stabilizeRecommendation`: proposals not before `t − window` count.
                let stabilised = proposals
                    .iter()
                    .filter(|&&(at, _)| at >= t - a.scale_down_window)
                    .fold(proposal, |m, &(_, p)| m.max(p));
                // `convertDesiredReplicasWithRules` with `calculateScaleUpLimit`.
                let limit = current.saturating_mul(2).max(HPA_LEGACY_SCALE_UP_MIN);
                stabilised.min(limit.min(a.max)).max(a.min)
            };
            // This sync counted no other proposal than its own (checked before the oldest
            // go, since this sync may have counted them).
            let alone = proposals.iter().all(|&(_, p)| p == proposal);
            // Drop what no later sync counts.
            while proposals.front().is_some_and(|&(at, _)| at <= t - horizon) {
                proposals.pop_front();
            }
            proposals.push_back((t, proposal));
            settled = t >= last_change && desired == current && alone;
            desired
        } else {
            // No metric yet (before the load's first point): `computeReplicasForMetrics` fails
            // (`FailedGetExternalMetric`), the HPA keeps the replicas and records no proposal.
            current
        };
        if desired != current {
            current = desired;
            steps.push((t, desired));
        }
        if settled {
            break;
        }
        t += HPA_SYNC_PERIOD;
    }
    // A change at `start` replaces the initial count.
    if steps.len() > 1 && steps[1].0 == start {
        steps.remove(0);
    }
    steps
}

/// `GetExternalPerPodMetricReplicas`: the replicas the metric asks for.
fn metric_proposal(a: &Autoscaler, load: f64, current: u32) -> u32 {
    let ratio = load / (a.per_replica * f64::from(current.max(1)));
    if (1.0 - ratio).abs() <= HPA_TOLERANCE {
        return current;
    }
    let n = (load / a.per_replica).ceil();
    if n <= 0.0 {
        0
    } else if n >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        n as u32
    }
}

/// Parses a step schedule `"<offset>=<n>,<offset>=<n>,…"` (offsets in Go duration syntax from
/// the start, strictly increasing; counts up to `max`).
pub fn parse_steps(text: &str, max: u32) -> Result<Vec<(SimTime, u32)>, String> {
    let mut out: Vec<(SimTime, u32)> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some((at, n)) = part.split_once('=') else {
            return Err(format!(
                "step {part:?}: expected <offset>=<replicas>, e.g. \"0s=2,6h=4\""
            ));
        };
        let at = SimTime::ZERO
            + crate::limits::parse_time_offset(at.trim())
                .map_err(|e| format!("step {part:?}: {e}"))?;
        let n: u32 =
            n.trim().parse().ok().filter(|&n| n <= max).ok_or_else(|| {
                format!("step {part:?}: expected a replica count from 0 to {max}")
            })?;
        if let Some(&(prev, _)) = out.last()
            && at <= prev
        {
            return Err(format!(
                "step {part:?}: expected offsets in increasing order (after {})",
                SimDuration::from_millis(prev.millis())
            ));
        }
        out.push((at, n));
    }
    if out.is_empty() {
        return Err("expected at least one step <offset>=<replicas>, e.g. \"0s=2,6h=4\"".into());
    }
    Ok(out)
}

/// A schedule's steps as seen by an object arriving at `arrival` with `initial` replicas
/// (its `spec.replicas`): the step in effect at its arrival (else `initial`), then the later
/// ones, with repeats dropped.
pub fn steps_from(
    arrival: SimTime,
    initial: u32,
    schedule: &[(SimTime, u32)],
) -> Vec<(SimTime, u32)> {
    let first = schedule
        .iter()
        .take_while(|s| s.0 <= arrival)
        .last()
        .map_or(initial, |s| s.1);
    let mut out = vec![(arrival, first)];
    for &(at, n) in schedule.iter().filter(|s| s.0 > arrival) {
        if out.last().is_some_and(|l| l.1 != n) {
            out.push((at, n));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: i64) -> SimTime {
        SimTime::from_secs(secs)
    }

    fn hpa(load: Vec<(i64, f64)>) -> Autoscaler {
        Autoscaler {
            load: load.into_iter().map(|(t, l)| (s(t), l)).collect(),
            per_replica: 10.0,
            min: 1,
            max: 100,
            behavior: true,
            scale_up_window: SimDuration::ZERO,
            scale_down_window: SimDuration::from_secs(300),
        }
    }

    #[test]
    fn steps_parse_and_reject_bad_input() {
        assert_eq!(
            parse_steps("0s=2, 6h=4,18h=0", 10).unwrap(),
            vec![(s(0), 2), (s(6 * 3600), 4), (s(18 * 3600), 0)]
        );
        assert!(
            parse_steps("6h=4,1h=2", 10)
                .unwrap_err()
                .contains("increasing")
        );
        assert!(
            parse_steps("1h", 10)
                .unwrap_err()
                .contains("<offset>=<replicas>")
        );
        assert!(
            parse_steps("1h=11", 10)
                .unwrap_err()
                .contains("from 0 to 10")
        );
        assert!(parse_steps("1x=1", 10).is_err());
        assert!(parse_steps("", 10).is_err());
    }

    #[test]
    fn steps_from_an_arrival_take_the_step_in_effect() {
        let sched = vec![(s(0), 2), (s(100), 4), (s(200), 4), (s(300), 1)];
        assert_eq!(
            steps_from(s(150), 3, &sched),
            vec![(s(150), 4), (s(300), 1)]
        );
        assert_eq!(
            steps_from(s(0), 3, &sched[1..]),
            vec![(s(0), 3), (s(100), 4), (s(300), 1)]
        );
    }

    #[test]
    fn wanted_replica_time_integrates_the_steps_to_the_end() {
        let o = ServingObject {
            kind: ServingKind::Deployment,
            namespace: "n".into(),
            name: "d".into(),
            steps: vec![(s(10), 2), (s(20), 4), (s(50), 1)],
        };
        // 2×10 s + 4×30 s + 1×10 s.
        assert_eq!(o.wanted_ms(s(60)), 150_000);
        assert_eq!(o.wanted_ms(s(30)), 60_000);
    }

    #[test]
    fn scale_up_is_rate_limited_and_immediate() {
        // Load 200 asks for 20 replicas from 2: up by max(4 pods, 100 %) per 15 s sync:
        // 2 → 6 → 12 → 20 (capped by the proposal).
        let a = hpa(vec![(0, 20.0), (60, 200.0)]);
        let steps = hpa_schedule(&a, s(0), 2, s(100_000));
        assert_eq!(steps, vec![(s(0), 2), (s(60), 6), (s(75), 12), (s(90), 20)]);
    }

    #[test]
    fn scale_down_waits_for_its_stabilisation_window() {
        // 50 → 20 at 600 s: the largest proposal of the last 300 s holds 5 until the last
        // proposal of 5 (the sync at 585 s) leaves the window: at 885 s (`After(cutoff)`
        // leaves out a proposal exactly 300 s old).
        let a = hpa(vec![(0, 50.0), (600, 20.0)]);
        let steps = hpa_schedule(&a, s(0), 5, s(100_000));
        assert_eq!(steps, vec![(s(0), 5), (s(885), 2)]);
    }

    #[test]
    fn small_changes_are_within_tolerance_and_bounds_hold() {
        // 10 replicas, load 105 (ratio 1.05): no change.
        let a = hpa(vec![(0, 105.0)]);
        assert_eq!(hpa_schedule(&a, s(0), 10, s(1000)), vec![(s(0), 10)]);
        // Below min at the start: up to min at once; load 0 never goes under min.
        let mut b = hpa(vec![(0, 0.0)]);
        b.min = 3;
        assert_eq!(hpa_schedule(&b, s(0), 1, s(1000)), vec![(s(0), 3)]);
        // Above max: capped.
        let mut c = hpa(vec![(0, 10_000.0)]);
        c.max = 6;
        assert_eq!(hpa_schedule(&c, s(0), 2, s(1000)), vec![(s(0), 6)]);
    }

    #[test]
    fn without_behavior_the_older_rules_hold() {
        // `normalizeDesiredReplicas`: up to max(2 × current, 4) per sync (2 → 4 → 8 → 16 →
        // 20), where the default policies give 2 → 6 → 12 → 20.
        let mut a = hpa(vec![(0, 20.0), (60, 200.0)]);
        a.behavior = false;
        let steps = hpa_schedule(&a, s(0), 2, s(100_000));
        assert_eq!(
            steps,
            vec![(s(0), 2), (s(60), 4), (s(75), 8), (s(90), 16), (s(105), 20)]
        );
        // A proposal exactly 300 s old still counts (`!Before(cutoff)`): the last proposal of
        // 5 (at 585 s) holds through 885 s, so 2 comes at 900 s, not 885 s.
        let mut b = hpa(vec![(0, 50.0), (600, 20.0)]);
        b.behavior = false;
        assert_eq!(
            hpa_schedule(&b, s(0), 5, s(100_000)),
            vec![(s(0), 5), (s(900), 2)]
        );
        // No scale-up window without `behavior`, whatever the field says.
        let mut c = hpa(vec![(0, 20.0), (60, 40.0)]);
        c.behavior = false;
        c.scale_up_window = SimDuration::from_secs(300);
        assert_eq!(
            hpa_schedule(&c, s(0), 2, s(100_000)),
            vec![(s(0), 2), (s(60), 4)]
        );
    }

    #[test]
    fn syncs_go_on_until_the_replicas_settle() {
        // From 2 toward 100 at max(4, 100 %) per sync takes five syncs, and 96 is within the
        // tolerance of 100 (1000 / 960), so it stays; with no scale-down window the schedule
        // once stopped 30 s after the load's change (at 24).
        let mut a = hpa(vec![(0, 20.0), (60, 1000.0)]);
        a.scale_down_window = SimDuration::ZERO;
        let steps = hpa_schedule(&a, s(0), 2, s(100_000));
        assert_eq!(
            steps,
            vec![
                (s(0), 2),
                (s(60), 6),
                (s(75), 12),
                (s(90), 24),
                (s(105), 48),
                (s(120), 96)
            ]
        );
        // A 5m scale-up window holds 2 until the last proposal of 2 (at 45 s) leaves it, at
        // 345 s; the doubling then ran past the old horizon (it stopped at 48 at 390 s).
        let mut b = hpa(vec![(0, 20.0), (60, 1000.0)]);
        b.scale_up_window = SimDuration::from_secs(300);
        let steps = hpa_schedule(&b, s(0), 2, s(100_000));
        assert_eq!(steps.first(), Some(&(s(0), 2)));
        assert_eq!(steps[1], (s(345), 6));
        assert_eq!(steps.last(), Some(&(s(405), 96)));
    }

    #[test]
    fn before_the_first_load_point_the_replicas_stay() {
        // No metric before 1h: 5 replicas stay (not load 0, which dropped them to min), then
        // ceil(100 / 10) = 10 at 1h.
        let a = hpa(vec![(3600, 100.0)]);
        assert_eq!(
            hpa_schedule(&a, s(0), 5, s(100_000)),
            vec![(s(0), 5), (s(3600), 10)]
        );
        // The bounds still hold without a metric (they come before it upstream).
        let mut b = hpa(vec![(3600, 100.0)]);
        b.min = 7;
        assert_eq!(
            hpa_schedule(&b, s(0), 5, s(100_000)),
            vec![(s(0), 7), (s(3600), 10)]
        );
    }
}
