//! Events as `kubectl describe` shows them: repeats folded into one line with a count, as
//! client-go's event correlator (`EventLogger`) does before the events reach the API server,
//! printed by kubectl's `DescribeEvents`.

use std::collections::BTreeMap;

use super::age;

/// One event as an object's describe shows it, before folding.
#[derive(Clone, Debug)]
pub(super) struct RawEvent<'a> {
    pub at: f64,
    pub kind: &'a str,
    pub reason: &'a str,
    pub source: &'a str,
    pub message: std::borrow::Cow<'a, str>,
}

/// Repeats of one event: kubectl's `count`, `firstTimestamp` and `lastTimestamp`.
#[derive(Clone, Debug, PartialEq)]
pub struct FoldedEvent<'a> {
    /// `Normal` or `Warning`.
    pub kind: &'a str,
    /// Reason.
    pub reason: &'a str,
    /// The reporting component (`From`).
    pub source: &'a str,
    /// Message.
    pub message: String,
    /// The first occurrence (seconds from the start).
    pub first: f64,
    /// The latest occurrence.
    pub last: f64,
    /// How many times it was recorded.
    pub count: u32,
}

/// Folds events that share type, reason, source and message (client-go's `EventLogger` key;
/// the involved object is the one being described) into one with a count and the first and
/// last times, ordered by the last time as kubectl sorts them (`SortableEvents`), ties in
/// order of first appearance. The recorder's `EventAggregator` (similar events with different
/// messages combined after 10 in 10 minutes) is not mirrored: each message stays its own line.
pub fn fold_events<'a, I>(events: I) -> Vec<FoldedEvent<'a>>
where
    I: IntoIterator<Item = (f64, &'a str, &'a str, &'a str, String)>,
{
    let mut index: BTreeMap<(&str, &str, &str, String), usize> = BTreeMap::new();
    let mut out: Vec<FoldedEvent<'a>> = Vec::new();
    for (at, kind, reason, source, message) in events {
        match index.entry((kind, reason, source, message.clone())) {
            std::collections::btree_map::Entry::Occupied(e) => {
                let f = &mut out[*e.get()];
                f.count += 1;
                f.first = f.first.min(at);
                f.last = f.last.max(at);
            }
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(out.len());
                out.push(FoldedEvent {
                    kind,
                    reason,
                    source,
                    message,
                    first: at,
                    last: at,
                    count: 1,
                });
            }
        }
    }
    out.sort_by(|a, b| a.last.total_cmp(&b.last));
    out
}

/// The `Events:` section (lines for `tabwrite`): kubectl's `DescribeEvents`, whose Age column
/// reads `<age of last> (x<count> over <age of first>)` for a repeated event.
pub(super) fn event_lines(events: Vec<RawEvent<'_>>, at: f64) -> Vec<String> {
    let folded = fold_events(
        events
            .into_iter()
            .map(|e| (e.at, e.kind, e.reason, e.source, e.message.into_owned())),
    );
    if folded.is_empty() {
        return vec!["Events:\t<none>".into()];
    }
    let mut l = vec![
        "Events:".to_string(),
        "  Type\tReason\tAge\tFrom\tMessage".into(),
        "  ----\t------\t----\t----\t-------".into(),
    ];
    for e in folded {
        let when = if e.count > 1 {
            format!(
                "{} (x{} over {})",
                age(at, e.last),
                e.count,
                age(at, e.first)
            )
        } else {
            age(at, e.first)
        };
        l.push(format!(
            "  {}\t{}\t{when}\t{}\t{}",
            e.kind, e.reason, e.source, e.message
        ));
    }
    l
}
