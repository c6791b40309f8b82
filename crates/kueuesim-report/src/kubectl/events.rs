//! Events on the objects kubectl shows them on (Kueue's on the Workload, the gang
//! schedulers' on the PodGroup, the per-pod ones on the pods, the job controller's on the
//! job), repeats folded into one with a count as client-go's event correlator
//! (`EventLogger`) does before the events reach the API server; printed by kubectl's
//! `DescribeEvents` and as `kubectl get events` lists them.

use std::borrow::Cow;
use std::collections::BTreeMap;

use kueuesim_model::World;

use super::age;
use super::podgroups::PodGroup;
use crate::output::{SimulationResult, WorkloadOut};

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

/// The object an event is recorded on (`involvedObject`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Involved {
    /// Its namespace.
    pub namespace: String,
    /// Its API kind (`Workload`, `PodGroup`, `Pod`, `Job`, …).
    pub kind: String,
    /// Its API version.
    pub api_version: &'static str,
    /// Its name.
    pub name: String,
}

impl Involved {
    /// kubectl's OBJECT column: `<lower-case kind>/<name>`.
    pub(super) fn target(&self) -> String {
        format!("{}/{}", self.kind.to_lowercase(), self.name)
    }
}

/// Whether an event of `source` is Kueue's own about the Workload (its scheduler, workload
/// controller and provisioning admission check controller record on the Workload object).
pub(super) fn on_workload(source: &str) -> bool {
    matches!(
        source,
        "kueue-admission" | "kueue-workload-controller" | "kueue-provisioning-request-controller"
    )
}

/// A workload's Kueue events up to `at`, as `describe workload` shows them: the scheduler's
/// and the workload controller's. The gang schedulers record theirs on the PodGroup, the
/// schedulers' per-pod events are on the pods and the job controller's on the job.
pub(super) fn workload_events(w: &WorkloadOut, at: f64) -> Vec<RawEvent<'_>> {
    w.events
        .iter()
        .filter(|e| e.at <= at && on_workload(e.source))
        .map(|e| RawEvent {
            at: e.at,
            kind: e.kind,
            reason: e.reason,
            source: e.source,
            message: Cow::Borrowed(e.message.as_str()),
        })
        .collect()
}

/// A PodGroup's events up to `at`: its gang scheduler's (Volcano's `Unschedulable`, KAI's
/// `Unschedulable` and `Evict`).
pub(super) fn pod_group_events<'a>(pg: &PodGroup<'a>, at: f64) -> Vec<RawEvent<'a>> {
    let source = pg.scheduler.event_source();
    pg.workload
        .events
        .iter()
        .filter(|e| e.at <= at && e.source == source)
        .map(|e| RawEvent {
            at: e.at,
            kind: e.kind,
            reason: e.reason,
            source: e.source,
            message: Cow::Borrowed(e.message.as_str()),
        })
        .collect()
}

/// Every event up to `at`, on the object kubectl shows it on: Kueue's on the Workload, the
/// job controller's on the job, Volcano's and KAI's on the PodGroup, each scheduler's per-pod
/// events (and `Scheduled`) on the pods that exist at `at`. The result document's per-workload
/// `events` list is left as it is.
pub(super) fn routed<'a>(
    world: &'a World,
    doc: &'a SimulationResult,
    at: f64,
) -> Vec<(Involved, Vec<RawEvent<'a>>)> {
    let specs = super::specs(world);
    let mut by_object: BTreeMap<Involved, Vec<RawEvent<'a>>> = BTreeMap::new();
    let groups = super::podgroups::pod_groups(world, doc, at);
    for pg in &groups {
        let events = pod_group_events(pg, at);
        if !events.is_empty() {
            let object = Involved {
                namespace: pg.workload.namespace.clone(),
                kind: "PodGroup".into(),
                api_version: pg.api_version(),
                name: pg.name.clone(),
            };
            by_object.entry(object).or_default().extend(events);
        }
    }
    for w in super::present(doc, at) {
        let spec = specs.get(&(w.namespace.as_str(), w.name.as_str())).copied();
        for e in w.events.iter().filter(|e| e.at <= at) {
            let object = if on_workload(e.source) {
                Involved {
                    namespace: w.namespace.clone(),
                    kind: "Workload".into(),
                    api_version: "kueue.x-k8s.io/v1beta1",
                    name: w.name.clone(),
                }
            } else if e.source == "kueue-job-controller" {
                let (kind, name) = spec
                    .and_then(super::objects::job_of)
                    .unwrap_or_else(|| ("Workload".to_string(), w.name.clone()));
                let (api_version, kind) = super::objects::owner_type(&kind);
                Involved {
                    namespace: w.namespace.clone(),
                    kind: kind.to_string(),
                    api_version,
                    name: name.to_string(),
                }
            } else {
                // The schedulers' events: on the PodGroup (above) and on the pods (below).
                continue;
            };
            by_object.entry(object).or_default().push(RawEvent {
                at: e.at,
                kind: e.kind,
                reason: e.reason,
                source: e.source,
                message: Cow::Borrowed(e.message.as_str()),
            });
        }
    }
    for pod in super::pods::pods_at(world, doc, at) {
        let events = super::pods::pod_events(world, &pod, at);
        if !events.is_empty() {
            let object = Involved {
                namespace: pod.workload.namespace.clone(),
                kind: "Pod".into(),
                api_version: "v1",
                name: pod.name.to_string(),
            };
            by_object.entry(object).or_default().extend(events);
        }
    }
    by_object.into_iter().collect()
}

/// One Event object of `get events`: the folded repeats of one event on one object, named as
/// the recorder names it (`<object>.<first timestamp in nanoseconds, hex>`).
pub(super) struct EventItem<'a> {
    /// The involved object.
    pub object: Involved,
    /// The folded event.
    pub event: FoldedEvent<'a>,
    /// Its name.
    pub name: String,
}

/// Every Event object at `at` (repeats folded per object), in no particular order.
pub(super) fn event_items<'a>(
    world: &'a World,
    doc: &'a SimulationResult,
    at: f64,
) -> Vec<EventItem<'a>> {
    let mut out = Vec::new();
    for (object, events) in routed(world, doc, at) {
        let folded = fold_events(
            events
                .into_iter()
                .map(|e| (e.at, e.kind, e.reason, e.source, e.message.into_owned())),
        );
        for event in folded {
            let nanos =
                (world.config.start_unix_ms as i128 + (event.first * 1000.0) as i128) * 1_000_000;
            let name = format!("{}.{:x}", object.name, nanos.max(0));
            out.push(EventItem {
                object: object.clone(),
                event,
                name,
            });
        }
    }
    out
}

/// An Event as the API server returns it.
pub(super) fn event_object(world: &World, e: &EventItem<'_>) -> serde_json::Value {
    let ts = |s: f64| super::rfc3339(world, s);
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": e.name,
            "namespace": e.object.namespace,
            "creationTimestamp": ts(e.event.first),
        },
        "involvedObject": {
            "apiVersion": e.object.api_version,
            "kind": e.object.kind,
            "name": e.object.name,
            "namespace": e.object.namespace,
        },
        "type": e.event.kind,
        "reason": e.event.reason,
        "message": e.event.message,
        "count": e.event.count,
        "firstTimestamp": ts(e.event.first),
        "lastTimestamp": ts(e.event.last),
        "source": {"component": e.event.source},
        "reportingComponent": e.event.source,
    })
}

/// `kubectl get events` columns (`printEvent`): LAST SEEN, TYPE, REASON, OBJECT, MESSAGE;
/// wide: LAST SEEN, TYPE, REASON, OBJECT, SUBOBJECT, SOURCE, MESSAGE, FIRST SEEN, COUNT, NAME.
pub(super) fn event_cells(e: &EventItem<'_>, at: f64, wide: bool) -> Vec<String> {
    let last = age(at, e.event.last);
    let message = e.event.message.trim().to_string();
    if wide {
        vec![
            last,
            e.event.kind.to_string(),
            e.event.reason.to_string(),
            e.object.target(),
            String::new(),
            e.event.source.to_string(),
            message,
            age(at, e.event.first),
            e.event.count.to_string(),
            e.name.clone(),
        ]
    } else {
        vec![
            last,
            e.event.kind.to_string(),
            e.event.reason.to_string(),
            e.object.target(),
            message,
        ]
    }
}

/// The headers of `event_cells`.
pub(super) fn event_headers(wide: bool) -> Vec<&'static str> {
    if wide {
        vec![
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SUBOBJECT",
            "SOURCE",
            "MESSAGE",
            "FIRST SEEN",
            "COUNT",
            "NAME",
        ]
    } else {
        vec!["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    }
}
