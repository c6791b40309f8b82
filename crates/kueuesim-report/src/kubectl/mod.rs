//! `kueuesim get` and `kueuesim describe`: the state at a time T printed as kubectl prints
//! the real objects (the CRDs' `additionalPrinterColumns`, kubectl's table printer). This
//! module owns the pieces every view shares (kubectl's ages, table and tabwriter layouts,
//! namespaces, the dispatch of `describe`); each view lives in its own file: `kinds.rs`
//! (kubectl's names of the kinds), `get.rs` (listings, names, selectors, sorting, output
//! formats), `objects.rs` (each object as the API server returns it), `jsonpath.rs`,
//! `selector.rs`, `describe.rs` (workloads and the generic describer), `pods.rs`, `node.rs`,
//! `queues.rs`, `podgroups.rs`, `events.rs` (routing to objects, folding, `get events`).

mod describe;
mod events;
mod get;
mod jsonpath;
mod kinds;
mod node;
mod objects;
mod podgroups;
mod pods;
mod queues;
mod selector;

use std::collections::BTreeMap;

use kueuesim_model::labels::LabelSelector;
use kueuesim_model::{SimDuration, Workload, World};

use crate::escape::terminal_field;
use crate::output::{SimulationResult, WorkloadOut};

pub use describe::describe_workload;
pub use events::{FoldedEvent, fold_events};
pub use get::{GetOutput, GetRequest, NotFound, Output, ViewError, get};
pub use jsonpath::{JsonPathError, Template};
pub use kinds::Kind;
pub use objects::{json_text, yaml_text};
pub use pods::{Pod, PodStatus, pods_at};
pub use selector::parse_selector;

/// What `describe` prints.
#[derive(Clone, Debug, Default)]
pub struct DescribeOutput {
    /// The descriptions, one after another.
    pub text: String,
    /// Lines for standard error that are not failures (`No resources found`).
    pub notes: Vec<String>,
    /// Names that match no object (exit 1).
    pub missing: Vec<NotFound>,
}

/// `kubectl describe KIND [NAME...]` at time `at`: each named object (with `-A`, the object of
/// that name in every namespace that has one), or with no name every object of the kind in
/// the namespaces shown that `selector` selects, one description after another.
pub fn describe(
    world: &World,
    doc: &SimulationResult,
    kind: Kind,
    ns: &Namespaces,
    names: &[String],
    selector: Option<&LabelSelector>,
    at: f64,
) -> Result<DescribeOutput, ViewError> {
    if !kind.describable() {
        return Err(ViewError::Usage(format!(
            "describe {:?}: expected {}",
            kind.singular(),
            Kind::DESCRIBE_KINDS
        )));
    }
    if !names.is_empty() && selector.is_some() {
        return Err(ViewError::Usage(
            "when names are given, -l/--selector cannot be used: give names or a selector".into(),
        ));
    }
    let items: Vec<get::Item> = get::listings(world, doc, kind, ns, at, false)
        .into_iter()
        .flat_map(|l| l.items)
        .collect();
    let mut out = DescribeOutput::default();
    let mut texts = Vec::new();
    let mut one = |i: &get::Item| -> Result<(), ViewError> {
        let ns = i.namespace.as_deref().unwrap_or_default();
        texts.push(describe_one(world, doc, kind, ns, &i.name, &i.object, at)?);
        Ok(())
    };
    if names.is_empty() {
        let chosen: Vec<&get::Item> = items
            .iter()
            .filter(|i| selector.is_none_or(|s| s.matches(&selector::object_labels(&i.object))))
            .collect();
        for i in &chosen {
            one(i)?;
        }
        if chosen.is_empty() {
            out.notes.push(match ns {
                Namespaces::One(n) if kind.namespaced() => {
                    format!("No resources found in {n} namespace.")
                }
                _ => "No resources found".to_string(),
            });
        }
    } else {
        for name in names {
            let matching: Vec<&get::Item> = items.iter().filter(|i| &i.name == name).collect();
            if matching.is_empty() {
                out.missing
                    .push(get::not_found(world, doc, kind, ns, name, at));
            }
            for i in matching {
                one(i)?;
            }
        }
    }
    out.text = texts.join("\n\n");
    Ok(out)
}

fn describe_one(
    world: &World,
    doc: &SimulationResult,
    kind: Kind,
    namespace: &str,
    name: &str,
    object: &serde_json::Value,
    at: f64,
) -> Result<String, ViewError> {
    let failed = ViewError::Failed;
    match kind {
        Kind::Workload => describe_workload(world, doc, namespace, name, at).map_err(failed),
        Kind::Pod => pods::describe_pod(world, doc, namespace, name, at).map_err(failed),
        Kind::Node => node::describe_node(world, doc, name, at).map_err(failed),
        Kind::ClusterQueue => queues::describe_cluster_queue(world, doc, name, at).map_err(failed),
        Kind::LocalQueue => {
            queues::describe_local_queue(world, doc, namespace, name, at).map_err(failed)
        }
        Kind::PodGroup => {
            let groups = podgroups::pod_groups(world, doc, at);
            let events = groups
                .iter()
                .find(|g| g.workload.namespace == namespace && g.name == name)
                .map(|g| events::pod_group_events(g, at))
                .unwrap_or_default();
            Ok(describe::generic_describe(object, events, at))
        }
        // Kueue's controllers record no events on Cohorts and ResourceFlavors.
        Kind::Cohort | Kind::ResourceFlavor => {
            Ok(describe::generic_describe(object, Vec::new(), at))
        }
        Kind::Event => Err(ViewError::Usage(
            "describe events: expected a kind that describes".into(),
        )),
    }
}

/// A `Key:` line with several values (labels, taints): the first on the key's line, the
/// others on lines of their own in the value column; `<none>` when there are none.
fn multiline(l: &mut Vec<String>, key: &str, values: &[String]) {
    match values.split_first() {
        None => l.push(format!("{key}:\t<none>")),
        Some((first, rest)) => {
            l.push(format!("{key}:\t{first}"));
            for x in rest {
                l.push(format!("\t{x}"));
            }
        }
    }
}

/// The loaded workloads by (namespace, reported name): the result document names workloads,
/// the views need their specs (owner kind, requests in Kueue units).
fn specs(world: &World) -> BTreeMap<(&str, &str), &Workload> {
    world
        .workloads
        .iter()
        .map(|w| ((w.namespace.as_str(), w.name.as_str()), w))
        .collect()
}

/// An instant of the run (seconds from the start) as RFC 3339, as `metav1.Time` prints.
fn rfc3339(world: &World, secs: f64) -> String {
    kueuesim_model::time::format_rfc3339(world.config.start_unix_ms + (secs * 1000.0) as i64)
}

/// An instant as Go's `time.RFC1123Z` (`Mon, 02 Jan 2006 15:04:05 -0700`), the layout of
/// kubectl describe's `Start Time`, `Started` and `Finished` (UTC).
fn rfc1123z(world: &World, secs: f64) -> String {
    let ms = world.config.start_unix_ms + (secs * 1000.0) as i64;
    let s = ms.div_euclid(1000);
    let days = s.div_euclid(86_400);
    let rem = s.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{}, {d:02} {} {y} {:02}:{:02}:{:02} +0000",
        WEEKDAYS[days.rem_euclid(7) as usize],
        MONTHS[(m - 1) as usize],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// kubectl's `duration.HumanDuration` (k8s.io/apimachinery/pkg/util/duration).
fn human_duration(d: SimDuration) -> String {
    let secs = d.millis().max(0) / 1000;
    if secs < 60 * 2 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// kubectl's table: its tabwriter (cli-runtime's `printers.GetNewTabWriter`: minimum cell
/// width 6 with the padding, padding 3), the last column not padded. Each cell's control characters are made visible first, as kubectl's table printer
/// does (`printers.EscapeTerminal`), so that the widths are those shown.
fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<std::borrow::Cow<'_, str>>> = rows
        .iter()
        .map(|r| r.iter().map(|c| terminal_field(c)).collect())
        .collect();
    let n = headers.len();
    let mut widths = vec![0usize; n];
    for (i, h) in headers.iter().enumerate() {
        widths[i] = h.chars().count();
    }
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == n {
                l.push_str(c);
            } else {
                let w = (widths[i] + 3).max(6);
                l.push_str(c);
                l.extend(std::iter::repeat_n(' ', w - c.chars().count()));
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(headers.to_vec());
    for r in &rows {
        line(r.iter().map(|c| c.as_ref()).collect());
    }
    out
}

/// Which namespaces `get` shows: one, or all (`-A`, adding the NAMESPACE column).
#[derive(Clone, Debug)]
pub enum Namespaces {
    /// `-n NS` (default `default`).
    One(String),
    /// `-A`.
    All,
}

impl Namespaces {
    /// Whether objects of namespace `ns` are shown.
    pub fn shows(&self, ns: &str) -> bool {
        match self {
            Namespaces::One(n) => n == ns,
            Namespaces::All => true,
        }
    }
}

fn condition<'a>(w: &'a WorkloadOut, kind: &str) -> Option<&'a crate::output::ConditionOut> {
    w.conditions.iter().find(|c| c.kind == kind)
}

/// Workloads that exist at `at` (seconds): arrived, and not deleted by a scale-down (the
/// document describes the state at `at`, so a deleted one is gone by then).
fn present(doc: &SimulationResult, at: f64) -> impl Iterator<Item = &WorkloadOut> {
    doc.workloads
        .iter()
        .filter(move |w| w.created_at <= at && !w.scaled_down)
}

fn age(at: f64, since: f64) -> String {
    human_duration(SimDuration::from_millis(
        ((at - since.max(0.0)) * 1000.0) as i64,
    ))
}

/// Go's tabwriter as kubectl describe uses it (padding 2): consecutive lines with the same
/// number of tab-separated cells form a block whose columns are aligned; the last cell of a
/// line is not padded. Each cell's control characters are made visible first (kubectl's
/// describe writes through `printers.EscapeTerminal`), so that the widths are those shown.
fn tabwrite(lines: &[String]) -> String {
    let lines: Vec<String> = lines
        .iter()
        .map(|l| {
            l.split('\t')
                .map(terminal_field)
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect();
    let cells: Vec<Vec<&str>> = lines.iter().map(|l| l.split('\t').collect()).collect();
    let mut out = String::new();
    let mut i = 0;
    while i < cells.len() {
        let n = cells[i].len();
        let mut j = i;
        while j < cells.len() && cells[j].len() == n && n > 1 {
            j += 1;
        }
        if j == i {
            out.push_str(&lines[i]);
            out.push('\n');
            i += 1;
            continue;
        }
        let mut widths = vec![0usize; n];
        for row in &cells[i..j] {
            for (c, cell) in row.iter().enumerate() {
                widths[c] = widths[c].max(cell.chars().count());
            }
        }
        for row in &cells[i..j] {
            let mut l = String::new();
            for (c, cell) in row.iter().enumerate() {
                l.push_str(cell);
                if c + 1 < n {
                    l.extend(std::iter::repeat_n(
                        ' ',
                        widths[c] + 2 - cell.chars().count(),
                    ));
                }
            }
            out.push_str(l.trim_end());
            out.push('\n');
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_as_kubectl_prints_them() {
        let s = |secs: i64| human_duration(SimDuration::from_secs(secs));
        assert_eq!(s(45), "45s");
        assert_eq!(s(119), "119s");
        assert_eq!(s(150), "2m30s");
        assert_eq!(s(600), "10m");
        assert_eq!(s(3 * 3600 + 120), "3h2m");
        assert_eq!(s(10 * 3600), "10h");
        assert_eq!(s(3 * 86400 + 3600), "3d1h");
        assert_eq!(s(30 * 86400), "30d");
    }

    #[test]
    fn repeats_fold_by_type_reason_source_and_message() {
        let e = |at: f64, reason: &'static str, msg: &str| {
            (at, "Warning", reason, "kueue-admission", msg.to_string())
        };
        let folded = fold_events([
            e(10.0, "Pending", "no quota"),
            e(20.0, "Pending", "other"),
            e(30.0, "Pending", "no quota"),
            e(40.0, "Evicted", "no quota"),
            e(50.0, "Pending", "no quota"),
        ]);
        let got: Vec<(&str, &str, u32, f64, f64)> = folded
            .iter()
            .map(|f| (f.reason, f.message.as_str(), f.count, f.first, f.last))
            .collect();
        // Ordered by the last occurrence, as kubectl sorts events.
        assert_eq!(
            got,
            [
                ("Pending", "other", 1, 20.0, 20.0),
                ("Evicted", "no quota", 1, 40.0, 40.0),
                ("Pending", "no quota", 3, 10.0, 50.0),
            ]
        );
        let lines = events::event_lines(
            vec![
                events::RawEvent {
                    at: 0.0,
                    kind: "Normal",
                    reason: "R",
                    source: "s",
                    message: "m".into(),
                },
                events::RawEvent {
                    at: 540.0,
                    kind: "Normal",
                    reason: "R",
                    source: "s",
                    message: "m".into(),
                },
            ],
            600.0,
        );
        assert_eq!(lines[3], "  Normal\tR\t60s (x2 over 10m)\ts\tm");
    }

    #[test]
    fn rfc1123z_is_gos_layout() {
        let mut world = World::default();
        world.config.start_unix_ms = 1_772_409_600_000; // 2026-03-02T00:00:00Z, a Monday
        assert_eq!(rfc1123z(&world, 3661.0), "Mon, 02 Mar 2026 01:01:01 +0000");
        world.config.start_unix_ms = 0;
        assert_eq!(rfc1123z(&world, 0.0), "Thu, 01 Jan 1970 00:00:00 +0000");
    }

    #[test]
    fn cells_show_control_characters_and_keep_their_columns() {
        let evil = "q\u{1b}[2J\u{1b}]0;pwned\u{7}";
        let t = table(&["NAME", "PENDING"], &[vec![evil.into(), "3".into()]]);
        assert_eq!(t, "NAME                 PENDING\nq^[[2J^[]0;pwned\\a   3\n");
        let d = tabwrite(&["Name:\tq\u{1b}[31m\rx".into(), "Namespace:\tdefault".into()]);
        assert_eq!(d, "Name:       q^[[31m\\rx\nNamespace:  default\n");
    }

    #[test]
    fn tables_pad_to_kubectl_widths() {
        let t = table(
            &["NAME", "CLUSTERQUEUE", "PENDING WORKLOADS"],
            &[vec!["q".into(), "team-a".into(), "3".into()]],
        );
        assert_eq!(
            t,
            "NAME   CLUSTERQUEUE   PENDING WORKLOADS\nq      team-a         3\n"
        );
    }
}
