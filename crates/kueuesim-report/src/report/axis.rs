//! Axis ticks and durations as report.html words them: "nice" 1-2-5 steps for counts and
//! shares, round minutes, hours and days for time, and durations as a planner says them
//! ("3h 20m", "2d 4h").

/// One tick: where it sits (in data units) and its label.
pub(super) type Tick = (f64, String);

/// The smallest 1-2-5 step (…, 0.1, 0.2, 0.5, 1, 2, 5, 10, …) of at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    // A relative slack so that 0.3/0.1 = 2.9999999999999996 does not pick the next step.
    let m = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|m| f <= m * (1.0 + 1e-9))
        .unwrap_or(10.0);
    m * mag
}

/// Ticks of a value axis from 0 to at least `max`, about `target` steps of 1, 2 or 5 × 10ⁿ
/// (at least 1 when the values are counts); the axis ends at the last tick, so its top is
/// labelled.
pub(super) fn value_ticks(max: f64, target: usize, integer: bool) -> Vec<Tick> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let mut step = nice_step(max / target.max(1) as f64);
    if integer {
        step = step.max(1.0);
    }
    let n = (max / step - 1e-9).ceil().max(1.0) as usize;
    // Thousands and millions get a suffix so a label stays narrow ("20k", "1.5M").
    let top = step * n as f64;
    let (unit, suffix) = if top >= 1e7 {
        (1e6, "M")
    } else if top >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let decimals = (-(step / unit).log10().floor()).max(0.0) as usize;
    (0..=n)
        .map(|i| {
            let v = step * i as f64;
            let label = if i == 0 {
                "0".to_string()
            } else {
                format!("{:.*}{suffix}", decimals, v / unit)
            };
            (v, label)
        })
        .collect()
}

/// Round steps of a time axis, in seconds: seconds, minutes, hours (dividing a day) and days.
const TIME_STEPS: [f64; 22] = [
    1.0,
    2.0,
    5.0,
    10.0,
    15.0,
    30.0,
    60.0,
    120.0,
    300.0,
    600.0,
    900.0,
    1800.0,
    3600.0,
    7200.0,
    10800.0,
    21600.0,
    43200.0,
    86400.0,
    172_800.0,
    604_800.0,
    1_209_600.0,
    2_419_200.0,
];

/// The smallest round duration (seconds) that divides `max` seconds into at most `target`
/// steps.
pub(super) fn time_step(max: f64, target: usize) -> f64 {
    let target = target.max(1) as f64;
    TIME_STEPS
        .into_iter()
        .find(|s| max / s <= target)
        // Past 4 weeks × target: a 1-2-5 number of days.
        .unwrap_or_else(|| nice_step(max / target / 86400.0).max(1.0) * 86400.0)
}

/// Ticks of a time axis (seconds) from 0 to `max`, at most `target` steps of a round duration
/// (0, 6h, 12h, 18h, 1d; 0, 7d, 14d, …), labelled as durations. The axis ends at `max` (the
/// run's end or the longest wait), not at a tick.
pub(super) fn time_ticks(max: f64, target: usize) -> Vec<Tick> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let step = time_step(max, target);
    let n = (max / step + 1e-9).floor() as usize;
    (0..=n)
        .map(|i| {
            let v = step * i as f64;
            (v, if i == 0 { "0".into() } else { duration(v) })
        })
        .collect()
}

/// A duration in its two largest units, rounded to the second: "45s", "12m 30s", "3h 20m",
/// "1d", "2d 4h"; under a second with one decimal ("0.4s"). A unit that is zero is left out
/// of the pair's tail ("1d", not "1d 0h").
pub(super) fn duration(secs: f64) -> String {
    if !secs.is_finite() {
        return "n/a".into();
    }
    if secs.abs() < 1.0 && secs != 0.0 {
        return format!("{secs:.1}s");
    }
    let sign = if secs < 0.0 { "-" } else { "" };
    let total = secs.abs().round() as u64;
    if total == 0 {
        return "0s".into();
    }
    let parts = [
        (total / 86400, "d"),
        (total % 86400 / 3600, "h"),
        (total % 3600 / 60, "m"),
        (total % 60, "s"),
    ];
    let first = parts.iter().position(|(v, _)| *v > 0).expect("total > 0");
    let mut s = format!("{sign}{}{}", parts[first].0, parts[first].1);
    if let Some((v, u)) = parts.get(first + 1).filter(|(v, _)| *v > 0) {
        s.push_str(&format!(" {v}{u}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(t: &[Tick]) -> Vec<&str> {
        t.iter().map(|(_, l)| l.as_str()).collect()
    }

    #[test]
    fn value_ticks_step_by_1_2_5_and_end_on_a_tick_at_or_above_the_max() {
        assert_eq!(
            labels(&value_ticks(236.0, 5, true)),
            ["0", "50", "100", "150", "200", "250"]
        );
        assert_eq!(
            labels(&value_ticks(8.0, 5, true)),
            ["0", "2", "4", "6", "8"]
        );
        assert_eq!(
            labels(&value_ticks(1.0, 4, false)),
            ["0", "0.5", "1.0"],
            "shares step by 0.5 when 4 ticks are asked for"
        );
        assert_eq!(
            labels(&value_ticks(0.73, 5, false)),
            ["0", "0.2", "0.4", "0.6", "0.8"]
        );
        // Counts never step by less than one.
        assert_eq!(labels(&value_ticks(1.0, 5, true)), ["0", "1"]);
        assert_eq!(
            labels(&value_ticks(2848.0, 5, true)),
            ["0", "1000", "2000", "3000"]
        );
        assert_eq!(
            labels(&value_ticks(81920.0, 5, true)),
            ["0", "20k", "40k", "60k", "80k", "100k"]
        );
        assert_eq!(labels(&value_ticks(0.0, 5, true)), ["0", "1"]);
    }

    #[test]
    fn time_ticks_fall_on_round_hours_and_days() {
        assert_eq!(
            labels(&time_ticks(86400.0, 6)),
            ["0", "6h", "12h", "18h", "1d"]
        );
        assert_eq!(
            labels(&time_ticks(2.0 * 86400.0, 6)),
            ["0", "12h", "1d", "1d 12h", "2d"]
        );
        assert_eq!(
            labels(&time_ticks(109.5 * 86400.0, 6)),
            ["0", "28d", "56d", "84d"]
        );
        assert_eq!(
            labels(&time_ticks(45.0 * 60.0, 6)),
            ["0", "10m", "20m", "30m", "40m"]
        );
        let long = time_ticks(400.0 * 86400.0, 6);
        assert_eq!(labels(&long), ["0", "100d", "200d", "300d", "400d"]);
    }

    #[test]
    fn durations_read_in_their_two_largest_units() {
        assert_eq!(duration(0.0), "0s");
        assert_eq!(duration(0.4), "0.4s");
        assert_eq!(duration(45.0), "45s");
        assert_eq!(duration(750.0), "12m 30s");
        assert_eq!(duration(12000.0), "3h 20m");
        assert_eq!(duration(3600.0 * 4.0 + 1173.0), "4h 19m");
        assert_eq!(duration(86400.0), "1d");
        assert_eq!(duration(2.0 * 86400.0 + 4.0 * 3600.0 + 59.0), "2d 4h");
        assert_eq!(
            duration(86400.0 + 60.0),
            "1d",
            "minutes are past the two units"
        );
        assert_eq!(duration(-90.0), "-1m 30s");
    }
}
