//! The lint for likely typos through the binary: warnings on stderr, exit 2 with `--strict`.

use crate::{kueuesim, stderr};

#[test]
fn a_misspelt_queue_label_warns_and_strict_exits_2() {
    let dir = std::env::temp_dir().join(format!("kueuesim-cli-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("typo.yaml");
    std::fs::write(
        &f,
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  labels:\n    kueue.x-k8s.io/queue-nme: lq\nspec:\n  template:\n    spec:\n      containers: [{name: c}]\n",
    )
    .unwrap();
    let path = f.to_str().unwrap();
    for cmd in ["validate", "run"] {
        let o = if cmd == "run" {
            kueuesim(&[cmd, path, "-q"])
        } else {
            kueuesim(&[cmd, path])
        };
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "warning: {path}:6:5: label kueue.x-k8s.io/queue-nme is neither read by the simulator nor a known Kueue, KAI or Volcano key (closest: kueue.x-k8s.io/queue-name); ignored"
            )),
            "{cmd}: {}",
            stderr(&o)
        );
    }
    for cmd in ["validate", "run"] {
        let o = kueuesim(&[cmd, path, "--strict"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "error: {path}:6:5: label kueue.x-k8s.io/queue-nme"
            )),
            "{cmd}: {}",
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
