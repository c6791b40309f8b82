//! What Volcano says about a pod it could not place: the predicates' fit errors over the
//! nodes it looked at (`FitErrors.Error()`), the HyperNode prefix of a topology search's, and
//! the gang plugin's `Unschedulable` message for a PodGroup that is not ready. Written piece
//! by piece: a waiting gang fails again after every release.

use kueuesim_model::{DomainId, NodeId, ResourceId, Topology, World, decimal_digits};

use super::{Failure, VolcanoJob};
use crate::placement::{NodeCapacity, PodNeeds};

/// Volcano's `FitErrors.Error()` for a task none of `nodes` takes: the predicates' reasons,
/// but a node short of resources reports only the first one short (cpu, memory, then the
/// others by name) as `Insufficient <resource>`; `0/N nodes are unavailable: … .` over the
/// N nodes that do not take it.
pub(super) fn fit_error(
    world: &World,
    cap: &NodeCapacity,
    pod: &PodNeeds,
    nodes: &[NodeId],
) -> String {
    fit_error_with(world, cap, pod, nodes, &|_| None)
}

/// `fit_error` with a further predicate after the node-level ones: `device(node)` gives the
/// reason a node that passed them still fails (the deviceshare plugin's), or None.
pub(super) fn fit_error_with(
    world: &World,
    cap: &NodeCapacity,
    pod: &PodNeeds,
    nodes: &[NodeId],
    device: &dyn Fn(NodeId) -> Option<&'static str>,
) -> String {
    // Per distinct reason, its node count: a few reasons, so a short list (no string is made
    // per reason unless a node rejection worded one).
    let mut hist: Vec<(Reason<'_>, usize)> = Vec::new();
    let short = short_order(world, pod);
    // Counted by cause without a string per node (this runs on every failed attempt over
    // every node of the domain); the words are made once per distinct cause below.
    let mut insufficient = vec![0usize; short.len()];
    let mut too_many = 0usize;
    // On plain nodes a pod without a nodeSelector passes the static filters everywhere: the
    // node records need not be read (this runs over a HyperNode's nodes on every failure).
    let static_ok = cap.statically_plain(pod);
    for &n in nodes {
        if cap.fits(n, &pod.requests)
            && (static_ok || crate::placement::statically_feasible(world, n, pod))
        {
            if let Some(reason) = device(n) {
                count(&mut hist, Reason::text(reason), 1);
            }
            continue;
        }
        if !static_ok && !crate::placement::statically_feasible(world, n, pod) {
            let reason = crate::placement::node_rejections(world, cap, n, pod)
                .into_iter()
                .next()
                .unwrap_or_default();
            count(&mut hist, Reason::owned(reason), 1);
        } else if let Some(i) = short
            .iter()
            .position(|&(_, _, r, a)| a > cap.free(n, r.index()))
        {
            insufficient[i] += 1;
        } else {
            too_many += 1;
        }
    }
    fit_text(hist, &short, &insufficient, too_many)
}

/// The order in which a node short of resources reports the first one short: cpu, memory,
/// then the others by name (with their amounts requested by the pod).
pub(super) type ShortOrder<'w> = Vec<(u8, &'w str, ResourceId, i64)>;

/// `pod`'s requests in `ShortOrder`.
pub(super) fn short_order<'w>(world: &'w World, pod: &PodNeeds) -> ShortOrder<'w> {
    let mut short: ShortOrder<'w> = pod
        .requests
        .iter()
        .map(|(r, a)| {
            let name = world.resources.name(r);
            let rank = match name {
                "cpu" => 0,
                "memory" => 1,
                _ => 2,
            };
            (rank, name, r, a)
        })
        .collect();
    short.sort();
    short
}

/// `FitErrors.Error()` from the nodes counted per reason: `hist` the worded ones, then
/// `insufficient[i]` nodes short first of `short[i]`'s resource and `too_many` without a pod
/// slot.
pub(super) fn fit_text<'a>(
    mut hist: Vec<(Reason<'a>, usize)>,
    short: &ShortOrder<'a>,
    insufficient: &[usize],
    too_many: usize,
) -> String {
    for (i, &c) in insufficient.iter().enumerate() {
        if c > 0 {
            let reason = Reason {
                prefix: "Insufficient ",
                text: std::borrow::Cow::Borrowed(short[i].1),
            };
            count(&mut hist, reason, c);
        }
    }
    if too_many > 0 {
        count(&mut hist, Reason::text("Too many pods"), too_many);
    }
    // `FitErrors.Error()`: N counts the nodes that gave a reason (`f.nodes`), not every node
    // looked at; with none, the message ends there.
    let failed: usize = hist.iter().map(|h| h.1).sum();
    if failed == 0 {
        return "0/0 nodes are unavailable".to_string();
    }
    // The parts `<count> <reason>` sorted as strings (`sort.Strings`), written without a
    // string each.
    hist.sort_by(|a, b| counted_cmp(a.1, &a.0, b.1, &b.0));
    let mut out = String::with_capacity(64);
    out.push_str("0/");
    push_count(&mut out, failed);
    out.push_str(" nodes are unavailable: ");
    for (i, (r, c)) in hist.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_count(&mut out, *c);
        out.push(' ');
        out.push_str(r.prefix);
        out.push_str(&r.text);
    }
    out.push('.');
    out
}

/// Adds `n` nodes to `reason`'s count in `hist` (keyed by the text, however it is made).
fn count<'a>(hist: &mut Vec<(Reason<'a>, usize)>, reason: Reason<'a>, n: usize) {
    match hist.iter_mut().find(|(r, _)| r.same_text(&reason)) {
        Some((_, c)) => *c += n,
        None => hist.push((reason, n)),
    }
}

/// A fit-error reason: its text is `prefix` then `text` (`Insufficient ` and a resource's
/// name, or a whole reason with an empty prefix).
pub(super) struct Reason<'a> {
    prefix: &'static str,
    text: std::borrow::Cow<'a, str>,
}

impl<'a> Reason<'a> {
    fn text(text: &'a str) -> Self {
        Reason {
            prefix: "",
            text: std::borrow::Cow::Borrowed(text),
        }
    }

    fn owned(text: String) -> Self {
        Reason {
            prefix: "",
            text: std::borrow::Cow::Owned(text),
        }
    }

    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        self.prefix.bytes().chain(self.text.bytes())
    }

    /// Whether both read the same (the histogram is keyed by the text, however it is made).
    fn same_text(&self, other: &Reason<'_>) -> bool {
        self.prefix.len() + self.text.len() == other.prefix.len() + other.text.len()
            && self.bytes().eq(other.bytes())
    }
}

/// How `<ca> <a>` and `<cb> <b>` compare as written strings (`counted_text_cmp`).
fn counted_cmp(ca: usize, a: &Reason<'_>, cb: usize, b: &Reason<'_>) -> std::cmp::Ordering {
    let (mut da, mut db) = ([0; 20], [0; 20]);
    let ia = decimal_digits(ca as u64, &mut da).bytes();
    let ib = decimal_digits(cb as u64, &mut db).bytes();
    ia.chain(*b" ")
        .chain(a.bytes())
        .cmp(ib.chain(*b" ").chain(b.bytes()))
}

/// Appends `n` in decimal, as `{n}` writes it.
fn push_count(out: &mut String, n: usize) {
    let mut buf = [0; 20];
    out.push_str(decimal_digits(n as u64, &mut buf));
}

/// How `format!("{count} {text}")` of `a` and of `b` compare as strings (`sort.Strings` on
/// Volcano's and Kubernetes' count histograms), without writing them: decimal digits compare
/// as text, so "10 x" sorts before "2 x".
fn counted_text_cmp(a: (usize, &str), b: (usize, &str)) -> std::cmp::Ordering {
    let (mut da, mut db) = ([0; 20], [0; 20]);
    let ia = decimal_digits(a.0 as u64, &mut da).bytes();
    let ib = decimal_digits(b.0 as u64, &mut db).bytes();
    let ia = ia.chain(*b" ").chain(a.1.bytes());
    let ib = ib.chain(*b" ").chain(b.1.bytes());
    ia.cmp(ib)
}

/// The name a fit error quotes for HyperNode `d` (`volcano_fit`): none for the virtual root.
pub(super) fn hypernode_name(t: &Topology, d: DomainId) -> Option<&str> {
    (d != DomainId::ROOT).then(|| t.domain(d).name.as_str())
}

/// The HyperNode prefix of fit errors from hypernode searches.
pub(super) fn volcano_fit(fit: &str, hypernode: Option<&str>) -> String {
    match hypernode {
        Some(h) => format!("In hyperNode {h}: {fit}"),
        None => fit.to_string(),
    }
}

/// The pod an allocation stopped at and what it reports: the gang's message while the gang
/// is not ready (`gang_ready`), else the pod's own fit errors.
pub(super) fn unplaced(
    job: &VolcanoJob<'_>,
    f: Failure,
    gang_ready: bool,
    bound: usize,
    pending: usize,
    total: usize,
) -> (usize, usize, String) {
    let (ps, idx) = f.pod;
    let message = if gang_ready {
        f.fit
    } else {
        let task = (job.pod_name)(ps, idx);
        gang_message(
            bound,
            pending,
            job.min_member,
            total,
            f.schedulable,
            &task,
            &f.fit,
        )
    };
    (ps, idx, message)
}

/// The gang plugin's message for a job allocate did not try (its queue was overused or
/// had no room within its deserved share): the histogram without an origin reason.
pub fn not_tried_message(
    running: usize,
    pending: usize,
    min_member: usize,
    total: usize,
) -> String {
    let mut m = gang_message(running, pending, min_member, total, 0, "", "");
    if let Some(at) = m.find(". Origin reason is ") {
        m.truncate(at);
    }
    m
}

/// The PodGroup `Unschedulable` event Volcano's gang plugin writes:
/// `<pending>/<tasks> tasks in gang unschedulable: pod group is not ready, <histogram>;
/// Pending: <n> Unschedulable[, <m> Schedulable]. Origin reason is <task>: <fit errors>`.
pub(super) fn gang_message(
    running: usize,
    pending: usize,
    min_member: usize,
    total: usize,
    schedulable: usize,
    task: &str,
    fit: &str,
) -> String {
    // The histogram's parts sorted as strings (`sort.Strings`), written into one string.
    let mut hist = [
        (pending, "Pending"),
        (min_member, "minAvailable"),
        (running, "Running"),
    ];
    let parts = if running > 0 { 3 } else { 2 };
    hist[..parts].sort_by(|&a, &b| counted_text_cmp(a, b));
    let unschedulable = pending - schedulable.min(pending);
    // Written piece by piece: this runs for every failed attempt of a gang.
    let mut out = String::with_capacity(128 + task.len() + fit.len());
    push_count(&mut out, pending);
    out.push('/');
    push_count(&mut out, total);
    out.push_str(" tasks in gang unschedulable: pod group is not ready, ");
    for (i, (c, word)) in hist[..parts].iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_count(&mut out, *c);
        out.push(' ');
        out.push_str(word);
    }
    out.push_str("; Pending: ");
    push_count(&mut out, unschedulable);
    out.push_str(" Unschedulable");
    if schedulable > 0 {
        out.push_str(", ");
        push_count(&mut out, schedulable);
        out.push_str(" Schedulable");
    }
    out.push_str(". Origin reason is ");
    out.push_str(task);
    out.push_str(": ");
    out.push_str(fit);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::Cluster;
    use kueuesim_model::{Labels, Node, ResourceTable};
    use proptest::prelude::*;

    proptest! {
        /// Comparing `<count> <text>` without writing it orders as the written strings do.
        #[test]
        fn counted_text_orders_as_the_written_strings(
            a in (0usize..100_000, "[A-Za-z ./]{0,6}"),
            b in (0usize..100_000, "[A-Za-z ./]{0,6}"),
        ) {
            let written = |(c, t): &(usize, String)| format!("{c} {t}");
            prop_assert_eq!(
                counted_text_cmp((a.0, &a.1), (b.0, &b.1)),
                written(&a).cmp(&written(&b))
            );
        }

        /// The gang message, written into one string, is the one built from sorted parts.
        #[test]
        fn gang_message_as_built_from_sorted_parts(
            running in 0usize..30,
            pending in 0usize..30,
            min_member in 0usize..30,
            schedulable in 0usize..30,
        ) {
            let total = running + pending;
            let mut hist = vec![format!("{pending} Pending"), format!("{min_member} minAvailable")];
            if running > 0 {
                hist.push(format!("{running} Running"));
            }
            hist.sort();
            let unschedulable = pending - schedulable.min(pending);
            let mut pending_part = format!("{unschedulable} Unschedulable");
            if schedulable > 0 {
                pending_part.push_str(&format!(", {schedulable} Schedulable"));
            }
            let expected = format!(
                "{pending}/{total} tasks in gang unschedulable: pod group is not ready, {}; \
                 Pending: {pending_part}. Origin reason is t-0: fit",
                hist.join(", ")
            );
            prop_assert_eq!(
                gang_message(running, pending, min_member, total, schedulable, "t-0", "fit"),
                expected
            );
        }
    }

    /// A fit error over several causes: `FitErrors.Error()` counts the nodes per reason and
    /// sorts the `<count> <reason>` parts as strings (`sort.Strings`), so "10 …" comes before
    /// "2 …"; statically infeasible nodes give their first rejection.
    #[test]
    fn fit_error_counts_each_cause_and_sorts_the_parts_as_strings() {
        let mut resources = ResourceTable::default();
        let cpu = resources.intern("cpu");
        let mem = resources.intern("memory");
        const G: i64 = 1_000_000_000;
        let node = |i: usize, c: i64, m: i64, zone: &str| {
            let mut alloc = vec![0; 2];
            alloc[cpu.index()] = c;
            alloc[mem.index()] = m * G;
            Node {
                name: format!("n{i}"),
                labels: Labels::new(vec![("zone".into(), zone.into())]),
                allocatable: alloc,
                taints: vec![],
                unschedulable: false,
            }
        };
        let mut nodes = Vec::new();
        for _ in 0..10 {
            nodes.push(node(nodes.len(), 1000, 8, "a")); // short of cpu
        }
        for _ in 0..2 {
            nodes.push(node(nodes.len(), 4000, 1, "a")); // short of memory only
        }
        for _ in 0..2 {
            nodes.push(node(nodes.len(), 4000, 8, "b")); // another zone
        }
        let world = World {
            resources,
            nodes,
            ..World::default()
        };
        let cluster = Cluster::new(&world);
        let pod = PodNeeds {
            requests: kueuesim_model::resources::ResourceList::from_pairs(vec![
                (cpu, 2000),
                (mem, 2 * G),
            ]),
            node_selector: Labels::new(vec![("zone".into(), "a".into())]),
            tolerations: vec![],
        };
        let all: Vec<NodeId> = (0..world.nodes.len()).map(NodeId::from_index).collect();
        assert_eq!(
            fit_error(&world, &cluster.nodes, &pod, &all),
            "0/14 nodes are unavailable: 10 Insufficient cpu, 2 Insufficient memory, \
             2 node(s) didn't match Pod's node affinity/selector."
        );
        // Nodes that take the pod give no reason and are not counted.
        let fitting = node(0, 4000, 8, "a");
        let world = World {
            nodes: vec![fitting],
            ..world
        };
        let cluster = Cluster::new(&world);
        assert_eq!(
            fit_error(&world, &cluster.nodes, &pod, &[NodeId::from_index(0)]),
            "0/0 nodes are unavailable"
        );
    }
}
