//! `kueuesim sweep` and `kueuesim compare`: rows independent of --jobs, reruns that recompute
//! only what is missing, failed variants as rows, bad Sweep input at file:line:column, the
//! search against a brute-force grid, and compare's differences.

use std::path::{Path, PathBuf};

use super::{fixture, kueuesim, run_out, scenario, stderr, stdout, temp_dir};

const GPU: &str = "cq/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota";
const CPU: &str =
    "cq/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=cpu].nominalQuota=100000";

/// A Sweep of scenarios/platform over ml-team's GPU quota, written into `dir`.
fn sweep_file(dir: &Path, name: &str, spec: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata:\n  name: {name}\nspec:\n  base: {}\n{spec}",
        scenario("platform")
    );
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn grid(values: &str, seeds: &str) -> String {
    format!(
        "  seeds: {seeds}\n  figures: [waitSecondsInclPending.p90, \"clusterQueues[*].gpuShare\", cycles]\n  parameters:\n  - name: quota\n    values: {values}\n    set:\n    - '{GPU}={{{{value}}}}'\n    - '{CPU}'\n"
    )
}

fn run_sweep(file: &Path, out: &Path, jobs: &str) -> std::process::Output {
    kueuesim(&[
        "sweep",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        jobs,
    ])
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn sweep_rows_do_not_depend_on_jobs_and_a_rerun_recomputes_only_missing_rows() {
    let dir = temp_dir("sweep-jobs");
    let file = sweep_file(&dir, "q", &grid("[128, 192]", "1..2"));
    let (one, two) = (dir.join("one"), dir.join("two"));
    let a = run_sweep(&file, &one, "1");
    assert!(a.status.success(), "{}", stderr(&a));
    let b = run_sweep(&file, &two, "2");
    assert!(b.status.success(), "{}", stderr(&b));
    // The capacity checks of the runs, once per message with the variants that gave it:
    // 192 GPUs for ml-team puts the flavor's quota past its nodes' 256 GPUs; 128 does not.
    let warned = stderr(&a);
    assert_eq!(
        warned
            .matches("warning (quota=192): ResourceFlavor h100: nominal GPU quota 320 exceeds the 256 GPUs")
            .count(),
        1,
        "{warned}"
    );
    assert!(!warned.contains("(quota=128)"), "{warned}");
    let csv = read(&one.join("sweep.csv"));
    assert_eq!(csv, read(&two.join("sweep.csv")));
    assert_eq!(
        read(&one.join("sweep-summary.csv")),
        read(&two.join("sweep-summary.csv"))
    );
    let page = read(&one.join("sweep.html"));
    assert_eq!(page, read(&two.join("sweep.html")));
    assert!(
        page.contains("<h2>waitSecondsInclPending.p90</h2><svg") && !page.contains("http"),
        "a self-contained page with a plot per figure"
    );
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(
        lines[0].starts_with(
            "variant,quota,seed,status,error,seedsVary,workloadFingerprint,waitSecondsInclPending.p90,clusterQueues[inference].gpuShare,clusterQueues[ml-team].gpuShare"
        ),
        "{csv}"
    );
    // What the seeds vary, and each run's workload fingerprint: the same seed replays the
    // same workloads whatever the quota, another seed others.
    let vary =
        "arrivals (poisson at the input's hourly rate); durations (lognormal σ 0.35); tie-breaks";
    assert!(
        lines[1].starts_with(&format!("quota=128,128,1,ok,,{vary},")),
        "{csv}"
    );
    assert!(
        lines[4].starts_with(&format!("quota=192,192,2,ok,,{vary},")),
        "{csv}"
    );
    let print = |l: &str| l.split(',').nth(6).map(str::to_string);
    assert_eq!(print(lines[1]), print(lines[3]), "{csv}");
    assert_ne!(print(lines[1]), print(lines[2]), "{csv}");
    assert!(
        stdout(&a).contains("\nSeeds vary: arrivals (poisson at the input's hourly rate), durations (lognormal σ 0.35), tie-breaks\n"),
        "{}",
        stdout(&a)
    );
    assert!(stdout(&a).contains("quota=192  2     0"), "{}", stdout(&a));
    // Five kept figures (p90, three ClusterQueues' shares, cycles): the table shows four and
    // names the fifth.
    assert!(
        stdout(&a).contains("1 more kept figure in sweep.csv and sweep-summary.csv: cycles"),
        "{}",
        stdout(&a)
    );

    // Delete one row: the rerun makes just that run and writes the same file.
    let cut: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.starts_with("quota=192,192,1,"))
        .collect();
    std::fs::write(two.join("sweep.csv"), cut.join("\n") + "\n").unwrap();
    let c = run_sweep(&file, &two, "2");
    assert!(c.status.success(), "{}", stderr(&c));
    let err = stderr(&c);
    assert!(err.contains("reusing 3 runs"), "{err}");
    assert!(err.contains("1/1 runs done"), "{err}");
    assert_eq!(read(&two.join("sweep.csv")), csv);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failed_variant_is_an_error_row_not_a_lost_sweep() {
    // A run that fails while it runs (a streamed trace's bad row, met at its arrival) is one
    // row with its error; the other variants' rows are kept.
    let dir = temp_dir("sweep-failed");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("base.yaml"),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: default\n      resources:\n      - {name: cpu, nominalQuota: 4}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: default}\nspec: {clusterQueue: cq}\n---\n\
         apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"8\", memory: 16Gi}}\n---\n\
         apiVersion: kueuesim.io/v1alpha1\nkind: WorkloadTrace\nmetadata: {name: tr}\nspec:\n  format: native\n  path: good.csv\n",
    )
    .unwrap();
    let head = "arrival,queue,requests.cpu,duration\n0,q,1,60\n";
    std::fs::write(dir.join("good.csv"), head).unwrap();
    std::fs::write(dir.join("bad.csv"), format!("{head}10,q,lots,60\n")).unwrap();
    let file = dir.join("f.yaml");
    std::fs::write(
        &file,
        "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata: {name: f}\nspec:\n  base: [base.yaml]\n  seeds: [7]\n  parameters:\n  - name: trace\n    values: [good.csv, bad.csv]\n    set: 'workloadtrace/tr:spec.path={{value}}'\n",
    )
    .unwrap();
    let o = run_sweep(&file, &dir.join("out"), "2");
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = read(&dir.join("out/sweep.csv"));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(
        lines[1].starts_with("trace=good.csv,good.csv,7,ok,,"),
        "{csv}"
    );
    // The loader's message, at the bad cell.
    assert!(
        lines[2].starts_with("trace=bad.csv,bad.csv,7,error,\"")
            && lines[2].contains("bad.csv:3:6: cpu \"\"lots\"\": invalid quantity"),
        "{csv}"
    );
    let summary = read(&dir.join("out/sweep-summary.csv"));
    assert!(
        summary.contains("\ntrace=bad.csv,bad.csv,1,1,,"),
        "{summary}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_sweep_input_exits_2_with_file_line_column() {
    let dir = temp_dir("sweep-bad");
    let cases = [
        (
            "  parameters: []\n",
            "b0.yaml:7:15: spec.parameters is empty",
        ),
        (
            "  parameters:\n  - name: quota\n    values: []\n    set: 'x={{value}}'\n",
            "b1.yaml:9:13: parameter \"quota\" has no values: the grid is empty",
        ),
        (
            "  parameters:\n  - name: quota\n    values: [{a: 1}]\n    set: 'x={{value}}'\n",
            "b2.yaml:9:14:",
        ),
        (
            "  parameters:\n  - name: quota\n    value: [1]\n    set: 'x={{value}}'\n",
            "b3.yaml:9:5: unknown field `value`",
        ),
        (
            "  seeds: [1, x]\n  variants: [{name: a}]\n",
            "b4.yaml:7:14: invalid u64",
        ),
        (
            &format!(
                "  parameters:\n  - name: quota\n    values: [1]\n    set: '{}={{{{value}}}}'\n",
                GPU.replace("name=h100", "name=h10")
            ),
            "b5.yaml:10:52: spec.resourceGroups[0].flavors[name=h10] matches nothing: no item with name=h10 (closest: \"h100\") (variant quota=1: --set of parameter quota)",
        ),
        // A value the field cannot take: found by loading every variant before any run.
        (
            &grid("[128, 12x8]", "[7]"),
            "b6.yaml:13:105: invalid quantity \"12x8\": expected a number with an optional suffix such as 500m, 16Gi or 8 (variant quota=12x8: --set of parameter quota)",
        ),
        // A template that writes a field the kind does not have: the sweep's error before
        // any run, not every variant printing the baseline's figures.
        (
            &format!(
                "  parameters:\n  - name: quota\n    values: [1, 2]\n    set: '{}={{{{value}}}}'\n",
                GPU.replace("nominalQuota", "nominalQuot")
            ),
            "b7.yaml:10:95: ClusterQueue field spec.resourceGroups[0].flavors[0].resources[2].nominalQuot is not a field of kueue.x-k8s.io v1beta1 or v1beta2 (closest: nominalQuota); an override must name a field the kind has",
        ),
        (
            "  parameters:\n  - name: strategy\n    values: [StrictFIFO]\n    patch: |\n      apiVersion: kueue.x-k8s.io/v1beta2\n      kind: ClusterQueue\n      metadata: {name: ml-team}\n      spec: {queueingStrateg: '{{value}}'}\n",
            "b8.yaml:14:14: ClusterQueue field spec.queueingStrateg is not a field of kueue.x-k8s.io v1beta1 or v1beta2 (closest: queueingStrategy)",
        ),
        // A figure renamed so that its name says which workloads it counts.
        (
            &format!(
                "  seeds: [1]\n  figures: [\"clusterQueues[*].waitSeconds.p95\"]\n  parameters:\n  - name: quota\n    values: [1]\n    set: '{GPU}={{{{value}}}}'\n"
            ),
            "b9.yaml:8:13: figures: \"clusterQueues[*].waitSeconds.p95\" was renamed to clusterQueues[*].waitSecondsAdmitted.p95 (the admitted workloads alone); clusterQueues[*].waitSecondsInclPending.p95 counts the still-pending",
        ),
        (
            &format!(
                "  seeds: 1..2\n  parameters:\n  - name: quota\n    set:\n    - '{GPU}={{{{value}}}}'\n  search:\n    parameter: quota\n    min: 64\n    max: 192\n    target: {{figure: jctSeconds.p50, atMost: 60}}\n"
            ),
            "b10.yaml:16:22: search.target.figure \"jctSeconds.p50\" was renamed to jctSecondsFinished.p50 (the finished workloads alone)",
        ),
    ];
    for (i, (spec, want)) in cases.iter().enumerate() {
        let file = sweep_file(&dir, &format!("b{i}"), spec);
        let o = run_sweep(&file, &dir.join("out"), "1");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{spec}: {err}");
        // (Progress lines may come first: a bad value is found by its variant's first run.)
        let first = err.lines().find(|l| l.starts_with("error: ")).unwrap_or("");
        let at = first.find(&format!("b{i}.yaml")).unwrap_or(0);
        assert!(first[at..].starts_with(want), "{spec}: {err}");
    }
    assert!(!dir.join("out").exists(), "bad input writes nothing");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The value column of a sweep-summary.csv row and a figure's mean.
fn means(summary: &str, figure: &str) -> Vec<(i64, f64)> {
    let mut lines = summary.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = head
        .iter()
        .position(|h| *h == format!("{figure}:mean"))
        .unwrap();
    lines
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (c[1].parse().unwrap(), c[at].parse().unwrap())
        })
        .collect()
}

#[test]
fn search_finds_the_value_a_brute_force_grid_finds() {
    let dir = temp_dir("sweep-search");
    let figure = "clusterQueues[ml-team].gpuShare";
    let g = sweep_file(&dir, "g", &grid("[64, 96, 128, 160, 192]", "1..2"));
    let o = run_sweep(&g, &dir.join("g"), "2");
    assert!(o.status.success(), "{}", stderr(&o));
    let m = means(&read(&dir.join("g/sweep-summary.csv")), figure);
    // A bound whose predicate (mean ≥ bound) is false, then true, over the grid.
    let bound = m
        .iter()
        .map(|(_, x)| *x)
        .find(|&b| {
            let meets: Vec<bool> = m.iter().map(|(_, x)| *x >= b).collect();
            !meets[0] && meets.windows(2).all(|w| w[0] <= w[1])
        })
        .expect("a monotone bound over the grid");
    let brute = m.iter().find(|(_, x)| *x >= bound).unwrap().0;
    let spec = format!(
        "  seeds: 1..2\n  parameters:\n  - name: quota\n    set:\n    - '{GPU}={{{{value}}}}'\n    - '{CPU}'\n  search:\n    parameter: quota\n    min: 64\n    max: 192\n    step: 32\n    target: {{figure: \"{figure}\", atLeast: {bound:?}, over: mean}}\n"
    );
    let s = sweep_file(&dir, "s", &spec);
    let o = run_sweep(&s, &dir.join("s"), "2");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with(&format!("search: the smallest quota with {figure} ≥ ")),
        "{out}"
    );
    assert!(
        out.contains(&format!(": {brute}\n")),
        "brute force {brute}: {out}"
    );
    // Every run of the search is a row, with its step.
    let csv = read(&dir.join("s/sweep.csv"));
    assert!(
        csv.starts_with("variant,step,quota,seed,status,error,"),
        "{csv}"
    );
    assert!(csv.contains("\nquota=192,1,192,1,ok,"), "{csv}");
    assert!(csv.contains("\nquota=64,2,64,2,ok,"), "{csv}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compare_subtracts_the_documents_values() {
    let dir = temp_dir("compare");
    std::fs::create_dir_all(&dir).unwrap();
    let platform = scenario("platform");
    let doc = |seed: &str| {
        let o = kueuesim(&["run", &platform, "--seed", seed, "-o", "json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let path = dir.join(format!("s{seed}.json"));
        std::fs::write(&path, &o.stdout).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (path, v)
    };
    let (a, va) = doc("1");
    let (b, vb) = doc("2");
    let html = dir.join("c.html");
    let o = kueuesim(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for (figure, path) in [
        ("cycles", &["cycles"][..]),
        ("eventsProcessed", &["eventsProcessed"][..]),
        ("workloads.finished", &["workloads", "finished"][..]),
    ] {
        let (x, y) = (
            path.iter()
                .fold(&va["summary"], |v, k| &v[k])
                .as_f64()
                .unwrap(),
            path.iter()
                .fold(&vb["summary"], |v, k| &v[k])
                .as_f64()
                .unwrap(),
        );
        let line = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(figure))
            .unwrap_or_else(|| panic!("{figure}: {out}"));
        let cells: Vec<&str> = line.split_whitespace().collect();
        let d = y - x;
        let want = if d > 0.0 {
            format!("+{d:.0}")
        } else {
            format!("{d:.0}")
        };
        assert_eq!(
            cells[1..4],
            [format!("{x:.0}"), format!("{y:.0}"), want],
            "{line}"
        );
    }
    assert!(read(&html).contains("<th>B − A</th>"));

    // A sweep's variants, with replicates on both sides: the CI overlap column.
    let file = sweep_file(&dir, "c", &grid("[64, 192]", "1..3"));
    let sweep_dir = dir.join("sw");
    assert!(run_sweep(&file, &sweep_dir, "2").status.success());
    let a = format!("quota=64@{}", sweep_dir.display());
    let b = format!("quota=192@{}", sweep_dir.display());
    let o = kueuesim(&["compare", &a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| {
            l.trim_start()
                .starts_with("clusterQueues[ml-team].gpuShare")
        })
        .unwrap_or_else(|| panic!("{out}"));
    // The CI overlap, then Welch's p-value: a probability or "<0.001".
    let cells: Vec<&str> = line.split_whitespace().collect();
    let (overlap, p) = (cells[cells.len() - 2], cells[cells.len() - 1]);
    assert!(overlap == "yes" || overlap == "no", "{line}");
    assert!(
        p == "<0.001" || p.parse::<f64>().is_ok_and(|p| (0.0..=1.0).contains(&p)),
        "{line}"
    );
    let bad = kueuesim(&["compare", &format!("nope@{}", sweep_dir.display()), &b]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn index_runs_collect_into_the_same_files_and_emit_describes_them() {
    let dir = temp_dir("sweep-index");
    let file = sweep_file(&dir, "ix", &grid("[128, 192]", "1..2"));
    let fresh = dir.join("fresh");
    assert!(run_sweep(&file, &fresh, "2").status.success());
    let parts = dir.join("parts");
    let f = file.to_str().unwrap();
    let p = parts.to_str().unwrap();
    // Out of order, as a cluster finishes them.
    for i in ["3", "0", "2", "1"] {
        let o = kueuesim(&["sweep", f, "--index", i, "--out", p, "-q"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).starts_with(&format!("run {i} of 4: variant quota=")));
    }
    let bad = kueuesim(&["sweep", f, "--index", "4", "--out", p]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    // `sweep collect DIR` runs nothing (the Sweep's base need not be there: the index runs
    // left the Sweep beside their rows) and writes what a fresh sweep writes.
    let copied = dir.join("copied");
    std::fs::create_dir_all(copied.join("rows")).unwrap();
    std::fs::copy(parts.join("sweep.yaml"), copied.join("sweep.yaml")).unwrap();
    for e in std::fs::read_dir(parts.join("rows")).unwrap() {
        let e = e.unwrap().path();
        std::fs::copy(&e, copied.join("rows").join(e.file_name().unwrap())).unwrap();
    }
    let o = kueuesim(&["sweep", "collect", copied.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("4 of 4 runs (0 failed) collected"),
        "{}",
        stdout(&o)
    );
    for name in ["sweep.csv", "sweep-summary.csv", "sweep.html"] {
        assert_eq!(read(&copied.join(name)), read(&fresh.join(name)), "{name}");
    }
    // A run without its row: the files of the others, exit 1 naming the missing index.
    std::fs::remove_file(copied.join("rows/run-000002.csv")).unwrap();
    let o = kueuesim(&["sweep", "collect", copied.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 of 4 runs have no row"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("indices 2 (run them with --index N)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(read(&copied.join("sweep.csv")).lines().count(), 4);
    let o = kueuesim(&["sweep", "collect", dir.join("nothing").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("sweep.yaml: not found"),
        "{}",
        stderr(&o)
    );
    // Running the sweep into the index runs' directory collects them the same way.
    let o = kueuesim(&["sweep", f, "--out", p]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("reusing 4 runs"), "{}", stderr(&o));
    for name in ["sweep.csv", "sweep-summary.csv", "sweep.html"] {
        assert_eq!(read(&parts.join(name)), read(&fresh.join(name)), "{name}");
    }
    // The base is outside the Sweep's directory here: the ConfigMap carries it only when
    // asked to.
    let k8s = stdout(&kueuesim(&[
        "sweep",
        f,
        "--emit",
        "kubernetes",
        "--queue",
        "batch",
        "--allow-outside-base",
    ]));
    for want in [
        "kind: ConfigMap",
        "  sweep.yaml: |",
        "completionMode: Indexed",
        "completions: 4",
        "kueue.x-k8s.io/queue-name: batch",
        "- $(JOB_COMPLETION_INDEX)\n",
        "- --base\n        - /sweep/base-00-",
    ] {
        assert!(k8s.contains(want), "{want}: {k8s}");
    }
    let slurm = stdout(&kueuesim(&[
        "sweep",
        f,
        "--emit",
        "slurm",
        "--parallelism",
        "2",
    ]));
    assert!(
        slurm.contains("#SBATCH --array=0-3%2")
            && slurm.contains("--index \"$SLURM_ARRAY_TASK_ID\""),
        "{slurm}"
    );
    // The script is valid bash.
    let script = dir.join("sweep.sbatch");
    std::fs::write(&script, &slurm).unwrap();
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .expect("bash runs");
    assert!(syntax.status.success(), "{}", stderr(&syntax));

    // The emitted Job is a Job kueuesim itself reads: next to a cluster with the LocalQueue it
    // names, Kueue admits it as one workload of `parallelism` pods (an Indexed Job's pod set
    // count is its parallelism), which the job controller runs to completion.
    let k8s = stdout(&kueuesim(&[
        "sweep",
        f,
        "--emit",
        "kubernetes",
        "--queue",
        "batch",
        "--parallelism",
        "3",
        "--allow-outside-base",
    ]));
    assert!(k8s.contains("parallelism: 3"), "{k8s}");
    let cluster = dir.join("cluster");
    std::fs::create_dir_all(&cluster).unwrap();
    std::fs::write(cluster.join("sweep-job.yaml"), &k8s).unwrap();
    std::fs::write(
        cluster.join("cluster.yaml"),
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: default\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: batch\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors:\n    - name: default\n      resources:\n      - {name: cpu, nominalQuota: 4}\n      - {name: memory, nominalQuota: 4Gi}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: batch\n  namespace: default\nspec:\n  clusterQueue: batch\n---\n\
         apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nstatus:\n  allocatable: {cpu: \"8\", memory: 16Gi, pods: \"110\"}\n",
    )
    .unwrap();
    let o = kueuesim(&[
        "run",
        cluster.to_str().unwrap(),
        "-o",
        "json",
        "--until",
        "1h",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The ConfigMap is a kind the simulator does not read: skipped, and said so.
    assert!(stderr(&o).contains("ConfigMap"), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let workloads = doc["workloads"].as_array().unwrap();
    assert_eq!(workloads.len(), 1, "{workloads:?}");
    let w = &workloads[0];
    assert_eq!(w["kind"], "Workload", "{w}");
    assert!(
        w["name"].as_str().unwrap().starts_with("job-sweep-ix-"),
        "{w}"
    );
    assert_eq!(w["localQueue"], "batch", "{w}");
    assert_eq!(w["clusterQueue"], "batch", "{w}");
    assert_eq!(w["podSets"][0]["count"], 3, "{w}");
    assert!(w["admittedAt"].is_number(), "{w}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_containerfile_builds_with_the_workspace_rust_version() {
    // The image the emitted Job runs is built with the Rust the workspace asks for: bumping
    // one without the other breaks the build of the image, which CI cannot pull here.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = read(&root.join("Cargo.toml"));
    let version = cargo
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .expect("Cargo.toml names a rust-version")
        .trim_matches('"');
    let containerfile = read(&root.join("Containerfile"));
    let builder = containerfile
        .lines()
        .find(|l| l.starts_with("FROM ") && l.contains(" AS build"))
        .expect("a build stage");
    assert!(
        builder.contains(&format!("/rust:{version}-")),
        "{builder} (rust-version {version})"
    );
    // The image the Job runs starts from a base pinned by digest, not by a tag that moves.
    let runtime = containerfile
        .lines()
        .rfind(|l| l.starts_with("FROM "))
        .expect("a final stage");
    let digest = runtime.split_once("@sha256:").map(|(_, d)| d.trim());
    assert!(
        digest.is_some_and(|d| d.len() == 64
            && d.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))),
        "{runtime}"
    );
    assert!(containerfile.contains("cargo build --locked --release -p kueuesim-cli"));
    assert!(containerfile.contains("ENTRYPOINT [\"/usr/local/bin/kueuesim\"]"));
}

#[test]
fn a_variant_that_livelocks_is_an_error_row_and_the_latency_that_ends_it_a_run() {
    // The reclaim ping-pong at one instant (tests/fixtures/livelock): with no pod
    // termination time never advances and the run stops; with one second it advances a
    // second a round and the run reaches its horizon.
    let dir = temp_dir("sweep-livelock");
    std::fs::create_dir_all(&dir).unwrap();
    let base = fixture("livelock/reclaim-ping-pong.yaml");
    let file = dir.join("l.yaml");
    std::fs::write(
        &file,
        format!(
            "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata:\n  name: l\nspec:\n  base: {}\n  until: 10m\n  figures: [cycles]\n  parameters:\n  - name: term\n    values: [0s, 1s]\n    set: ['Simulation/livelock-reclaim-ping-pong:spec.podTermination={{{{value}}}}']\n",
            base
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = run_sweep(&file, &out, "2");
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = read(&out.join("sweep.csv"));
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(
        rows[0].contains(",error,\"stopped early: simulated time stopped at 0s: 20001 events"),
        "{csv}"
    );
    assert!(rows[1].contains(",ok,"), "{csv}");
}

#[test]
fn compare_figures_keeps_the_matching_rows_and_names_a_pattern_that_matches_nothing() {
    let dir = run_out("compare-figures", "golden/first-fit-nodes", &[]);
    let d = dir.to_str().unwrap();
    let all = kueuesim(&["compare", d, d]);
    assert!(all.status.success(), "{}", stderr(&all));
    let o = kueuesim(&[
        "compare",
        d,
        d,
        "--figures",
        "waitSecondsInclPending.*,gpu.utilization",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The table's rows: every line after the header row up to the blank line before the
    // count of figures that are 0 on both sides.
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.trim_start().starts_with("FIGURE"))
            .skip(1)
            .take_while(|l| !l.is_empty())
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect()
    };
    let (kept, every) = (rows(&stdout(&o)), rows(&stdout(&all)));
    assert!(kept.contains(&"gpu.utilization".to_string()), "{kept:?}");
    assert!(
        kept.iter()
            .any(|f| f.starts_with("waitSecondsInclPending.")),
        "{kept:?}"
    );
    assert!(
        kept.iter()
            .all(|f| f == "gpu.utilization" || f.starts_with("waitSecondsInclPending.")),
        "{kept:?}"
    );
    let expected: Vec<&String> = every
        .iter()
        .filter(|f| *f == "gpu.utilization" || f.starts_with("waitSecondsInclPending."))
        .collect();
    assert_eq!(kept.iter().collect::<Vec<_>>(), expected);
    let bad = kueuesim(&[
        "compare",
        d,
        d,
        "--figures",
        "waitSecondsInclPending.*,no.such.*",
    ]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("--figures no.such.*: no figure of either side matches it"),
        "{}",
        stderr(&bad)
    );
    // A figure's name from before the names said which workloads they count: what it is now.
    let old = kueuesim(&["compare", d, d, "--figures", "waitSeconds.p95"]);
    assert_eq!(old.status.code(), Some(2), "{}", stderr(&old));
    assert!(
        stderr(&old).contains(
            "--figures waitSeconds.p95: no figure of either side matches it (the figures are \
             the names in the first column without --figures): it was renamed to \
             waitSecondsAdmitted.p95 (the admitted workloads alone); waitSecondsInclPending.p95 \
             counts the still-pending"
        ),
        "{}",
        stderr(&old)
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn compare_of_an_out_dir_without_result_json_says_which_write_it_needs() {
    let full = run_out("compare-full", "golden/first-fit-nodes", &[]);
    let csv = run_out("compare-csv", "golden/first-fit-nodes", &["--write", "csv"]);
    assert!(!csv.join("result.json").exists());
    let o = kueuesim(&["compare", full.to_str().unwrap(), csv.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "no summary.json or result.json in it: expected a `run --out` directory whose --write included summary or result"
        ),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(full).unwrap();
    std::fs::remove_dir_all(csv).unwrap();
}

/// `compare` reads a `run --out` directory's summary.json when there is one (the figures
/// without the workloads) and gives the table result.json gives.
#[test]
fn compare_reads_summary_json_as_it_reads_result_json() {
    let a = run_out(
        "compare-sum-a",
        "golden/first-fit-nodes",
        &["--write", "summary"],
    );
    let b = run_out(
        "compare-sum-b",
        "kueue/within-cq-preemption",
        &["--write", "summary"],
    );
    assert!(!a.join("result.json").exists());
    let fa = run_out(
        "compare-res-a",
        "golden/first-fit-nodes",
        &["--write", "result"],
    );
    let fb = run_out(
        "compare-res-b",
        "kueue/within-cq-preemption",
        &["--write", "result"],
    );
    let by_summary = kueuesim(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let by_result = kueuesim(&["compare", fa.to_str().unwrap(), fb.to_str().unwrap()]);
    assert_eq!(by_summary.status.code(), Some(0), "{}", stderr(&by_summary));
    let table = |o: &std::process::Output| {
        // The lines naming the two sides by their paths differ; the figures' lines follow.
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.starts_with("A: ") && !l.starts_with("B: "))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert!(table(&by_summary).len() > 10, "{:?}", table(&by_summary));
    assert_eq!(table(&by_summary), table(&by_result));
    // A later run into the same directory that writes result.json only leaves the former
    // run's summary.json behind: the newer result.json is read.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let o = kueuesim(&[
        "run",
        &scenario("kueue/within-cq-preemption"),
        "-q",
        "--write",
        "result",
        "--out",
        a.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(a.join("summary.json").exists());
    let reused = kueuesim(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let fresh = kueuesim(&["compare", fb.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(reused.status.code(), Some(0), "{}", stderr(&reused));
    assert_eq!(table(&reused), table(&fresh));
    assert_ne!(table(&reused), table(&by_summary));
    for d in [a, b, fa, fb] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn a_sweep_varies_when_a_timeline_change_brings_nodes() {
    // scenarios/sweeps/nodes-arrive.yaml: timeline/new-nodepool's change (a NodePool and its
    // quota) at 1h, 2h, 3h; the waiting job waits for it, plus the 1s requeue batch period.
    let dir = temp_dir("sweep-nodes-arrive");
    let o = run_sweep(Path::new(&scenario("sweeps/nodes-arrive.yaml")), &dir, "1");
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = read(&dir.join("sweep.csv"));
    let waits: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().expect("a figure"))
        .collect();
    assert_eq!(waits, ["3601", "7201", "10801"], "{csv}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A base whose serving object reads its load from a CSV (`kueuesim.io/load-trace`): the
/// emitted ConfigMap would not carry the CSV, so `--emit` refuses it (exit 2) rather than
/// leave it out.
#[test]
fn emit_refuses_a_load_trace_it_cannot_ship() {
    let dir = temp_dir("emit_load_trace");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/serving/autoscaled/scenario.yaml"),
    )
    .unwrap()
    .replace(
        "kueuesim.io/load: \"0s=20,1h=55,3h=10\"",
        "kueuesim.io/load-trace: load.csv",
    );
    assert!(text.contains("load-trace"));
    std::fs::write(dir.join("scenario.yaml"), text).unwrap();
    std::fs::write(dir.join("load.csv"), "time,load\n0s,20\n1h,55\n3h,10\n").unwrap();
    std::fs::write(
        dir.join("sweep.yaml"),
        "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata: {name: load}\nspec:\n  base: scenario.yaml\n  parameters:\n  - name: seed\n    values: [1, 2]\n    set: ['Simulation/*:spec.seed={{value}}']\n",
    )
    .unwrap();
    let f = dir.join("sweep.yaml");
    let o = kueuesim(&["run", "-q", dir.join("scenario.yaml").to_str().unwrap()]);
    assert!(
        o.status.success(),
        "the scenario itself runs: {}",
        stderr(&o)
    );
    let o = kueuesim(&["sweep", f.to_str().unwrap(), "--emit", "kubernetes"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a kueuesim.io/load-trace CSV is not shipped with --emit"),
        "{}",
        stderr(&o)
    );
    // A comment naming the annotation sets nothing: the load written inline is emitted
    // (the platform's comment says a planner would use kueuesim.io/load-trace).
    let inline = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/serving/autoscaled/scenario.yaml"),
    )
    .unwrap();
    std::fs::write(
        dir.join("scenario.yaml"),
        format!("# with your own load: kueuesim.io/load-trace: load.csv\n{inline}"),
    )
    .unwrap();
    let o = kueuesim(&["sweep", f.to_str().unwrap(), "--emit", "kubernetes"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A variant's patch that adds the annotation is refused as the base's is.
    std::fs::write(
        dir.join("sweep.yaml"),
        "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata: {name: load}\nspec:\n  base: scenario.yaml\n  variants:\n  - name: csv\n    patch: |\n      apiVersion: apps/v1\n      kind: Deployment\n      metadata:\n        name: api\n        namespace: serve\n        annotations: {kueuesim.io/load-trace: load.csv}\n",
    )
    .unwrap();
    let o = kueuesim(&["sweep", f.to_str().unwrap(), "--emit", "kubernetes"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a kueuesim.io/load-trace CSV is not shipped with --emit"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
