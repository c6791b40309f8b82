//! Unit tests of the overlay: trees written back, strategic merge, `--set` paths.

use super::{merge, set, tree};
use crate::source::SourceFile;

fn file(name: &str, text: &str) -> SourceFile {
    SourceFile {
        name: name.into(),
        text: text.into(),
    }
}

const CQ: &str = "apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: ml-team
spec:
  cohort: org
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, \"nvidia.com/gpu\"]
    flavors:
    - name: h100
      resources:
      - name: cpu
        nominalQuota: 1e3
      - name: nvidia.com/gpu
        nominalQuota: 128 # the GPUs
  preemption:
    reclaimWithinCohort: Any
";

#[test]
fn written_back_text_keeps_values_and_places() {
    let f = file("cq.yaml", CQ);
    let t = tree::parse(&f, CQ, 0).unwrap();
    let (text, map) = tree::emit(&t);
    let again = tree::parse(&f, &text, 0).unwrap();
    let (text2, _) = tree::emit(&again);
    assert_eq!(text, text2);
    assert!(text.contains("nominalQuota: 1e3"));
    assert!(text.contains("\"nvidia.com/gpu\""));
    // "nominalQuota: 128" is on line 16 of the file.
    let line = text.lines().position(|l| l.contains("128")).unwrap() as u64 + 1;
    let col = text
        .lines()
        .nth(line as usize - 1)
        .unwrap()
        .find("128")
        .unwrap() as u64
        + 1;
    let o = map.origin(line, col).unwrap();
    assert_eq!((o.line, o.column), (16, 23));
}

#[test]
fn patch_merges_groups_by_covered_resources_and_items_by_name() {
    let f = file("cq.yaml", CQ);
    let p = file(
        "p.yaml",
        "spec:
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 192
",
    );
    let mut t = tree::parse(&f, CQ, 0).unwrap();
    let pt = tree::parse(&p, &p.text, 0).unwrap();
    merge::merge(&mut t, pt).unwrap();
    let (text, _) = tree::emit(&t);
    assert!(text.contains("nominalQuota: 192"));
    // resourceGroups merge by their covered resources, flavors and resources by name.
    assert!(text.contains("nominalQuota: 1e3"));
    assert_eq!(text.matches("- name: h100").count(), 1);
}

#[test]
fn set_finds_items_by_selector_and_names_the_closest_miss() {
    let f = file("cq.yaml", CQ);
    let a = file(
        "--set",
        "clusterqueue/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota=192",
    );
    let s = set::parse(&a).unwrap();
    let mut t = tree::parse(&f, CQ, 0).unwrap();
    s.apply(&mut t).unwrap();
    let (text, map) = tree::emit(&t);
    assert!(text.contains("nominalQuota: 192"));
    assert!(text.contains("nominalQuota: 1e3"));
    let line = text.lines().position(|l| l.contains("192")).unwrap() as u64 + 1;
    let col = text
        .lines()
        .nth(line as usize - 1)
        .unwrap()
        .find("192")
        .unwrap() as u64
        + 1;
    let o = map.origin(line, col).unwrap();
    assert_eq!(o.file.name, "--set");
    assert_eq!(o.column as usize, a.text.find("=192").unwrap() + 2);

    let bad = file(
        "--set",
        "clusterqueue/ml-team:spec.resourceGroups[0].flavors[name=h10].resources[name=nvidia.com/gpu].nominalQuota=192",
    );
    let e = set::parse(&bad)
        .unwrap()
        .apply(&mut t)
        .unwrap_err()
        .to_string();
    assert!(e.contains("closest: \"h100\""), "{e}");
    assert!(e.starts_with("--set:1:52:"), "{e}");
}

#[test]
fn a_multi_line_set_value_says_how_to_pass_it() {
    // A volcano-scheduler.conf pasted as is: its second line cannot follow the first.
    let raw = file(
        "--set",
        "simulation/philly:spec.volcano.configuration=tiers:\n- plugins:\n  - name: gang\n",
    );
    let e = set::parse(&raw).map(|_| ()).unwrap_err().to_string();
    assert!(e.starts_with("--set:2:1:"), "{e}");
    assert!(e.contains("double-quoted string"), "{e}");
    assert!(e.contains("--patch"), "{e}");
    // Written as the hint says, it is one string with the lines in it.
    let quoted = file(
        "--set",
        "simulation/philly:spec.volcano.configuration=\"tiers:\\n- plugins:\\n  - name: gang\\n\"",
    );
    let s = set::parse(&quoted).unwrap();
    let sim = file(
        "sim.yaml",
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata:\n  name: philly\nspec:\n  seed: 1\n",
    );
    let mut t = tree::parse(&sim, &sim.text, 0).unwrap();
    s.apply(&mut t).unwrap();
    let (text, _) = tree::emit(&t);
    assert!(text.contains("configuration:"), "{text}");
    assert!(text.contains("name: gang"), "{text}");
    // A one-line value that fails to parse gets no such hint.
    let one = file("--set", "simulation/philly:spec.seed=[1");
    let e = set::parse(&one).map(|_| ()).unwrap_err().to_string();
    assert!(!e.contains("several lines"), "{e}");
}

#[test]
fn patch_directives_replace_delete_and_remove() {
    let f = file("cq.yaml", CQ);
    let p = file(
        "p.yaml",
        "spec:
  cohort: null
  preemption:
    $patch: replace
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: [\"nvidia.com/gpu\", cpu]
    flavors:
    - name: h100
      resources:
      - name: cpu
        $patch: delete
    - name: a100
      resources:
      - name: cpu
        nominalQuota: 1
",
    );
    let mut t = tree::parse(&f, CQ, 0).unwrap();
    merge::merge(&mut t, tree::parse(&p, &p.text, 0).unwrap()).unwrap();
    let (text, _) = tree::emit(&t);
    assert!(!text.contains("cohort"));
    assert!(!text.contains("reclaimWithinCohort"));
    assert!(text.contains("withinClusterQueue: LowerPriority"));
    assert!(!text.contains("1e3"));
    assert!(text.contains("- name: a100"));
    let bad = file(
        "p.yaml",
        "spec:
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: h10
      $patch: delete
",
    );
    let mut t = tree::parse(&f, CQ, 0).unwrap();
    let e = merge::merge(&mut t, tree::parse(&bad, &bad.text, 0).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("closest: \"name=h100\""), "{e}");
    assert!(e.starts_with("p.yaml:5:7:"), "{e}");
}

/// The recursive definition `glob` replaced (exponential in the number of `*`): the reference
/// the linear-time match must agree with.
fn glob_reference(pattern: &str, name: &str) -> bool {
    let Some((head, rest)) = pattern.split_once('*') else {
        return pattern == name;
    };
    let Some(tail) = name.strip_prefix(head) else {
        return false;
    };
    (0..=tail.len())
        .filter(|&i| tail.is_char_boundary(i))
        .any(|i| glob_reference(rest, &tail[i..]))
}

proptest::proptest! {
    /// Short patterns and names over a small alphabet (so that matches are common), with a
    /// multi-byte character: the two definitions agree.
    #[test]
    fn glob_agrees_with_the_recursive_definition(
        pattern in "[ab*é]{0,10}",
        name in "[abé]{0,12}",
    ) {
        proptest::prop_assert_eq!(
            super::glob(&pattern, &name),
            glob_reference(&pattern, &name),
            "pattern {:?} name {:?}", pattern, name
        );
    }
}

#[test]
fn glob_matches_runs_of_characters() {
    use super::glob;
    assert!(glob("*", ""));
    assert!(glob("a*", "a"));
    assert!(glob("*-team", "ml-team"));
    assert!(glob("*l-*a*", "ml-team"));
    assert!(glob("é*é", "éxé"));
    assert!(!glob("a*b", "ac"));
    assert!(!glob("ml", "ml-team"));
    assert!(!glob("", "x"));
}

/// Twenty `*` against a 253-character name (the longest a DNS subdomain can be) that does not
/// match: the recursive definition tries every way to split the name among the stars (far
/// more than 10^20) and never finishes; the greedy match is at most 21 × 253 steps.
#[test]
fn glob_with_many_stars_against_a_long_name_finishes() {
    let name = format!("{}b", "a".repeat(252));
    let pattern = format!("{}c", "a*".repeat(20));
    assert!(!super::glob(&pattern, &name));
    let pattern = format!("{}b", "*a".repeat(20));
    assert!(super::glob(&pattern, &name));
}
