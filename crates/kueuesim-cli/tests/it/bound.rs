//! `pendingBoundBy` as a user meets it: the summary's `BOUND BY` column, `queues.csv`'s
//! column, and `compare` of the platform at 128 and 192 GPUs for ml-team, which must say
//! that cpu and memory quota bind at 192.

use super::{csv_cells, kueuesim, run_out, stderr, stdout};

const GPUS_192: &str = "cq/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota=192";

/// `key=share;…` as pairs.
fn shares(cell: &str) -> Vec<(String, f64)> {
    cell.split(';')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').expect("key=share");
            (k.to_string(), v.parse().expect("a share"))
        })
        .collect()
}

#[test]
fn compare_says_the_gpu_quota_raise_is_bound_by_cpu_and_memory_quota() {
    let a = run_out("bound-a", "platform", &["--write", "summary,queues"]);
    let b = run_out(
        "bound-b",
        "platform",
        &["--set", GPUS_192, "--write", "summary,queues"],
    );
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = kueuesim(&["compare", a, b]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let note = out
        .lines()
        .find(|l| l.starts_with("Note: ml-team: nvidia.com/gpu nominal quota 128 → 192"))
        .unwrap_or_else(|| panic!("no note on ml-team's GPU quota:\n{out}"));
    assert!(
        note.contains(", but at 192 (B) its pending time is bound by quota:cpu ")
            && note.contains("quota:memory ")
            && note.contains("; at 128 (A) ")
            && note.ends_with("the nvidia.com/gpu nominal quota does not bind at 192"),
        "{note}"
    );
    // Both sides' shares, per queue, and the figures as percentages.
    assert!(out.contains("What held each queue back"), "{out}");
    let section: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("What held"))
        .collect();
    let ml = section
        .iter()
        .position(|l| l.trim_start().starts_with("ml-team "))
        .expect("ml-team in the section");
    assert!(
        section[ml].contains("A: quota:nvidia.com/gpu"),
        "{}",
        section[ml]
    );
    assert!(
        section[ml + 1].contains("B: quota:cpu"),
        "{}",
        section[ml + 1]
    );
    assert!(
        out.contains("clusterQueues[ml-team].pendingBoundBy.quota:nvidia.com/gpu"),
        "{out}"
    );
    // Lowering it again: the old value did not bind.
    let back = stdout(&kueuesim(&["compare", b, a]));
    assert!(
        back.contains("Note: ml-team: nvidia.com/gpu nominal quota 192 → 128; at 192 (A) its pending time is bound by quota:cpu"),
        "{back}"
    );
    // --figures without a share keeps the note, not the section.
    let few = stdout(&kueuesim(&[
        "compare",
        a,
        b,
        "--figures",
        "waitSecondsAdmitted.p95",
    ]));
    assert!(
        few.contains("Note: ml-team") && !few.contains("What held"),
        "{few}"
    );

    // queues.csv: the last column, ml-team's shares summing to 1, GPU quota first at 128.
    let csv = std::fs::read_to_string(std::path::Path::new(a).join("queues.csv")).unwrap();
    let mut lines = csv.lines();
    let header = csv_cells(lines.next().unwrap());
    assert_eq!(header.last().map(String::as_str), Some("pendingBoundBy"));
    let row = lines
        .map(csv_cells)
        .find(|c| c[0] == "ClusterQueue" && c[2] == "ml-team")
        .expect("ml-team's row");
    let s = shares(row.last().unwrap());
    let sum: f64 = s.iter().map(|p| p.1).sum();
    assert!((sum - 1.0).abs() < 1e-3, "{s:?}");
    let gpu = s.iter().find(|p| p.0 == "quota:nvidia.com/gpu").unwrap().1;
    assert!(gpu > 0.5, "{s:?}");
    let inference = csv
        .lines()
        .map(csv_cells)
        .find(|c| c[0] == "ClusterQueue" && c[2] == "inference")
        .unwrap();
    // Serving waited only for nodes (llm-large's second group at 9h needs two whole nodes).
    assert_eq!(
        inference.last().map(String::as_str),
        Some("nodes=1.0000"),
        "waited for nodes alone"
    );
    std::fs::remove_dir_all(a).unwrap();
    std::fs::remove_dir_all(b).unwrap();
}

#[test]
fn the_summary_table_says_what_bound_each_queue() {
    let o = kueuesim(&["run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let header = out.lines().find(|l| l.contains("QUEUE")).unwrap();
    assert!(header.trim_end().ends_with("BOUND BY"), "{header}");
    let ml = out
        .lines()
        .find(|l| l.trim_start().starts_with("ml-team "))
        .unwrap();
    assert!(
        ml.contains("quota:nvidia.com/gpu 75%, quota:cpu 12%"),
        "{ml}"
    );
    let inference = out
        .lines()
        .find(|l| l.trim_start().starts_with("inference "))
        .unwrap();
    // Serving fits its quota and waits only for nodes (llm-large's second group at 9h needs
    // two whole nodes).
    assert!(inference.trim_end().ends_with(" nodes 100%"), "{inference}");
}

/// `run --seeds --out` writes a `ReplicateResults`; compare averages its seeds' shares (a
/// constraint a seed did not see counts 0 there) and notes the raise all the same.
#[test]
fn compare_averages_the_shares_of_replicates() {
    let a = run_out(
        "bound-seeds-a",
        "platform",
        &["--seeds", "1..2", "--write", "summary"],
    );
    let b = run_out(
        "bound-seeds-b",
        "platform",
        &["--seeds", "1..2", "--set", GPUS_192, "--write", "summary"],
    );
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = kueuesim(&[
        "compare",
        a,
        b,
        "--figures",
        "clusterQueues[ml-team].pendingBoundBy.*",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("Note: ml-team: nvidia.com/gpu nominal quota 128 → 192"),
        "{out}"
    );
    // Every share line has a value on both sides.
    for l in out.lines().filter(|l| l.contains(".pendingBoundBy.")) {
        let cells: Vec<&str> = l.split_whitespace().collect();
        assert!(cells[1] != "-" && cells[2] == "%", "{l}");
    }
    std::fs::remove_dir_all(a).unwrap();
    std::fs::remove_dir_all(b).unwrap();
}

/// A workload parked with its scheduling shape (SchedulingEquivalenceHashing) has no
/// condition of its own, as upstream writes none; the summary still says why it waits.
#[test]
fn a_workload_parked_with_its_shape_says_why_in_the_summary() {
    // Seed 7 of the platform's day has one (the default seed, 42, has none since the
    // inference namespace serves for real).
    let o = kueuesim(&["run", "--warnings=none", "--seed", "7"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let waiting: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Waiting at the end"))
        .skip(2)
        .collect();
    assert!(!waiting.is_empty(), "{out}");
    for l in &waiting {
        let why = l.split("Pending").nth(1).unwrap_or("").trim();
        assert!(!why.is_empty(), "a waiting workload without a why: {l}");
    }
    assert!(
        waiting.iter().any(|l| l.contains(
            "parked as inadmissible with job-pretrain-35-c4c78-copy1, of the same scheduling shape"
        )),
        "{out}"
    );
}
