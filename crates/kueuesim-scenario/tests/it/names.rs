//! Names as the Kubernetes API server checks them: hostile names (a spreadsheet formula, a
//! leading `-`, control characters, terminal escapes, U+2028, HTML, a 2 MB name) are refused
//! at the place they are written, upstream-valid names keep loading, and trace cells that
//! become names are mapped to valid ones.

use std::path::PathBuf;

use kueuesim_scenario::{LoadOptions, ScenarioError, SourceFile, load};

use crate::util::{FLAVOR, cq, load_error, load_text};

/// A ClusterQueue `cq` with GPU quota of flavor `default`, a LocalQueue `lq` in `ns` and a
/// Job `j` of `ns` in it: the fixture each case below changes one name of.
fn scenario() -> String {
    format!(
        "{FLAVOR}---\n{}---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: lq\n  namespace: ns\nspec:\n  clusterQueue: cq\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: ns\n  labels:\n    kueue.x-k8s.io/queue-name: lq\nspec:\n  template:\n    spec:\n      containers:\n      - resources:\n          requests:\n            nvidia.com/gpu: \"1\"\n",
        cq("8")
    )
}

/// The scenario with `from` (which occurs once) replaced by `to`.
fn with(from: &str, to: &str) -> String {
    let text = scenario();
    assert_eq!(text.matches(from).count(), 1, "{from:?} occurs once");
    text.replacen(from, to, 1)
}

/// 1-based line and column of the first occurrence of `needle` in `text`.
fn place(text: &str, needle: &str) -> (usize, usize) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} in the text"));
    let line = text[..at].matches('\n').count() + 1;
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// Loading `text` fails at the place of `needle` with a message holding `says`, and the
/// message is short and carries no raw control character.
fn refused_at(text: &str, needle: &str, says: &str) {
    let (line, col) = place(text, needle);
    let e = load_error(text);
    let first = e.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("t.yaml:{line}:{col}: ")),
        "expected t.yaml:{line}:{col} for {needle:?}, got: {first}"
    );
    assert!(first.contains(says), "{says:?} in: {first}");
    assert!(
        first.len() < 1_000,
        "a short message: {} bytes",
        first.len()
    );
    assert!(
        !first.chars().any(|c| c.is_control() || c == '\u{2028}'),
        "no raw control character: {first:?}"
    );
}

#[test]
fn the_fixture_loads() {
    let loaded = load_text("t.yaml", &scenario()).expect("loads");
    assert_eq!(loaded.world.workloads.len(), 1);
}

#[test]
fn metadata_names_that_start_with_a_formula_character_are_refused() {
    for bad in ["=HYPERLINK(\"x\")", "+1", "@SUM(A1)", "-rm", "'=1"] {
        let quoted = format!("name: {}", serde_json::to_string(bad).unwrap());
        let text = with(
            "metadata:\n  name: default\n",
            &format!("metadata:\n  {quoted}\n"),
        );
        refused_at(
            &text,
            &quoted["name: ".len()..],
            "expected a DNS-1123 subdomain",
        );
    }
}

#[test]
fn control_characters_escapes_line_separators_and_html_are_refused() {
    for (bad, yaml) in [
        ("bell", "\"a\\ab\""),
        ("escape", "\"\\e[31mred\\e[0m\""),
        ("newline", "\"a\\nb\""),
        ("line separator", "\"a\\u2028b\""),
        ("html", "\"<script>alert(1)</script>\""),
        ("space", "\"a b\""),
    ] {
        // A Job's name, a namespace, a ClusterQueue's name.
        for (from, field) in [
            ("  name: j\n", "  name: "),
            ("  namespace: ns\n  labels", "  namespace: "),
            ("  name: cq\n", "  name: "),
        ] {
            let to = from.replacen(
                &from[field.len()..].split('\n').next().unwrap().to_string(),
                yaml,
                1,
            );
            let text = with(from, &to);
            let e = load_error(&text);
            assert!(e.contains("expected a DNS-1123"), "{bad} in {field:?}: {e}");
            refused_at(&text, yaml, "");
        }
    }
}

#[test]
fn a_two_megabyte_flavor_name_is_refused_in_a_short_message() {
    let long = "f".repeat(2 * 1024 * 1024);
    let text = with(
        "metadata:\n  name: default\n",
        &format!("metadata:\n  name: {long}\n"),
    );
    refused_at(&text, &long, "2097152 characters");
    refused_at(&text, &long, "it has 2097152 bytes");
}

#[test]
fn namespaces_are_dns1123_labels() {
    // A dot is fine in a subdomain, not in a namespace (`ValidateNamespaceName`).
    let text = with("  namespace: ns\n  labels", "  namespace: team.a\n  labels");
    refused_at(&text, "team.a", "expected a DNS-1123 label");
    let text = format!(
        "{}---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {}\n",
        scenario(),
        "n".repeat(64)
    );
    refused_at(&text, &"n".repeat(64), "at most 63 characters");
}

#[test]
fn labels_annotations_and_resource_names_are_checked() {
    // A label key, a label value, an annotation key, a nodeSelector key.
    let cases = [
        (
            "kueue.x-k8s.io/queue-name: lq",
            "\"=x\": lq",
            "\"=x\"",
            "label key",
        ),
        (
            "kueue.x-k8s.io/queue-name: lq",
            "kueue.x-k8s.io/queue-name: lq\n    app: \"-v\"",
            "\"-v\"",
            "label app value",
        ),
        (
            "kueue.x-k8s.io/queue-name: lq",
            "kueue.x-k8s.io/queue-name: lq\n  annotations:\n    \"a/b/c\": x",
            "\"a/b/c\"",
            "annotation key",
        ),
        (
            "      containers:",
            "      nodeSelector: {\"@k\": v}\n      containers:",
            "\"@k\"",
            "nodeSelector key",
        ),
        (
            "nvidia.com/gpu: \"1\"",
            "\"=cmd|calc\": \"1\"",
            "\"=cmd|calc\"",
            "resource name",
        ),
        (
            "coveredResources: [nvidia.com/gpu]",
            "coveredResources: [\"+gpu\"]",
            "\"+gpu\"",
            "resource name",
        ),
        (
            "    - name: default\n",
            "    - name: \"=flavor\"\n",
            "\"=flavor\"",
            "flavor name",
        ),
        (
            "  clusterQueue: cq",
            "  clusterQueue: \"CQ\"",
            "\"CQ\"",
            "spec.clusterQueue",
        ),
        (
            "      containers:",
            "      schedulerName: \"=s\"\n      containers:",
            "\"=s\"",
            "schedulerName",
        ),
    ];
    for (from, to, needle, says) in cases {
        let text = with(from, to);
        refused_at(&text, needle, says);
    }
    // Kueue's queue-name label names a LocalQueue: a label value that is no DNS-1123
    // subdomain (upper case, '_') is refused as Kueue's webhook refuses it.
    let text = with("queue-name: lq", "queue-name: Team_A");
    refused_at(&text, "Team_A", "expected a DNS-1123 subdomain");
}

#[test]
fn annotations_over_256_kib_are_refused() {
    let big = "v".repeat(200 * 1024);
    let text = with(
        "kueue.x-k8s.io/queue-name: lq",
        &format!("kueue.x-k8s.io/queue-name: lq\n  annotations:\n    a: {big}\n    b: {big}"),
    );
    let e = load_error(&text);
    assert!(
        e.contains("expected at most 262144 (256 KiB)"),
        "{}",
        &e[..200.min(e.len())]
    );
}

#[test]
fn generated_names_stay_valid() {
    // A NodePool whose prefix would make node names of 254 characters.
    let prefix = "p".repeat(252);
    let text = format!(
        "{}---\napiVersion: kueuesim.io/v1alpha1\nkind: NodePool\nmetadata: {{name: pool}}\nspec:\n  namePrefix: {prefix}\n  nodesPerDomain: 10\n  template: {{allocatable: {{cpu: \"1\"}}}}\n",
        scenario()
    );
    refused_at(&text, &prefix, "node names made from");
    // A level whose label values would not be label values.
    let text = format!(
        "{}---\napiVersion: kueuesim.io/v1alpha1\nkind: NodePool\nmetadata: {{name: pool}}\nspec:\n  levels:\n  - {{nodeLabel: example.com/rack, count: 2, valuePrefix: \"-r\"}}\n  template: {{allocatable: {{cpu: \"1\"}}}}\n",
        scenario()
    );
    refused_at(&text, "\"-r\"", "label values made from");
    // A WorkloadGenerator whose name leaves no room for the index.
    let name = "g".repeat(250);
    let text = format!(
        "{}---\napiVersion: kueuesim.io/v1alpha1\nkind: WorkloadGenerator\nmetadata: {{name: {name}, namespace: ns}}\nspec:\n  count: 1000\n  arrival: {{interval: 1s}}\n  duration: {{fixed: 1m}}\n  queues: [{{name: lq}}]\n",
        scenario()
    );
    refused_at(&text, &name, "workload names made from");
}

#[test]
fn upstream_valid_names_load() {
    // The longest names each rule allows, dots in subdomains, digits first.
    let long = format!("{}.{}", "a".repeat(63), "b".repeat(189));
    assert_eq!(long.len(), 253);
    let ns = "0".repeat(63);
    let text = scenario()
        .replace("name: j\n", &format!("name: {long}\n"))
        .replace("namespace: ns", &format!("namespace: {ns}"))
        .replace("name: cq\n", "name: 1.team-a.example.com\n")
        .replace("clusterQueue: cq", "clusterQueue: 1.team-a.example.com")
        .replace(
            "kueue.x-k8s.io/queue-name: lq",
            "kueue.x-k8s.io/queue-name: lq\n    App_Name.v1: My_Value-1\n  annotations:\n    Example.com/Some-Key: \"any text: with spaces, = and @\"",
        );
    let loaded = load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    let w = &loaded.world.workloads[0];
    assert_eq!(w.namespace, ns);
    assert_eq!(w.owner, Some(("Job".to_string(), long)));
}

/// apimachinery's regular expressions, as the reference the loader's checks are held to.
const LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";

/// `IsDNS1123Label`.
fn is_label(s: &str) -> bool {
    s.len() <= 63
        && regex::Regex::new(&format!("^{LABEL}$"))
            .unwrap()
            .is_match(s)
}

/// `IsDNS1123Subdomain`.
fn is_subdomain(s: &str) -> bool {
    s.len() <= 253
        && regex::Regex::new(&format!("^{LABEL}(\\.{LABEL})*$"))
            .unwrap()
            .is_match(s)
}

/// Every name of every workload of the world follows its rule (what the outputs print).
fn assert_valid_names(loaded: &kueuesim_scenario::Loaded) {
    for w in &loaded.world.workloads {
        assert!(is_label(&w.namespace), "{}", w.namespace);
        assert!(is_subdomain(&w.name), "{}", w.name);
        if let Some(q) = &w.queue_name {
            assert!(is_subdomain(q) && q.len() <= 63, "{q}");
        }
        if let Some((_, owner)) = &w.owner {
            assert!(is_subdomain(owner), "{owner}");
        }
    }
}

/// The workloads of the trace (all but the fixture's Job).
fn trace_rows(
    loaded: &kueuesim_scenario::Loaded,
) -> impl Iterator<Item = &kueuesim_model::Workload> {
    loaded
        .world
        .workloads
        .iter()
        .filter(|w| !w.name.starts_with("job-j-"))
}

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kueuesim-names-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Writes `csv` as `dir/trace.csv` and loads the fixture plus a native WorkloadTrace of it
/// with `extra` spec lines.
fn load_trace(
    dir: &std::path::Path,
    csv: &str,
    extra: &str,
) -> Result<kueuesim_scenario::Loaded, ScenarioError> {
    std::fs::write(dir.join("trace.csv"), csv).expect("write csv");
    let text = format!(
        "{}---\napiVersion: kueuesim.io/v1alpha1\nkind: WorkloadTrace\nmetadata: {{name: tr}}\nspec:\n  format: native\n  path: trace.csv\n{extra}",
        scenario()
    );
    let name = dir.join("scenario.yaml").display().to_string();
    load(&[SourceFile { name, text }], LoadOptions::default())
}

#[test]
fn trace_cells_that_become_names_are_mapped_to_valid_distinct_names() {
    let dir = scratch("mapped");
    let csv = "arrival,name,namespace,queue,requests.nvidia.com/gpu\n\
               0,=HYPERLINK(x),Team A,lq,1\n\
               1,-rm -rf,@evil,+q,1\n\
               2,job_1,ns,lq,1\n\
               3,job-1,ns,lq,1\n\
               4,\u{1b}[31mred,ns,lq,1\n\
               5,ok-name,ns,lq,1\n";
    let loaded = load_trace(&dir, csv, "").unwrap_or_else(|e| panic!("{e}"));
    assert_valid_names(&loaded);
    let names: Vec<&str> = trace_rows(&loaded).map(|w| w.name.as_str()).collect();
    // Valid names are kept; two cells the mapping would merge stay apart.
    assert!(
        names.contains(&"ok-name") && names.contains(&"job-1"),
        "{names:?}"
    );
    let job_1 = names
        .iter()
        .find(|n| n.starts_with("job-1-"))
        .expect("job_1 mapped");
    assert_eq!(job_1.len(), "job-1".len() + 9, "{job_1}");
    // The namespace "Team A" and the LocalQueue "+q" are mapped the same way.
    let first = trace_rows(&loaded).next().expect("a row");
    assert!(first.name.starts_with("hyperlink-x-"), "{}", first.name);
    assert!(
        first.namespace.starts_with("team-a-"),
        "{}",
        first.namespace
    );
    let second = trace_rows(&loaded).nth(1).expect("two rows");
    assert!(
        second
            .queue_name
            .as_deref()
            .is_some_and(|q| q.starts_with("q-")),
        "{second:?}"
    );
    // The same trace gives the same names.
    let again = load_trace(&dir, csv, "").expect("loads");
    let again: Vec<&str> = trace_rows(&again).map(|w| w.name.as_str()).collect();
    assert_eq!(names, again);
}

#[test]
fn trace_names_written_in_the_yaml_are_checked() {
    let dir = scratch("yaml");
    let csv = "arrival,requests.nvidia.com/gpu\n0,1\n";
    // A namespace mapping's value and a namePrefix that make invalid names.
    let e = load_trace(&dir, csv, "  namespace: {value: \"Team_A\"}\n").unwrap_err();
    assert!(
        e.to_string()
            .contains("namespace \"Team_A\": character 1 is 'T'"),
        "{e}"
    );
    let e = load_trace(&dir, csv, "  namePrefix: \"=\"\n").unwrap_err();
    assert!(
        e.to_string().contains("workload names made from \"=\""),
        "{e}"
    );
    // A resource column that is no resource name: refused at the header's cell.
    let e = load_trace(&dir, "arrival,requests.=x\n0,1\n", "")
        .unwrap_err()
        .to_string();
    assert!(e.contains("trace.csv:1:9: resource name \"=x\""), "{e}");
    // A name cell maps under a prefix, within 253 characters in all.
    let csv = format!(
        "arrival,name,requests.nvidia.com/gpu\n0,{},1\n",
        "N".repeat(300)
    );
    let loaded = load_trace(&dir, &csv, "  namePrefix: team-a.\n").expect("loads");
    assert_valid_names(&loaded);
    let row = trace_rows(&loaded).next().expect("a row");
    assert!(row.name.starts_with("team-a.nnn"), "{}", row.name);
    assert!(
        is_subdomain(&row.name) && row.name.len() == 253,
        "{}",
        row.name
    );
}

/// The loader's warnings and errors that name a kind or a key the input wrote carry no raw
/// control character, line separator or bidirectional override.
#[test]
fn kinds_and_keys_in_messages_are_escaped() {
    let hostile = "\\e[2J\\u2028\\u202eX";
    // In flow style, so that the YAML parser reads the kind (and its escapes).
    let text = format!(
        "{}---\n{{apiVersion: x/v1, kind: \"Foo{hostile}\", metadata: {{name: a}}}}\n",
        scenario()
    );
    let loaded = load_text("t.yaml", &text).expect("an unknown kind is skipped");
    let warning = loaded
        .warnings
        .iter()
        .find(|w| w.contains("skipped objects"))
        .expect("a warning for the kind");
    assert!(
        warning.contains("Foo\\u{1b}[2J\\u{2028}\\u{202e}X"),
        "{warning}"
    );
    let strict = LoadOptions {
        strict: true,
        ..Default::default()
    };
    let e = load(
        &[SourceFile {
            name: "t.yaml".into(),
            text,
        }],
        strict,
    )
    .unwrap_err()
    .to_string();
    let first = e.lines().next().unwrap_or_default();
    assert!(first.contains("unsupported kind Foo\\u{1b}[2J"), "{first}");
    for m in loaded.warnings.iter().map(String::as_str).chain([first]) {
        assert!(
            !m.chars()
                .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{202e}')),
            "{m:?}"
        );
    }
}
