//! The one place for the input's limits: the largest times, durations, counts and sizes a
//! scenario may state, checked by the loader when it reads each value.
//!
//! Each limit is far above what real clusters and traces need (docs/scenario-format.md,
//! "Limits", gives the reasons) and far below what would overflow integer milliseconds or
//! exhaust memory. Because every time and duration entering a run is bounded here, the sums
//! the engine forms (an arrival plus a start-up plus a duration plus a back-off …) stay
//! many orders of magnitude below `i64::MAX` milliseconds, which is why `SimTime` arithmetic
//! may saturate instead of failing (`crate::time`).

use crate::time::{DurationError, SimDuration};

/// Milliseconds in a (365-day) year.
const MS_PER_YEAR: i64 = 365 * 24 * 3_600_000;

/// The latest simulated time an input may name: an arrival, a creation offset from the start
/// (either way), a generator's start or end, the horizon `until`. Ten years: the longest
/// public cluster traces cover months (Philly 3 months, Helios 6 months, Alibaba PAI 2
/// months), and a capacity plan rarely looks further than a few years ahead.
pub const MAX_TIME: SimDuration = SimDuration::from_millis(10 * MS_PER_YEAR);

/// The longest duration an input may state: how long a workload runs or has left, pod
/// start-up and termination, controller latencies, timeouts, back-off, intervals, a
/// generator's draws. Ten years, as [`MAX_TIME`]: no job runs longer than the horizon.
pub const MAX_DURATION: SimDuration = SimDuration::from_millis(10 * MS_PER_YEAR);

/// The most pods in one pod set, and in one workload (all its pod sets, replicas included):
/// the largest training jobs run on tens of thousands of GPUs, one pod per node of 8.
pub const MAX_PODS_PER_WORKLOAD: i64 = 100_000;

/// The most replicas of a replicated object (Deployment, StatefulSet, LeaderWorkerSet,
/// JobSet replicated job, RayJob worker group, Kubeflow replica type …); replicas times pods
/// per replica is bounded by [`MAX_PODS_PER_WORKLOAD`] as well.
pub const MAX_REPLICAS: i64 = 100_000;

/// The most workloads one run may take from one source (the objects of the input, one
/// WorkloadGenerator's count): the largest public traces hold a few million jobs (Alibaba
/// PAI 1.2 M, Helios 3.3 M).
pub const MAX_WORKLOADS: i64 = 10_000_000;

/// The most workloads the input's objects may expand to (a Deployment's replicas are one
/// workload each): they are held in memory together (some kilobytes each while pending),
/// unlike a trace's or a generator's, which are pulled one at a time; a snapshot of a large
/// cluster holds tens of thousands.
pub const MAX_OBJECT_WORKLOADS: usize = 200_000;

/// The most nodes (Node objects and NodePool counts together): upstream Kubernetes tests
/// 5,000 nodes, the largest managed clusters offer 65,000 to 100,000.
pub const MAX_NODES: i64 = 100_000;

/// The largest amount of one resource on one node or for one pod (an allocatable, a
/// request), in Kueue's units (millicores for cpu, bytes for memory): 2^46, 64 TiB of memory
/// or 70 billion cores. The largest single machines have 32 TiB of memory; the bound keeps
/// the sums over [`MAX_NODES`] nodes, or over a workload's [`MAX_PODS_PER_WORKLOAD`] pods,
/// inside `i64` (2^46 × 10^5 < 2^63).
pub const MAX_QUANTITY: i64 = 1 << 46;

/// The largest quota (`nominalQuota`, `borrowingLimit`, `lendingLimit`, a LocalQueue's
/// consumed usage), in Kueue's units: 2^53, 8 PiB of memory. A quota may cover a whole
/// cluster (a public trace's cluster has petabytes of memory); a thousand such quotas still
/// sum inside `i64`.
pub const MAX_QUOTA: i64 = 1 << 53;

/// The deepest nesting of YAML mappings and lists in one object: Kubernetes objects nest
/// about fifteen levels (a JobSet's pod template's container's resources).
pub const MAX_DEPTH: usize = 64;

/// The most YAML nodes (mappings, lists and scalars) in one object: a Node with thousands
/// of labels or a JobSet with hundreds of replicated jobs stays in the thousands.
pub const MAX_YAML_NODES: usize = 250_000;

/// The largest input file, in bytes: scenarios are kilobytes to a few megabytes; the large
/// traces are CSV files read row by row, which this does not count.
pub const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// The most arrivals per second a WorkloadGenerator may draw (`rate`): Kueue admits some
/// hundreds of workloads per second; a million is far beyond any real submission rate.
pub const MAX_RATE_PER_SECOND: f64 = 1_000_000.0;

/// The largest `sigma` of a log-normal distribution: fitted job-duration distributions have
/// sigma 1 to 3; at 10 the 99th percentile is already 10^10 times the median, and draws are
/// clamped to the unit's range in any case.
pub const MAX_SIGMA: f64 = 10.0;

/// The largest `Simulation.spec.variation.load`: a hundred copies of every arrival is far
/// past any what-if of a busier day, and each copy is a workload the run holds.
pub const MAX_LOAD: f64 = 100.0;

/// Parses a duration (Go syntax, `SimDuration::parse`) of at most [`MAX_DURATION`]; a
/// longer one, even one past `i64` milliseconds, is refused with the real limit.
pub fn parse_duration(text: &str) -> Result<SimDuration, String> {
    match SimDuration::parse(text) {
        Ok(d) => check_duration(d),
        Err(DurationError::Overflow { input }) => Err(format!(
            "duration {input:?} is too long: expected at most {MAX_DURATION} ({})",
            years(MAX_DURATION)
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Parses an offset from the simulation start (an arrival, `until`) of at most
/// [`MAX_TIME`].
pub fn parse_time_offset(text: &str) -> Result<SimDuration, String> {
    match SimDuration::parse(text) {
        Ok(d) => check_time(d),
        Err(DurationError::Overflow { input }) => Err(format!(
            "time {input:?} after the start is too late: expected at most {MAX_TIME} ({})",
            years(MAX_TIME)
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// An offset from the start written by a planner: a Go duration, or one with days first
/// (`10d`, `12d2h`, `1.5d`). Days are kueuesim's own convenience, for the command line's
/// `--at`/`--until` and the offsets of its own Timeline kind; Kubernetes objects keep Go's
/// `time.ParseDuration` syntax, which has no `d` ([`parse_time_offset`] stays strict).
pub fn parse_offset_days(s: &str) -> Result<SimDuration, String> {
    let Some(d) = s.find('d') else {
        return parse_time_offset(s);
    };
    let bad = || {
        format!(
            "invalid duration {s:?}: expected a Go duration (90m, 1h30m) or days first (1d, 1d12h)"
        )
    };
    let days: f64 = s[..d]
        .parse()
        .ok()
        .filter(|x: &f64| {
            x.is_finite() && *x >= 0.0 && s[..d].bytes().all(|b| b.is_ascii_digit() || b == b'.')
        })
        .ok_or_else(bad)?;
    let rest = &s[d + 1..];
    let rest = if rest.is_empty() {
        SimDuration::ZERO
    } else {
        SimDuration::parse(rest).map_err(|e| e.to_string())?
    };
    let ms = (days * 86_400_000.0).round();
    if ms > MAX_TIME.millis() as f64 {
        return Err(format!(
            "{s:?} is too late: expected at most {} ({} days)",
            MAX_TIME,
            MAX_TIME.millis() / 86_400_000
        ));
    }
    check_time(SimDuration::from_millis(ms as i64) + rest)
}

/// `d` is at most [`MAX_DURATION`]; otherwise the message, in our words, stating the limit.
pub fn check_duration(d: SimDuration) -> Result<SimDuration, String> {
    if d > MAX_DURATION {
        return Err(format!(
            "duration {d} is too long: expected at most {} ({})",
            MAX_DURATION,
            years(MAX_DURATION)
        ));
    }
    Ok(d)
}

/// `d`, a time offset from the simulation start, is at most [`MAX_TIME`]; otherwise the
/// message stating the limit.
pub fn check_time(d: SimDuration) -> Result<SimDuration, String> {
    if d > MAX_TIME {
        return Err(format!(
            "time {d} after the start is too late: expected at most {} ({})",
            MAX_TIME,
            years(MAX_TIME)
        ));
    }
    Ok(d)
}

/// Whole seconds `s` as a duration within [`MAX_DURATION`] (`what` names the field); a
/// negative `s` is refused too.
pub fn check_seconds(what: &str, s: i64) -> Result<SimDuration, String> {
    let max = MAX_DURATION.millis() / 1000;
    if !(0..=max).contains(&s) {
        return Err(format!("{what} {s}: expected seconds from 0 to {max}"));
    }
    Ok(SimDuration::from_secs(s))
}

/// `n` in `min..=max` (`what` names the field); otherwise the message stating that range.
pub fn check_count(what: &str, n: i64, min: i64, max: i64) -> Result<i64, String> {
    if !(min..=max).contains(&n) {
        return Err(format!(
            "{what} {n}: expected an integer from {min} to {max}"
        ));
    }
    Ok(n)
}

/// An amount `v` of `resource` (in Kueue's units) for a node or a pod, at most
/// [`MAX_QUANTITY`].
pub fn check_quantity(resource: &str, v: i64) -> Result<i64, String> {
    check_amount(resource, v, MAX_QUANTITY)
}

/// A quota `v` of `resource` (in Kueue's units), at most [`MAX_QUOTA`].
pub fn check_quota(resource: &str, v: i64) -> Result<i64, String> {
    check_amount(resource, v, MAX_QUOTA)
}

fn check_amount(resource: &str, v: i64, max: i64) -> Result<i64, String> {
    if v > max {
        return Err(format!(
            "{resource}: {} is too large: expected at most {}",
            crate::format_amount(resource, v),
            crate::format_amount(resource, max)
        ));
    }
    Ok(v)
}

/// "10 years" for the messages.
fn years(d: SimDuration) -> String {
    format!("{} years", d.millis() / MS_PER_YEAR)
}

#[cfg(test)]
mod tests {

    #[test]
    fn offsets_with_days() {
        let h = |x: i64| SimDuration::from_millis(x * 3_600_000);
        assert_eq!(parse_offset_days("10d"), Ok(h(240)));
        assert_eq!(parse_offset_days("12d2h"), Ok(h(290)));
        assert_eq!(parse_offset_days("1.5d"), Ok(h(36)));
        assert_eq!(
            parse_offset_days("90m"),
            Ok(SimDuration::from_millis(5_400_000))
        );
        assert!(parse_offset_days("-1d").is_err());
        assert!(parse_offset_days("d").is_err());
        assert!(
            parse_offset_days("1d2x")
                .unwrap_err()
                .contains("unknown unit")
        );
        // Kubernetes objects keep Go's syntax.
        assert!(parse_time_offset("10d").is_err());
    }

    use super::*;

    #[test]
    fn limits_state_themselves() {
        assert_eq!(MAX_DURATION.to_string(), "87600h0m0s");
        assert_eq!(
            check_duration(SimDuration::from_millis(i64::MAX))
                .unwrap_err()
                .to_string(),
            "duration 2562047788015h12m55.807s is too long: expected at most 87600h0m0s (10 years)"
        );
        assert_eq!(check_duration(MAX_DURATION), Ok(MAX_DURATION));
        assert!(check_time(MAX_TIME).is_ok());
        assert!(check_time(MAX_TIME + SimDuration::from_millis(1)).is_err());
        assert_eq!(
            check_seconds("backoffBaseSeconds", i64::MAX).unwrap_err(),
            "backoffBaseSeconds 9223372036854775807: expected seconds from 0 to 315360000"
        );
        assert_eq!(check_seconds("x", 60), Ok(SimDuration::from_secs(60)));
        assert!(check_seconds("x", -1).is_err());
        assert_eq!(
            check_count("replicas", i64::MAX, 0, MAX_REPLICAS).unwrap_err(),
            "replicas 9223372036854775807: expected an integer from 0 to 100000"
        );
    }

    #[test]
    fn parsing_states_the_limit_even_past_i64() {
        assert_eq!(
            parse_duration("9999999999999999999999h").unwrap_err(),
            "duration \"9999999999999999999999h\" is too long: expected at most 87600h0m0s (10 years)"
        );
        assert_eq!(
            parse_time_offset("2562047788015h").unwrap_err(),
            "time 2562047788015h0m0s after the start is too late: expected at most 87600h0m0s (10 years)"
        );
        assert_eq!(parse_duration("87600h"), Ok(MAX_DURATION));
        assert!(parse_duration("1x").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn bounded_sums_cannot_overflow() {
        // The engine adds a handful of bounded values to a bounded time; a thousand of them
        // would still be four orders of magnitude inside i64 milliseconds.
        assert!(MAX_TIME.millis() * 1000 < i64::MAX / 10_000);
        assert!(MAX_DURATION.millis() * 1000 < i64::MAX / 10_000);
    }
}
