//! `sweep --emit kubernetes|slurm`: the sweep as a batch of `--index` runs elsewhere — a
//! Kubernetes Indexed Job (completions = runs, queued through Kueue, the Sweep, its base
//! scenario and the base's trace files in a ConfigMap) or a Slurm array script; each index
//! writes `rows/run-N.csv` (and the Sweep as `sweep.yaml`) and `kueuesim sweep collect DIR`
//! merges them.
//!
//! Nothing in a Sweep or its base can add a document, a line or a command to what is
//! emitted: the manifests are built as values and written by the YAML serializer (which
//! quotes or escapes whatever a block scalar cannot hold: U+2028, a first line indented
//! further, CR), every word of the script is quoted for the shell, and the names that appear
//! unquoted (the Sweep's name, `--queue`) are DNS-1123 names checked before.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use kueuesim_model::quantity::Quantity;
use kueuesim_scenario::trace::{TraceFile, trace_files};
use kueuesim_scenario::{LoadOptions, SourceFile};

use super::names::{LABEL_MAX, PREFIX, RESULTS_SUFFIX, object_name, subdomain_error};
use super::run::Prepared;
use super::spec::Sweep;
use crate::Failure;

/// Where `--emit` sends the runs.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum Emit {
    Kubernetes,
    Slurm,
}

/// The image the Job runs when `--image` is not given: the name `podman build -t kueuesim`
/// gives the image of the repository's Containerfile, fully qualified so that no runtime
/// looks for it on a default registry.
pub(crate) const DEFAULT_IMAGE: &str = "localhost/kueuesim:latest";

/// The most a ConfigMap may hold: apiserver's `ValidateConfigMap` refuses data and
/// binaryData over `MaxSecretSize` (1 MiB) in all. Keys are counted too, to be safe.
const CONFIGMAP_MAX_BYTES: u64 = 1024 * 1024;

/// Where the pod sees the Sweep and its base files, and the traces.
const SWEEP_MOUNT: &str = "/sweep";
const TRACE_MOUNT: &str = "/traces";
const RESULTS_MOUNT: &str = "/results";

/// The user and group the pod runs as: `nobody`, as the Containerfile's `USER`.
const NOBODY: u32 = 65534;

/// What `--emit` needs besides the Sweep and its base files.
pub(crate) struct Target<'a> {
    pub(crate) how: Emit,
    pub(crate) runs: usize,
    /// `--parallelism` (default: every run at once).
    pub(crate) parallelism: Option<usize>,
    pub(crate) out: &'a Path,
    pub(crate) queue: &'a str,
    pub(crate) image: &'a str,
    pub(crate) memory: &'a str,
    /// `--base` as given (empty: `spec.base`).
    pub(crate) base_flag: &'a [PathBuf],
    pub(crate) trace_root: Option<&'a Path>,
    pub(crate) trace_claim: Option<&'a str>,
    pub(crate) strict: bool,
    pub(crate) allow_outside_base: bool,
}

fn usage(message: String) -> Failure {
    Failure { code: 2, message }
}

/// The manifests or script for `target.runs` runs of `sweep`, whose variants are `variants`.
pub(crate) fn emit(
    target: &Target<'_>,
    sweep: &Sweep,
    base: &[SourceFile],
    variants: &[Prepared],
) -> Result<String, Failure> {
    match target.how {
        Emit::Slurm => slurm(target, sweep),
        Emit::Kubernetes => kubernetes(target, sweep, base, variants),
    }
}

/// Indexed Job parallelism / Slurm's `%N` array throttle: how many runs at once.
fn parallelism(target: &Target<'_>) -> usize {
    let runs = target.runs.max(1);
    target.parallelism.unwrap_or(runs).clamp(1, runs)
}

/// `s` as one word for bash: in single quotes (`'` written `'\''`), or, when it holds a
/// control character (a newline would end a comment line and start a command), as `$'…'`
/// with every such character escaped, so the word is always on one line. A word with `$`,
/// a backtick or a backslash is written as `$'…'` too: literal there as in single quotes,
/// and what shellcheck does not take for an expansion (SC2016) or an escape (SC1003)
/// meant to happen.
pub(crate) fn shell_word(s: &str) -> String {
    if !s
        .chars()
        .any(|c| c.is_control() || matches!(c, '$' | '`' | '\\'))
    {
        return format!("'{}'", s.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str(r"\\"),
            '\'' => out.push_str(r"\'"),
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            '\r' => out.push_str(r"\r"),
            c if c.is_control() => {
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(out, "\\x{b:02x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `p` made absolute (the script runs elsewhere in the cluster's filesystem), as text.
fn absolute_text(p: &Path, what: &str) -> Result<String, Failure> {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    abs.to_str().map(str::to_string).ok_or_else(|| {
        usage(format!(
            "{what} {}: not UTF-8: the script could not name it",
            abs.display()
        ))
    })
}

/// The sbatch array script.
fn slurm(target: &Target<'_>, sweep: &Sweep) -> Result<String, Failure> {
    let file = absolute_text(Path::new(&sweep.file.name), "the Sweep file")?;
    let out = absolute_text(target.out, "--out")?;
    let mut words = vec![
        "kueuesim".to_string(),
        "sweep".into(),
        shell_word(&file),
        "--index".into(),
        "\"$SLURM_ARRAY_TASK_ID\"".into(),
        "--out".into(),
        shell_word(&out),
        "--quiet".into(),
    ];
    if !target.base_flag.is_empty() {
        words.push("--base".into());
        for b in target.base_flag {
            words.push(shell_word(&absolute_text(b, "--base")?));
        }
    }
    if let Some(root) = target.trace_root {
        words.push("--trace-root".into());
        words.push(shell_word(&absolute_text(root, "--trace-root")?));
    }
    if target.strict {
        words.push("--strict".into());
    }
    let name = format!("{PREFIX}{}", sweep.name);
    let mut s = String::from("#!/bin/bash\n");
    let _ = writeln!(
        s,
        "# {} runs of sweep {}, one per array task; then, on a shared filesystem:",
        target.runs, sweep.name
    );
    let _ = writeln!(s, "#   kueuesim sweep collect {}", shell_word(&out));
    s.push_str("# merges rows/run-N.csv into sweep.csv, sweep-summary.csv and sweep.html.\n");
    let _ = writeln!(s, "#SBATCH --job-name={}", object_name(&name));
    let _ = writeln!(
        s,
        "#SBATCH --array=0-{}%{}",
        target.runs.saturating_sub(1),
        parallelism(target)
    );
    s.push_str("#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n");
    let _ = writeln!(s, "exec {}", words.join(" "));
    Ok(s)
}

/// Why `image` is not an image reference (`[host[:port]/]path[:tag][@sha256:digest]`, the
/// grammar of the distribution project's `reference` package, simplified), or None.
fn image_error(image: &str) -> Option<String> {
    let (name_tag, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    if let Some(d) = digest {
        let hex = d.strip_prefix("sha256:").unwrap_or("");
        if hex.len() != 64
            || !hex
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        {
            return Some(format!(
                "digest {d:?}: expected sha256: and 64 lower-case hex digits"
            ));
        }
    }
    let last_slash = name_tag.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match name_tag[last_slash..].rfind(':') {
        Some(i) => (
            &name_tag[..last_slash + i],
            Some(&name_tag[last_slash + i + 1..]),
        ),
        None => (name_tag, None),
    };
    if let Some(t) = tag {
        let ok = !t.is_empty()
            && t.len() <= 128
            && !t.starts_with(['.', '-'])
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !ok {
            return Some(format!(
                "tag {t:?}: expected up to 128 letters, digits, '_', '.', '-', not starting with '.' or '-'"
            ));
        }
    }
    if name.is_empty() || name.len() > 255 {
        return Some("expected a repository name of 1 to 255 characters".into());
    }
    let parts: Vec<&str> = name.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let ok = if i == 0 && parts.len() > 1 && is_registry(part) {
            let (host, port) = part.split_once(':').unwrap_or((part, "0"));
            !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
                && !port.is_empty()
                && port.chars().all(|c| c.is_ascii_digit())
        } else {
            let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
            part.starts_with(alnum)
                && part.ends_with(alnum)
                && part
                    .chars()
                    .all(|c| alnum(c) || matches!(c, '.' | '_' | '-'))
        };
        if !ok {
            return Some(format!(
                "{part:?}: expected lower-case letters, digits and '.', '_', '-' between them (a registry host first)"
            ));
        }
    }
    None
}

/// Whether the first part of an image name is a registry host (the `reference` package's
/// rule: it holds a '.' or a ':', or is `localhost`).
fn is_registry(part: &str) -> bool {
    part.contains(['.', ':']) || part == "localhost"
}

/// A ConfigMap key for file `name` (`<prefix>-<i>-<its file name>`): keys hold only
/// letters, digits, '-', '_' and '.' (apimachinery's `IsConfigMapKey`).
fn key(prefix: &str, i: usize, name: &str) -> String {
    let file = Path::new(name)
        .file_name()
        .map_or("file".into(), |n| n.to_string_lossy().into_owned());
    let clean: String = file
        .chars()
        .take(200)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{prefix}-{i:02}-{clean}")
}

/// A file the ConfigMap carries: its key, where the pod sees it (relative to its mount),
/// where it came from, and its text.
struct Embedded {
    key: String,
    path: String,
    from: String,
    text: String,
}

/// `p` resolved (symbolic links followed), or a usage error naming it.
fn canonical(p: &Path) -> Result<PathBuf, Failure> {
    std::fs::canonicalize(p).map_err(|e| Failure {
        code: 1,
        message: format!("{}: {e}", p.display()),
    })
}

/// Base files must lie under the Sweep file's directory (after symbolic links), unless
/// `--allow-outside-base`: a shared Sweep must not carry a file from elsewhere on this
/// machine (a `../../.kube/config`) into a cluster.
fn check_base_inside(
    target: &Target<'_>,
    sweep: &Sweep,
    base: &[SourceFile],
) -> Result<(), Failure> {
    if target.allow_outside_base {
        return Ok(());
    }
    let file = Path::new(&sweep.file.name);
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = canonical(&dir)?;
    for f in base {
        let real = canonical(Path::new(&f.name))?;
        if !real.starts_with(&dir) {
            return Err(usage(format!(
                "base file {} is outside the Sweep file's directory {}{}: the ConfigMap would carry it to the cluster; expected the base under that directory, or --allow-outside-base to embed it anyway",
                f.name,
                dir.display(),
                if real == Path::new(&f.name) {
                    String::new()
                } else {
                    format!(" (it is {})", real.display())
                }
            )));
        }
    }
    Ok(())
}

/// The normal parts of a trace path as written, joined by '/': where the pod finds it under
/// the trace mount, and how many there are. None for a path that names no place under a
/// root (absolute, `..`) or that a ConfigMap volume's item may not have (one starting with
/// `..`: apiserver's `validateLocalNonReservedPath`).
fn descending(written: &str) -> Option<(String, usize)> {
    let mut parts = Vec::new();
    for c in Path::new(written).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str()?.to_string()),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    let joined = parts.join("/");
    let n = parts.len();
    (n > 0 && !joined.starts_with("..")).then_some((joined, n))
}

/// Whether a file's YAML sets the `kueuesim.io/load-trace` annotation: the key outside a
/// comment (a `#` at the start of a line or after a blank), quoted or not, in block or flow
/// style. A comment that names the annotation (the platform's does) sets nothing.
fn names_load_trace(text: &str) -> bool {
    const KEY: &str = "kueuesim.io/load-trace";
    text.lines().any(|line| {
        let code = line
            .char_indices()
            .find(|&(i, c)| c == '#' && (i == 0 || line[..i].ends_with([' ', '\t'])))
            .map_or(line, |(i, _)| &line[..i]);
        code.match_indices(KEY).any(|(i, _)| {
            code[i + KEY.len()..]
                .trim_start_matches(['"', '\''])
                .trim_start()
                .starts_with(':')
        })
    })
}

/// The trace files of every variant (the base with its overrides: a variant may change a
/// trace's path), each once, checked: written relative to a trace root without `..`, and
/// found inside the directory it was looked up in (no symbolic link out of it).
fn traces(
    target: &Target<'_>,
    sweep: &Sweep,
    base: &[SourceFile],
    variants: &[Prepared],
) -> Result<Vec<(String, TraceFile)>, Failure> {
    // A serving object's load CSV (`kueuesim.io/load-trace`) is read beside its YAML file;
    // the ConfigMap does not carry it yet, so the pods would fail to read it: refused here,
    // never left out unseen.
    // A variant's patch may add the annotation too, and a `--set` may write it.
    let patches = variants.iter().flat_map(|v| &v.patches);
    let set = variants
        .iter()
        .flat_map(|v| &v.sets)
        .find(|s| s.contains("kueuesim.io/load-trace") || s.contains("kueuesim\\.io/load-trace"));
    if let Some(s) = set {
        return Err(usage(format!(
            "--set {}: a kueuesim.io/load-trace CSV is not shipped with --emit: expected the load written inline (kueuesim.io/load) for a sweep run on a cluster",
            kueuesim_model::names::shown(s)
        )));
    }
    if let Some(f) = base
        .iter()
        .chain(patches)
        .find(|f| names_load_trace(&f.text))
    {
        return Err(usage(format!(
            "{}: a kueuesim.io/load-trace CSV is not shipped with --emit: expected the load written inline (kueuesim.io/load) for a sweep run on a cluster",
            kueuesim_model::names::shown(&f.name)
        )));
    }
    let mut out: Vec<(String, TraceFile)> = Vec::new();
    for v in variants {
        let opts = LoadOptions {
            strict: target.strict,
            trace_root: target.trace_root.map(Path::to_path_buf),
            patches: v.patches.clone(),
            sets: v.sets.clone(),
            ..LoadOptions::default()
        };
        let files = trace_files(base, &opts).map_err(|e| Failure::from(v.remap(sweep, e)))?;
        for f in files {
            let Some((rel, depth)) = descending(&f.written) else {
                return Err(usage(format!(
                    "{}: trace file {:?} is not a path under a trace root (absolute, or with ..): a pod cannot find it there; expected it written relative to a trace root (docs/traces.md)",
                    f.declared_in, f.written
                )));
            };
            if let Some((_, seen)) = out.iter().find(|(r, _)| *r == rel) {
                if canonical(&seen.found)? != canonical(&f.found)? {
                    return Err(usage(format!(
                        "trace path {rel:?} names two files ({} for {}, {} for {}): the pod's trace root can hold one",
                        seen.found.display(),
                        seen.declared_in,
                        f.found.display(),
                        f.declared_in
                    )));
                }
                continue;
            }
            // The directory the loader found it in is `found` less the written parts.
            let place = f.found.ancestors().nth(depth).unwrap_or(Path::new("."));
            let real = canonical(&f.found)?;
            if !target.allow_outside_base && !real.starts_with(canonical(place)?) {
                return Err(usage(format!(
                    "trace file {} (of {}) is {}, outside the directory it was found in: expected the trace itself there, or --allow-outside-base to embed it anyway",
                    f.found.display(),
                    f.declared_in,
                    real.display()
                )));
            }
            out.push((rel, f));
        }
    }
    Ok(out)
}

/// The ConfigMap and the Indexed Job.
fn kubernetes(
    target: &Target<'_>,
    sweep: &Sweep,
    base: &[SourceFile],
    variants: &[Prepared],
) -> Result<String, Failure> {
    // The options first: a bad one is the user's typo, named before any file is looked at.
    if let Some(why) = subdomain_error(target.queue, LABEL_MAX) {
        return Err(usage(format!(
            "--queue {:?}: {why}: expected a LocalQueue name, a DNS-1123 subdomain of at most {LABEL_MAX} characters (Kueue's ValidateQueueName, and a label value)",
            target.queue
        )));
    }
    if let Some(why) = image_error(target.image) {
        return Err(usage(format!(
            "--image {:?}: {why}: expected an image reference such as registry.example/kueuesim@sha256:<digest>",
            target.image
        )));
    }
    if !target.image.split('/').next().is_some_and(is_registry) || !target.image.contains('/') {
        crate::warnings::warn(&format!(
            "--image {} names no registry: each node's runtime looks for it on its own default registry (docker.io for most); expected e.g. registry.example/kueuesim@sha256:<digest>",
            target.image
        ));
    }
    match Quantity::parse(target.memory) {
        Ok(q) if q.value().is_ok_and(|v| v > 0) => {}
        Ok(_) => {
            return Err(usage(format!(
                "--memory {:?}: expected a positive amount such as 1Gi",
                target.memory
            )));
        }
        Err(e) => return Err(usage(format!("--memory: {e}"))),
    }
    if let Some(claim) = target.trace_claim
        && let Some(why) = subdomain_error(claim, 253)
    {
        return Err(usage(format!(
            "--trace-claim {claim:?}: {why}: expected a PersistentVolumeClaim name, a DNS-1123 subdomain"
        )));
    }
    check_base_inside(target, sweep, base)?;

    let name = object_name(&format!("{PREFIX}{}", sweep.name));
    let claim = object_name(&format!("{PREFIX}{}{RESULTS_SUFFIX}", sweep.name));
    let mut files = vec![Embedded {
        key: "sweep.yaml".into(),
        path: "sweep.yaml".into(),
        from: sweep.file.name.clone(),
        text: sweep.file.text.clone(),
    }];
    for (i, f) in base.iter().enumerate() {
        let k = key("base", i, &f.name);
        files.push(Embedded {
            key: k.clone(),
            path: k,
            from: f.name.clone(),
            text: f.text.clone(),
        });
    }
    let size =
        |fs: &[Embedded]| -> u64 { fs.iter().map(|f| (f.key.len() + f.text.len()) as u64).sum() };
    let scenario_bytes = size(&files);
    if scenario_bytes > CONFIGMAP_MAX_BYTES {
        return Err(usage(format!(
            "the Sweep and its base files are {scenario_bytes} bytes: over the {CONFIGMAP_MAX_BYTES} bytes (1 MiB) a ConfigMap may hold; expected a smaller base (a trace's rows belong in its CSV)"
        )));
    }

    let traces = traces(target, sweep, base, variants)?;
    // The pod looks for a trace in its scenario file's directory first (the sweep mount):
    // a trace path equal to one of the files there would find that file instead.
    for (rel, f) in &traces {
        if files.iter().any(|e| e.path == *rel) {
            return Err(usage(format!(
                "trace path {rel:?} (of {}) is also the name of a file the pod sees beside its base: rename the trace",
                f.declared_in
            )));
        }
    }
    let mut trace_files = Vec::new();
    if target.trace_claim.is_none() {
        let mut bytes = 0u64;
        for (rel, f) in &traces {
            let len = std::fs::metadata(&f.found)
                .map_err(|e| Failure {
                    code: 1,
                    message: format!("{}: {e}", f.found.display()),
                })?
                .len();
            bytes += len + rel.len() as u64;
        }
        if scenario_bytes + bytes > CONFIGMAP_MAX_BYTES {
            let list: Vec<String> = traces
                .iter()
                .map(|(rel, f)| format!("\n  {rel} (found at {})", f.found.display()))
                .collect();
            return Err(usage(format!(
                "the base's trace files are {bytes} bytes: with the Sweep and its base ({scenario_bytes} bytes) over the {CONFIGMAP_MAX_BYTES} bytes (1 MiB) a ConfigMap may hold, so the Job cannot carry them; put them on a PersistentVolumeClaim, each at its path below, and pass --trace-claim CLAIM (mounted read-only at {TRACE_MOUNT}, the pod's --trace-root):{}",
                list.concat()
            )));
        }
        for (i, (rel, f)) in traces.iter().enumerate() {
            let bytes = std::fs::read(&f.found).map_err(|e| Failure {
                code: 1,
                message: format!("{}: {e}", f.found.display()),
            })?;
            let text = String::from_utf8(bytes).map_err(|_| {
                usage(format!(
                    "trace file {}: not UTF-8, which a ConfigMap's data cannot hold: put it on a PersistentVolumeClaim and pass --trace-claim CLAIM",
                    f.found.display()
                ))
            })?;
            trace_files.push(Embedded {
                key: key("trace", i, rel),
                path: rel.clone(),
                from: f.found.display().to_string(),
                text,
            });
        }
    }

    // Every file that leaves this machine, named.
    for f in files.iter().chain(&trace_files) {
        eprintln_visible!(
            "ConfigMap {name}: {} <- {} ({} bytes)",
            f.key,
            f.from,
            f.text.len()
        );
    }
    if let Some(c) = target.trace_claim {
        for (rel, f) in &traces {
            eprintln_visible!(
                "PersistentVolumeClaim {c} must hold {rel} (here: {}), mounted read-only at {TRACE_MOUNT}",
                f.found.display()
            );
        }
    }

    let mut args: Vec<String> = [
        "sweep",
        "/sweep/sweep.yaml",
        "--index",
        "$(JOB_COMPLETION_INDEX)",
        "--out",
        RESULTS_MOUNT,
        "--quiet",
        "--base",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(
        files[1..]
            .iter()
            .map(|f| format!("{SWEEP_MOUNT}/{}", f.path)),
    );
    let mut mounts = vec![VolumeMount {
        name: "sweep",
        mount_path: SWEEP_MOUNT,
        read_only: true,
    }];
    let mut volumes = vec![Volume {
        name: "sweep",
        config_map: Some(ConfigMapVolume {
            name: name.clone(),
            items: files
                .iter()
                .map(|f| KeyToPath {
                    key: f.key.clone(),
                    path: f.path.clone(),
                })
                .collect(),
        }),
        ..Volume::default()
    }];
    if !traces.is_empty() || target.trace_claim.is_some() {
        args.extend(["--trace-root".to_string(), TRACE_MOUNT.to_string()]);
        mounts.push(VolumeMount {
            name: "traces",
            mount_path: TRACE_MOUNT,
            read_only: true,
        });
        volumes.push(match target.trace_claim {
            Some(c) => Volume {
                name: "traces",
                persistent_volume_claim: Some(ClaimVolume {
                    claim_name: c.to_string(),
                    read_only: true,
                }),
                ..Volume::default()
            },
            None => Volume {
                name: "traces",
                config_map: Some(ConfigMapVolume {
                    name: name.clone(),
                    items: trace_files
                        .iter()
                        .map(|f| KeyToPath {
                            key: f.key.clone(),
                            path: f.path.clone(),
                        })
                        .collect(),
                }),
                ..Volume::default()
            },
        });
    }
    if target.strict {
        args.push("--strict".into());
    }
    mounts.push(VolumeMount {
        name: "results",
        mount_path: RESULTS_MOUNT,
        read_only: false,
    });
    volumes.push(Volume {
        name: "results",
        persistent_volume_claim: Some(ClaimVolume {
            claim_name: claim.clone(),
            read_only: false,
        }),
        ..Volume::default()
    });
    // The root filesystem is read-only: scratch space for anything that wants /tmp.
    mounts.push(VolumeMount {
        name: "scratch",
        mount_path: "/tmp",
        read_only: false,
    });
    volumes.push(Volume {
        name: "scratch",
        empty_dir: Some(EmptyDir {}),
        ..Volume::default()
    });

    let config_map = ConfigMap {
        api_version: "v1",
        kind: "ConfigMap",
        metadata: Metadata {
            name: name.clone(),
            labels: BTreeMap::new(),
        },
        data: files
            .iter()
            .chain(&trace_files)
            .map(|f| (f.key.clone(), f.text.clone()))
            .collect(),
    };
    let amounts = || Amounts {
        cpu: "1".into(),
        memory: target.memory.to_string(),
    };
    let seccomp = || SeccompProfile {
        kind: "RuntimeDefault",
    };
    let job = Job {
        api_version: "batch/v1",
        kind: "Job",
        metadata: Metadata {
            name: name.clone(),
            labels: BTreeMap::from([(
                "kueue.x-k8s.io/queue-name".to_string(),
                target.queue.to_string(),
            )]),
        },
        spec: JobSpec {
            completion_mode: "Indexed",
            completions: target.runs,
            parallelism: parallelism(target),
            // Kueue's batch/v1 Job integration expects a Job to arrive suspended.
            suspend: true,
            backoff_limit: 0,
            template: PodTemplate {
                spec: PodSpec {
                    restart_policy: "Never",
                    automount_service_account_token: false,
                    // Pod Security Standards "restricted": not root, the runtime's default
                    // seccomp profile; fsGroup lets nobody write the results volume.
                    security_context: PodSecurityContext {
                        run_as_non_root: true,
                        run_as_user: NOBODY,
                        run_as_group: NOBODY,
                        fs_group: NOBODY,
                        seccomp_profile: seccomp(),
                    },
                    containers: vec![Container {
                        name: "kueuesim",
                        image: target.image.to_string(),
                        image_pull_policy: "IfNotPresent",
                        args,
                        resources: Resources {
                            requests: amounts(),
                            limits: amounts(),
                        },
                        security_context: ContainerSecurityContext {
                            allow_privilege_escalation: false,
                            read_only_root_filesystem: true,
                            run_as_non_root: true,
                            capabilities: Capabilities { drop: vec!["ALL"] },
                            seccomp_profile: seccomp(),
                        },
                        volume_mounts: mounts,
                    }],
                    volumes,
                },
            },
        },
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {} runs of sweep {} as a Kubernetes Indexed Job queued through Kueue; each index",
        target.runs, sweep.name
    );
    let _ = writeln!(
        s,
        "# writes {RESULTS_MOUNT}/rows/run-N.csv on the PersistentVolumeClaim {claim} (yours to provide)."
    );
    s.push_str("# Then, with /results copied here (e.g. kubectl cp from a pod mounting the claim):\n#   kueuesim sweep collect results\n# merges the rows into sweep.csv, sweep-summary.csv and sweep.html.\n");
    s.push_str(&yaml(&config_map));
    s.push_str("---\n");
    s.push_str(&yaml(&job));
    Ok(s)
}

/// One document through the YAML serializer: it quotes or escapes what a plain or block
/// scalar cannot hold, so a value never becomes structure.
fn yaml<T: Serialize>(v: &T) -> String {
    serde_saphyr::to_string(v).expect("structs of strings, numbers and string maps serialize")
}

// The objects, with the fields the emit sets, in the order `kubectl` shows them.

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigMap {
    api_version: &'static str,
    kind: &'static str,
    metadata: Metadata,
    data: BTreeMap<String, String>,
}

#[derive(Serialize)]
struct Metadata {
    name: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    labels: BTreeMap<String, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Job {
    api_version: &'static str,
    kind: &'static str,
    metadata: Metadata,
    spec: JobSpec,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JobSpec {
    completion_mode: &'static str,
    completions: usize,
    parallelism: usize,
    suspend: bool,
    backoff_limit: u32,
    template: PodTemplate,
}

#[derive(Serialize)]
struct PodTemplate {
    spec: PodSpec,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PodSpec {
    restart_policy: &'static str,
    automount_service_account_token: bool,
    security_context: PodSecurityContext,
    containers: Vec<Container>,
    volumes: Vec<Volume>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PodSecurityContext {
    run_as_non_root: bool,
    run_as_user: u32,
    run_as_group: u32,
    fs_group: u32,
    seccomp_profile: SeccompProfile,
}

#[derive(Serialize)]
struct SeccompProfile {
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Container {
    name: &'static str,
    image: String,
    image_pull_policy: &'static str,
    args: Vec<String>,
    resources: Resources,
    security_context: ContainerSecurityContext,
    volume_mounts: Vec<VolumeMount>,
}

#[derive(Serialize)]
struct Resources {
    requests: Amounts,
    limits: Amounts,
}

#[derive(Serialize)]
struct Amounts {
    cpu: String,
    memory: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ContainerSecurityContext {
    allow_privilege_escalation: bool,
    read_only_root_filesystem: bool,
    run_as_non_root: bool,
    capabilities: Capabilities,
    seccomp_profile: SeccompProfile,
}

#[derive(Serialize)]
struct Capabilities {
    drop: Vec<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VolumeMount {
    name: &'static str,
    mount_path: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    read_only: bool,
}

#[derive(Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Volume {
    name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    config_map: Option<ConfigMapVolume>,
    #[serde(skip_serializing_if = "Option::is_none")]
    persistent_volume_claim: Option<ClaimVolume>,
    #[serde(skip_serializing_if = "Option::is_none")]
    empty_dir: Option<EmptyDir>,
}

#[derive(Serialize)]
struct ConfigMapVolume {
    name: String,
    items: Vec<KeyToPath>,
}

#[derive(Serialize)]
struct KeyToPath {
    key: String,
    path: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ClaimVolume {
    claim_name: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    read_only: bool,
}

#[derive(Serialize)]
struct EmptyDir {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_and_one_line() {
        assert_eq!(shell_word("/a b/c.yaml"), "'/a b/c.yaml'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("q'$(touch x)'.yaml"), r"$'q\'$(touch x)\'.yaml'");
        assert_eq!(shell_word("a\nb'c\\"), r"$'a\nb\'c\\'");
        assert_eq!(shell_word("a\u{1}\u{85}"), r"$'a\x01\xc2\x85'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn image_references_follow_the_reference_grammar() {
        for ok in [
            DEFAULT_IMAGE,
            "kueuesim",
            "registry.example:5000/team/kueuesim:0.1",
            "ghcr.io/x/kueuesim@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "localhost/kueuesim:1.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert_eq!(image_error(ok), None, "{ok}");
        }
        for bad in [
            "",
            "Kueuesim",
            "a b",
            "x:",
            "x\nimage: evil",
            "x@sha256:12",
            "registry.example/-x",
            "x:-tag",
        ] {
            assert!(image_error(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn trace_paths_under_a_root_keep_their_normal_parts() {
        assert_eq!(descending("t/rows.csv"), Some(("t/rows.csv".into(), 2)));
        assert_eq!(descending("./t/./rows.csv"), Some(("t/rows.csv".into(), 2)));
        assert_eq!(descending("../t.csv"), None);
        assert_eq!(descending("/etc/passwd"), None);
        assert_eq!(descending("."), None);
        assert_eq!(descending("..data/t.csv"), None);
    }
}
