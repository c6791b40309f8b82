//! Hostile input to `sweep --emit`, `--index` and `sweep collect`: names, paths and file
//! contents that would add a document, a line or a command to what is emitted, carry a
//! file from elsewhere to a cluster, or make a sweep write outside its `--out` directory.
//! Each case ends in exit 2 naming the input, or in exactly the artifact the user wrote.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{kueuesim, scenario, stderr, stdout, temp_dir};

const QUOTA: &str = "cq/team:spec.resourceGroups[0].flavors[name=default].resources[name=nvidia.com/gpu].nominalQuota";

/// A fresh directory for one test holding `first-fit/scenario.yaml` (the small golden
/// scenario) as a base under it.
fn sweep_dir(test: &str) -> PathBuf {
    let dir = temp_dir(test);
    std::fs::create_dir_all(dir.join("first-fit")).unwrap();
    std::fs::copy(
        scenario("golden/first-fit-nodes/scenario.yaml"),
        dir.join("first-fit/scenario.yaml"),
    )
    .unwrap();
    dir
}

/// The Sweep text named `name_yaml` (a YAML scalar as written) over first-fit's GPU quota:
/// two variants × `seeds`.
fn sweep_text(name_yaml: &str, base: &str, seeds: &str) -> String {
    format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata:\n  name: {name_yaml}\nspec:\n  base: {base}\n  seeds: {seeds}\n  parameters:\n  - name: gpus\n    values: [16, 32]\n    set: '{QUOTA}={{{{value}}}}'\n"
    )
}

fn write(path: &Path, text: &str) -> String {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The documents of `--emit kubernetes` output, after the checks no parser's leniency can
/// hide: one `---` line between exactly two documents, no other document marker, no
/// character a YAML 1.1 reader (go-yaml, behind kubectl) takes for a line break.
fn manifests(out: &str) -> Vec<Value> {
    for c in ['\u{2028}', '\u{2029}', '\u{85}', '\r'] {
        assert!(!out.contains(c), "raw {c:?} in\n{out}");
    }
    let markers: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("---") || l.starts_with("..."))
        .collect();
    assert_eq!(markers, ["---"], "{out}");
    let docs: Vec<Value> = serde_saphyr::from_multiple(out).expect("the output is YAML");
    let kinds: Vec<&str> = docs
        .iter()
        .map(|d| d["kind"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(kinds, ["ConfigMap", "Job"], "{out}");
    docs
}

/// `manifests` of output bytes (panics, as it does, on anything else).
pub(super) fn manifests_of(out: &[u8]) -> Vec<Value> {
    manifests(std::str::from_utf8(out).expect("UTF-8 output"))
}

/// Runs `--emit kubernetes` with `extra` flags; asserts success and returns the documents
/// and stderr.
fn emit_kubernetes(file: &str, extra: &[&str]) -> (Vec<Value>, String) {
    let mut args = vec!["sweep", file, "--emit", "kubernetes"];
    args.extend_from_slice(extra);
    let o = kueuesim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    (manifests(&stdout(&o)), stderr(&o))
}

/// Debian's shellcheck, or `$SHELLCHECK`; None (the check skipped) where it is not
/// installed, unless `KUEUESIM_REQUIRE_SHELLCHECK` is set (CI's `.ci/run` sets it).
pub(super) fn shellcheck() -> Option<String> {
    let path = std::env::var("SHELLCHECK").unwrap_or_else(|_| "/usr/bin/shellcheck".into());
    if Path::new(&path).exists() {
        return Some(path);
    }
    assert!(
        std::env::var("KUEUESIM_REQUIRE_SHELLCHECK").is_err(),
        "KUEUESIM_REQUIRE_SHELLCHECK is set but {path} does not exist"
    );
    eprintln!(
        "skipping shellcheck: none at {path} (set SHELLCHECK or install Debian's shellcheck)"
    );
    None
}

/// `script` passes `bash -n`, and shellcheck where it is installed.
pub(super) fn check_script(script: &Path) {
    let o = Command::new("bash").arg("-n").arg(script).output().unwrap();
    assert!(o.status.success(), "bash -n: {}", stderr(&o));
    if let Some(sc) = shellcheck() {
        let o = Command::new(sc).arg(script).output().unwrap();
        assert!(
            o.status.success(),
            "shellcheck {}:\n{}\n{}",
            script.display(),
            stdout(&o),
            std::fs::read_to_string(script).unwrap()
        );
    }
}

/// Runs the Slurm script as array task 3 with a `kueuesim` on PATH that records its
/// arguments, in `dir/cwd`; returns them.
pub(super) fn run_script(script: &Path, dir: &Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    let cwd = dir.join("cwd");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let fake = bin.join("kueuesim");
    std::fs::write(
        &fake,
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"$ARGV_FILE\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let argv = dir.join("argv");
    let o = Command::new("bash")
        .arg(script)
        .current_dir(&cwd)
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("SLURM_ARRAY_TASK_ID", "3")
        .env("ARGV_FILE", &argv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let raw = std::fs::read(&argv).unwrap();
    String::from_utf8(raw)
        .unwrap()
        .split_terminator('\0')
        .map(String::from)
        .collect()
}

#[test]
fn sweep_names_that_are_not_dns_labels_exit_2_at_the_name() {
    let dir = sweep_dir("emit-names");
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    for (i, name) in [
        r#""a\nb""#,
        r#""x\n---\napiVersion: v1\nkind: Pod""#,
        "a/../../escape",
        "../../escape",
        "Upper",
        "trailing-",
        "'q''$(touch pwned)'''",
        "\"a\\u2028b\"",
        &"a".repeat(50),
    ]
    .iter()
    .enumerate()
    {
        let file = write(
            &dir.join(format!("s{i}.yaml")),
            &sweep_text(name, "first-fit", "1"),
        );
        // Run from `sub` without --out: the default directory is sweep-NAME.
        let o = Command::new(env!("CARGO_BIN_EXE_kueuesim"))
            .args(["sweep", &file, "-q"])
            .current_dir(&sub)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(&format!("s{i}.yaml:4:9: metadata.name")),
            "{name}: {err}"
        );
        assert!(
            err.contains("expected a DNS-1123 label") && err.contains("at most 49 characters"),
            "{name}: {err}"
        );
        for how in ["kubernetes", "slurm"] {
            let o = kueuesim(&["sweep", &file, "--emit", how]);
            assert_eq!(o.status.code(), Some(2), "{name} {how}: {}", stdout(&o));
            assert!(o.stdout.is_empty(), "{name} {how}");
        }
    }
    // Nothing was written anywhere: not beside the Sweep, not in `sub`, not above.
    assert!(!dir.join("escape").exists());
    assert!(!dir.join("pwned").exists() && !sub.join("pwned").exists());
    assert_eq!(std::fs::read_dir(&sub).unwrap().count(), 0);
    // 49 characters is the most: sweep-NAME-results is then 63.
    let file = write(
        &dir.join("long.yaml"),
        &sweep_text(&"a".repeat(49), "first-fit", "1"),
    );
    let (docs, _) = emit_kubernetes(&file, &[]);
    let claim = docs[1]["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|v| v["persistentVolumeClaim"]["claimName"].as_str())
        .unwrap()
        .to_string();
    assert_eq!(claim.len(), 63, "{claim}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_name_without_metadata_name_must_be_a_label_too() {
    let dir = sweep_dir("emit-stem");
    let text = sweep_text("x", "first-fit", "1").replace("metadata:\n  name: x\n", "");
    let file = write(&dir.join("My Sweep.yaml"), &text);
    let o = kueuesim(&["sweep", &file, "--emit", "slurm"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o)
            .contains("no metadata.name, and the file's name \"My Sweep\" cannot stand for it"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn emitted_manifests_are_exactly_a_config_map_and_a_job_holding_the_files_as_written() {
    let dir = sweep_dir("emit-docs");
    // A base whose text a hand-made `|` block breaks: a first line indented further than the
    // next, CRLF line ends, U+2028 and NEL (line breaks to a YAML 1.1 reader) in comments,
    // a document marker, trailing blanks.
    let base = std::fs::read_to_string(dir.join("first-fit/scenario.yaml")).unwrap();
    let hostile = format!(
        "    # indented first line\n# a\u{2028}kind: Pod\n# b\u{85}hostPID: true\n{}\n---\n# end   \n\n\n",
        base.replace('\n', "\r\n")
    );
    write(&dir.join("hostile/scenario.yaml"), &hostile);
    // And a Sweep whose template holds a document marker, quotes and a command substitution.
    let text = sweep_text("docs", "hostile", "1").replace(
        "  parameters:",
        "  # ---\n  # $(touch pwned) '\"\n  parameters:",
    );
    let file = write(&dir.join("docs.yaml"), &text);
    // The base loads as it is (CRLF, U+2028 in a comment): the sweep runs.
    let o = kueuesim(&["validate", dir.join("hostile").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (docs, err) = emit_kubernetes(&file, &["--queue", "team.sweeps"]);
    let data = &docs[0]["data"];
    assert_eq!(data["sweep.yaml"], text.as_str());
    assert_eq!(data["base-00-scenario.yaml"], hostile.as_str());
    assert_eq!(data.as_object().unwrap().len(), 2, "{data}");
    // Every embedded file named on stderr.
    assert!(
        err.contains("ConfigMap sweep-docs: sweep.yaml <- ")
            && err.contains("ConfigMap sweep-docs: base-00-scenario.yaml <- "),
        "{err}"
    );
    let pod = &docs[1]["spec"]["template"]["spec"];
    assert_eq!(
        pod["containers"][0]["args"],
        serde_json::json!([
            "sweep",
            "/sweep/sweep.yaml",
            "--index",
            "$(JOB_COMPLETION_INDEX)",
            "--out",
            "/results",
            "--quiet",
            "--base",
            "/sweep/base-00-scenario.yaml"
        ])
    );
    assert_eq!(
        docs[1]["metadata"]["labels"],
        serde_json::json!({"kueue.x-k8s.io/queue-name": "team.sweeps"})
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The rules of Pod Security Standards "restricted" (and "baseline", which it includes)
/// that a Job's pod template can break, checked on the parsed document, plus what this
/// project asks of its Job besides: no service-account token, requests and limits, a
/// fully qualified image.
fn restricted_violations(job: &Value) -> Vec<String> {
    let mut v = Vec::new();
    let pod = &job["spec"]["template"]["spec"];
    for host in ["hostNetwork", "hostPID", "hostIPC"] {
        if pod[host] == true {
            v.push(format!("{host}: true"));
        }
    }
    if pod["automountServiceAccountToken"] != false {
        v.push("automountServiceAccountToken is not false".into());
    }
    let pod_sc = &pod["securityContext"];
    if pod_sc["runAsUser"] == 0 {
        v.push("pod runAsUser 0".into());
    }
    let allowed = [
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ];
    for vol in pod["volumes"].as_array().into_iter().flatten() {
        let kinds: Vec<&String> = vol
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "name")
            .collect();
        if kinds.len() != 1 || !allowed.contains(&kinds[0].as_str()) {
            v.push(format!("volume {vol}: a type restricted does not allow"));
        }
    }
    let containers: Vec<&Value> = ["containers", "initContainers", "ephemeralContainers"]
        .iter()
        .flat_map(|k| pod[*k].as_array().into_iter().flatten())
        .collect();
    if containers.is_empty() {
        v.push("no containers".into());
    }
    for c in containers {
        let sc = &c["securityContext"];
        let name = c["name"].as_str().unwrap_or("?");
        let either = |field: &str| -> &Value {
            if sc[field].is_null() {
                &pod_sc[field]
            } else {
                &sc[field]
            }
        };
        if either("runAsNonRoot") != true {
            v.push(format!("{name}: runAsNonRoot not true"));
        }
        if sc["runAsUser"] == 0 {
            v.push(format!("{name}: runAsUser 0"));
        }
        if !matches!(
            either("seccompProfile")["type"].as_str(),
            Some("RuntimeDefault" | "Localhost")
        ) {
            v.push(format!("{name}: seccompProfile.type not RuntimeDefault"));
        }
        if sc["allowPrivilegeEscalation"] != false {
            v.push(format!("{name}: allowPrivilegeEscalation not false"));
        }
        if sc["privileged"] == true {
            v.push(format!("{name}: privileged"));
        }
        let drop = sc["capabilities"]["drop"].as_array();
        if !drop.is_some_and(|d| d.iter().any(|x| x == "ALL")) {
            v.push(format!("{name}: capabilities.drop lacks ALL"));
        }
        for add in sc["capabilities"]["add"].as_array().into_iter().flatten() {
            if add != "NET_BIND_SERVICE" {
                v.push(format!("{name}: capability {add} added"));
            }
        }
        if sc["readOnlyRootFilesystem"] != true {
            v.push(format!("{name}: readOnlyRootFilesystem not true"));
        }
        for p in c["ports"].as_array().into_iter().flatten() {
            if !p["hostPort"].is_null() {
                v.push(format!("{name}: hostPort"));
            }
        }
        for kind in ["requests", "limits"] {
            for r in ["cpu", "memory"] {
                if c["resources"][kind][r].as_str().is_none_or(str::is_empty) {
                    v.push(format!("{name}: no {kind}.{r}"));
                }
            }
        }
        let image = c["image"].as_str().unwrap_or("");
        let host = image.split('/').next().unwrap_or("");
        if !image.contains('/') || !(host.contains(['.', ':']) || host == "localhost") {
            v.push(format!("{name}: image {image:?} names no registry"));
        }
    }
    v
}

/// Object names: DNS-1123 labels of at most 63 characters (no trailing '-').
fn assert_names_are_labels(docs: &[Value]) {
    let mut names: Vec<String> = docs
        .iter()
        .map(|d| d["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    for vol in docs[1]["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .unwrap()
    {
        for n in [
            &vol["configMap"]["name"],
            &vol["persistentVolumeClaim"]["claimName"],
        ] {
            if let Some(n) = n.as_str() {
                names.push(n.to_string());
            }
        }
    }
    for n in names {
        let ok = n.len() <= 63
            && n.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && n.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        assert!(ok, "{n:?}");
    }
}

#[test]
fn the_emitted_job_meets_pod_security_standards_restricted() {
    let dir = sweep_dir("emit-restricted");
    let file = write(&dir.join("r.yaml"), &sweep_text("r", "first-fit", "1..3"));
    let (docs, _) = emit_kubernetes(&file, &["--parallelism", "2"]);
    assert_eq!(restricted_violations(&docs[1]), Vec::<String>::new());
    assert_names_are_labels(&docs);
    let pod = &docs[1]["spec"]["template"]["spec"];
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "localhost/kueuesim:latest");
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(c["resources"]["limits"]["memory"], "1Gi");
    // /tmp is an emptyDir: the root filesystem is read-only.
    assert!(
        c["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["mountPath"] == "/tmp" && m["name"] == "scratch")
    );
    assert_eq!(docs[1]["spec"]["completions"], 6);
    assert_eq!(docs[1]["spec"]["parallelism"], 2);
    // --image and --memory as given; a digest pin is an image reference.
    let pinned = "registry.example:5000/team/kueuesim@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    let (docs, err) = emit_kubernetes(&file, &["--image", pinned, "--memory", "2Gi"]);
    let c = &docs[1]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["image"], pinned);
    assert_eq!(c["resources"]["requests"]["memory"], "2Gi");
    assert!(!err.contains("warning"), "{err}");
    // An image without a registry is allowed, and said.
    let (_, err) = emit_kubernetes(&file, &["--image", "kueuesim:0.1"]);
    assert!(
        err.contains("warning: --image kueuesim:0.1 names no registry"),
        "{err}"
    );
    // Options that would add a line or a label: exit 2, nothing printed.
    for (flag, value, want) in [
        ("--queue", "a\nb: c", "--queue \"a\\nb: c\""),
        ("--queue", "Batch", "expected a LocalQueue name"),
        ("--queue", "-q", "expected a LocalQueue name"),
        ("--image", "x\n  hostPID: true", "--image"),
        ("--image", "x@sha256:12", "expected sha256: and 64"),
        ("--memory", "lots", "--memory"),
        ("--memory", "0", "expected a positive amount"),
        ("--trace-claim", "a/b", "--trace-claim"),
    ] {
        let arg = format!("{flag}={value}");
        let o = kueuesim(&["sweep", &file, "--emit", "kubernetes", &arg]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value:?}: {}", stdout(&o));
        assert!(o.stdout.is_empty());
        assert!(
            stderr(&o).contains(want),
            "{flag} {value:?}: {}",
            stderr(&o)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_sweep_file_or_out_path_with_quotes_and_command_substitution_runs_nothing() {
    let dir = sweep_dir("emit-slurm-words");
    let file = write(
        &dir.join("q'$(touch pwned)'.yaml"),
        &sweep_text("q", "first-fit", "1..2"),
    );
    for (i, out) in [
        "o'$(touch pwned)'",
        "o\n#SBATCH --wrap=touch pwned\n$(touch pwned)",
        "o\u{1b}]0;x\u{7} `touch pwned` \\",
        "-o",
    ]
    .iter()
    .enumerate()
    {
        let out_path = dir.join(out);
        let o = kueuesim(&[
            "sweep",
            &file,
            "--emit",
            "slurm",
            "--out",
            out_path.to_str().unwrap(),
            "--base",
            dir.join("first-fit").to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{out:?}: {}", stderr(&o));
        let text = stdout(&o);
        // Four comment lines, four directives, one command.
        let kinds: Vec<char> = text
            .lines()
            .map(|l| match l {
                l if l.starts_with("#!") => '!',
                l if l.starts_with("#SBATCH ") => 'S',
                l if l.starts_with('#') => '#',
                l if l.starts_with("exec kueuesim sweep ") => 'e',
                _ => '?',
            })
            .collect();
        assert_eq!(kinds, "!###SSSSe".chars().collect::<Vec<_>>(), "{text}");
        let script = dir.join(format!("job-{i}.sbatch"));
        std::fs::write(&script, &text).unwrap();
        check_script(&script);
        let argv = run_script(&script, &dir.join(format!("run-{i}")));
        assert_eq!(
            argv,
            [
                "sweep",
                &file,
                "--index",
                "3",
                "--out",
                out_path.to_str().unwrap(),
                "--quiet",
                "--base",
                dir.join("first-fit").to_str().unwrap(),
            ],
            "{text}"
        );
        assert!(!dir.join(format!("run-{i}/cwd/pwned")).exists(), "{text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn base_files_outside_the_sweeps_directory_need_allow_outside_base() {
    let dir = sweep_dir("emit-outside");
    let file = write(
        &dir.join("sweeps/s.yaml"),
        &sweep_text("s", "../first-fit", "1"),
    );
    let o = kueuesim(&["sweep", &file, "--emit", "kubernetes"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("first-fit/scenario.yaml is outside the Sweep file's directory")
            && err.contains("--allow-outside-base"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    let (docs, err) = emit_kubernetes(&file, &["--allow-outside-base"]);
    assert!(docs[0]["data"]["base-00-scenario.yaml"].is_string());
    assert!(
        err.contains("base-00-scenario.yaml <- ") && err.contains("first-fit/scenario.yaml"),
        "{err}"
    );
    // `--base` is held to the same rule; a symbolic link inside the directory to a file
    // outside is outside.
    let o = kueuesim(&[
        "sweep",
        &file,
        "--emit",
        "kubernetes",
        "--base",
        dir.join("first-fit").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    std::os::unix::fs::symlink(
        dir.join("first-fit/scenario.yaml"),
        dir.join("sweeps/linked.yaml"),
    )
    .unwrap();
    let linked = write(
        &dir.join("sweeps/l.yaml"),
        &sweep_text("l", "linked.yaml", "1"),
    );
    let o = kueuesim(&["sweep", &linked, "--emit", "kubernetes"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("(it is "), "{}", stderr(&o));
    // The Slurm script carries no file: the rule is the ConfigMap's.
    let o = kueuesim(&["sweep", &file, "--emit", "slurm"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A copy of the native trace example (scenario.yaml and trace.csv) under `dir/name`.
fn native_trace(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::create_dir_all(&to).unwrap();
    for f in ["scenario.yaml", "trace.csv"] {
        std::fs::copy(
            format!("{}/{f}", scenario("examples/trace-native")),
            to.join(f),
        )
        .unwrap();
    }
    to
}

/// A Sweep over `base`'s trace row limit (a variant changes the trace).
fn trace_sweep(dir: &Path, name: &str, base: &str) -> String {
    write(
        &dir.join(format!("{name}.yaml")),
        &format!(
            "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata:\n  name: {name}\nspec:\n  base: {base}\n  seeds: 1\n  parameters:\n  - name: rows\n    values: [5, 8]\n    set: 'workloadtrace/team-trace:spec.limit={{{{value}}}}'\n"
        ),
    )
}

#[test]
fn a_bases_trace_travels_with_the_job_and_an_index_run_on_the_pod_finds_it() {
    let dir = temp_dir("emit-traces");
    native_trace(&dir, "native");
    let file = trace_sweep(&dir, "t", "native/scenario.yaml");
    let (docs, err) = emit_kubernetes(&file, &[]);
    let csv = std::fs::read_to_string(dir.join("native/trace.csv")).unwrap();
    assert_eq!(docs[0]["data"]["trace-00-trace.csv"], csv.as_str());
    assert!(err.contains("trace-00-trace.csv <- "), "{err}");
    assert_eq!(restricted_violations(&docs[1]), Vec::<String>::new());
    // The pod as the kubelet would make it: each ConfigMap volume's items at their paths
    // under the mount, then the container's arguments run there.
    let pod = &docs[1]["spec"]["template"]["spec"];
    let root = dir.join("pod");
    let mut mounts = Vec::new();
    for m in pod["containers"][0]["volumeMounts"].as_array().unwrap() {
        let at = m["mountPath"].as_str().unwrap();
        let local = root.join(at.trim_start_matches('/'));
        std::fs::create_dir_all(&local).unwrap();
        let vol = pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == m["name"])
            .unwrap();
        for item in vol["configMap"]["items"].as_array().into_iter().flatten() {
            let text = docs[0]["data"][item["key"].as_str().unwrap()]
                .as_str()
                .unwrap();
            write(&local.join(item["path"].as_str().unwrap()), text);
        }
        mounts.push((at.to_string(), local.display().to_string()));
    }
    let args: Vec<String> = pod["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let mut a = a.as_str().unwrap().replace("$(JOB_COMPLETION_INDEX)", "1");
            for (at, local) in &mounts {
                if let Some(rest) = a.strip_prefix(at.as_str()) {
                    a = format!("{local}{rest}");
                    break;
                }
            }
            a
        })
        .collect();
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--trace-root" && w[1].ends_with("pod/traces")),
        "{args:?}"
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = kueuesim(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let row = std::fs::read_to_string(root.join("results/rows/run-000001.csv")).unwrap();
    // Variant rows=8 (index 1), its trace cut to 8 rows: all 8 workloads loaded.
    let row = row.lines().nth(1).unwrap();
    assert!(row.starts_with("rows=8,8,1,ok,"), "{}", &row[..80]);
    assert!(
        row.ends_with(",8,0"),
        "workloads.total 8: {}",
        &row[row.len() - 40..]
    );

    // Traces over what a ConfigMap holds: exit 2 naming the way out, or on a claim.
    let big = native_trace(&dir, "big");
    let mut padded = csv.clone();
    while padded.len() < 1_100_000 {
        padded.push_str(&csv.lines().skip(1).collect::<Vec<_>>().join("\n"));
        padded.push('\n');
    }
    std::fs::write(big.join("trace.csv"), &padded).unwrap();
    let file = trace_sweep(&dir, "b", "big/scenario.yaml");
    let o = kueuesim(&["sweep", &file, "--emit", "kubernetes"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert!(
        err.contains("over the 1048576 bytes (1 MiB) a ConfigMap may hold")
            && err.contains("--trace-claim CLAIM")
            && err.contains("\n  trace.csv (found at "),
        "{err}"
    );
    let (docs, err) = emit_kubernetes(&file, &["--trace-claim", "traces"]);
    assert!(docs[0]["data"].get("trace-00-trace.csv").is_none());
    let vols = docs[1]["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .unwrap();
    let traces = vols.iter().find(|v| v["name"] == "traces").unwrap();
    assert_eq!(
        traces["persistentVolumeClaim"],
        serde_json::json!({"claimName": "traces", "readOnly": true})
    );
    assert!(
        err.contains("PersistentVolumeClaim traces must hold trace.csv (here: "),
        "{err}"
    );
    assert_eq!(restricted_violations(&docs[1]), Vec::<String>::new());

    // A trace named by an absolute path, or through a link out of its directory: refused.
    let abs = native_trace(&dir, "abs");
    let yaml = std::fs::read_to_string(abs.join("scenario.yaml")).unwrap();
    let outside = temp_dir("emit-traces-outside");
    write(&outside.join("secret.csv"), &csv);
    std::fs::write(
        abs.join("scenario.yaml"),
        yaml.replace(
            "path: trace.csv",
            &format!("path: {}", outside.join("secret.csv").display()),
        ),
    )
    .unwrap();
    let file = trace_sweep(&dir, "a", "abs/scenario.yaml");
    let o = kueuesim(&["sweep", &file, "--emit", "kubernetes"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("is not a path under a trace root"),
        "{}",
        stderr(&o)
    );
    let linked = native_trace(&dir, "linked");
    std::fs::remove_file(linked.join("trace.csv")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.csv"), linked.join("trace.csv")).unwrap();
    let file = trace_sweep(&dir, "l", "linked/scenario.yaml");
    let o = kueuesim(&["sweep", &file, "--emit", "kubernetes"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("outside the directory it was found in"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&outside).unwrap();
}

#[test]
fn an_invalid_index_writes_nothing() {
    let dir = sweep_dir("emit-index");
    let file = write(&dir.join("i.yaml"), &sweep_text("i", "first-fit", "1"));
    let out = dir.join("out");
    let o = kueuesim(&[
        "sweep",
        &file,
        "--index",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("--index 2: the sweep has 2 runs: expected 0..1"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sweep_outputs_never_leave_the_out_directory() {
    let dir = sweep_dir("emit-links");
    let file = write(&dir.join("v.yaml"), &sweep_text("v", "first-fit", "1"));
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let victims = dir.join("victims");
    std::fs::create_dir_all(&victims).unwrap();
    let names = [
        "sweep.csv",
        "sweep-summary.csv",
        "sweep.html",
        ".sweep-fingerprint",
        "sweep.yaml",
    ];
    for n in names {
        std::fs::write(victims.join(n), "victim\n").unwrap();
        std::os::unix::fs::symlink(victims.join(n), out.join(n)).unwrap();
    }
    let o = kueuesim(&["sweep", &file, "-q", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = kueuesim(&[
        "sweep",
        &file,
        "-q",
        "--index",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for n in names {
        assert_eq!(
            std::fs::read_to_string(victims.join(n)).unwrap(),
            "victim\n",
            "{n}"
        );
        let m = std::fs::symlink_metadata(out.join(n)).unwrap();
        assert!(m.file_type().is_file(), "{n} is now the sweep's own file");
    }
    assert!(
        std::fs::read_to_string(out.join("sweep.csv"))
            .unwrap()
            .starts_with("variant,")
    );
    // A rows/ that leads elsewhere is not written into, nor read.
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let fresh = dir.join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    std::os::unix::fs::symlink(&elsewhere, fresh.join("rows")).unwrap();
    let o = kueuesim(&[
        "sweep",
        &file,
        "-q",
        "--index",
        "1",
        "--out",
        fresh.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("rows: a symbolic link"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn collect_reads_only_row_files_and_names_what_it_skips() {
    let dir = sweep_dir("emit-collect");
    let file = write(&dir.join("c.yaml"), &sweep_text("c", "first-fit", "1..2"));
    let out = dir.join("out");
    let o_str = out.to_str().unwrap();
    for i in ["0", "1", "3"] {
        let o = kueuesim(&["sweep", &file, "-q", "--index", i, "--out", o_str]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let rows = out.join("rows");
    let row0 = std::fs::read_to_string(rows.join("run-000000.csv")).unwrap();
    // A subdirectory, a file of another name, a link to a row elsewhere, a row that is not
    // UTF-8: each named and skipped; the collect goes on.
    std::fs::create_dir_all(rows.join("run-000004.csv")).unwrap();
    std::fs::write(rows.join("notes.txt"), "hello").unwrap();
    std::fs::write(rows.join("run-x.csv"), &row0).unwrap();
    let elsewhere = dir.join("elsewhere.csv");
    std::fs::write(&elsewhere, row0.replace("gpus=16", "gpus=32")).unwrap();
    std::fs::remove_file(rows.join("run-000003.csv")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, rows.join("run-000003.csv")).unwrap();
    std::fs::write(rows.join("run-000002.csv"), b"variant\xff\xfe\n").unwrap();
    let o = kueuesim(&["sweep", "collect", o_str]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    for want in [
        "run-000004.csv: a directory: skipped",
        "notes.txt: not named run-N.csv: skipped",
        "run-x.csv: not named run-N.csv: skipped",
        "run-000003.csv: a symbolic link: skipped",
        "run-000002.csv: not UTF-8, so not a row of `--index`: skipped",
        "2 of 4 runs have no row",
        "indices 2, 3 (run them with --index N)",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("sweep.csv"))
            .unwrap()
            .lines()
            .count(),
        3
    );
    // A row file past 1 MiB is not a row: exit 2 naming it, before anything is written.
    std::fs::write(rows.join("run-000002.csv"), ",".repeat(2 << 20)).unwrap();
    std::fs::remove_file(out.join("sweep.csv")).unwrap();
    let o = kueuesim(&["sweep", "collect", o_str]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("run-000002.csv: over 1048576 bytes (1 MiB)"),
        "{}",
        stderr(&o)
    );
    assert!(!out.join("sweep.csv").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
