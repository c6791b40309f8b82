//! `sweep --emit kubernetes|slurm`: the sweep as a batch of `--index` runs elsewhere — a
//! Kubernetes Indexed Job (completions = runs, queued through Kueue, the Sweep and its base
//! scenario in a ConfigMap) or a Slurm array script; each index writes `rows/run-N.csv` (and
//! the Sweep as `sweep.yaml`) and `kueuesim sweep collect DIR` merges them.

use std::fmt::Write as _;
use std::path::Path;

use kueuesim_scenario::SourceFile;

use super::spec::Sweep;

/// Where `--emit` sends the runs.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum Emit {
    Kubernetes,
    Slurm,
}

/// A ConfigMap key for a base file: `base-<i>-<its file name>`.
fn key(i: usize, f: &SourceFile) -> String {
    let name = Path::new(&f.name)
        .file_name()
        .map_or("scenario.yaml".into(), |n| n.to_string_lossy().into_owned());
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("base-{i:02}-{clean}")
}

fn block(text: &str, indent: &str) -> String {
    let mut out = String::new();
    for l in text.lines() {
        if l.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{indent}{l}");
        }
    }
    out
}

/// The manifests or script for `runs` runs of `sweep`.
pub(crate) fn emit(
    how: Emit,
    sweep: &Sweep,
    base: &[SourceFile],
    runs: usize,
    out: &Path,
    queue: &str,
    parallelism: Option<usize>,
) -> String {
    // Indexed Job parallelism / Slurm's `%N` array throttle: how many runs at once.
    let parallelism = parallelism.unwrap_or(runs).clamp(1, runs.max(1));
    let name = format!("sweep-{}", sweep.name)
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect::<String>();
    match how {
        Emit::Slurm => {
            let file = std::path::absolute(Path::new(&sweep.file.name))
                .unwrap_or_else(|_| Path::new(&sweep.file.name).to_path_buf());
            let out = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
            format!(
                "#!/bin/bash\n# {runs} runs of sweep {sweep_name}, one per array task; then, on a shared filesystem:\n#   kueuesim sweep collect {out}\n# merges rows/run-N.csv into sweep.csv, sweep-summary.csv and sweep.html.\n#SBATCH --job-name={name}\n#SBATCH --array=0-{last}%{parallelism}\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\nexec kueuesim sweep '{file}' --index \"$SLURM_ARRAY_TASK_ID\" --out '{out}' --quiet\n",
                sweep_name = sweep.name,
                file = file.display(),
                out = out.display(),
                last = runs.saturating_sub(1),
            )
        }
        Emit::Kubernetes => {
            let mut data = format!("  sweep.yaml: |\n{}", block(&sweep.file.text, "    "));
            let mut args = String::new();
            for (i, f) in base.iter().enumerate() {
                let k = key(i, f);
                let _ = write!(data, "  {k}: |\n{}", block(&f.text, "    "));
                let _ = write!(args, ", /sweep/{k}");
            }
            format!(
                "# {runs} runs of sweep {sweep_name} as a Kubernetes Indexed Job queued through Kueue; each index\n# writes /results/rows/run-N.csv on the PersistentVolumeClaim {name}-results (yours to provide).\n# Then, with /results copied here (e.g. kubectl cp from a pod mounting the claim):\n#   kueuesim sweep collect results\n# merges the rows into sweep.csv, sweep-summary.csv and sweep.html.\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n{data}---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  labels:\n    kueue.x-k8s.io/queue-name: {queue}\nspec:\n  completionMode: Indexed\n  completions: {runs}\n  parallelism: {parallelism}\n  suspend: true\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      # The image runs as nobody; fsGroup lets it write the results volume.\n      securityContext: {{runAsUser: 65534, runAsGroup: 65534, fsGroup: 65534}}\n      containers:\n      - name: kueuesim\n        image: kueuesim:latest  # built from the repository's Containerfile\n        args: [sweep, /sweep/sweep.yaml, --index, \"$(JOB_COMPLETION_INDEX)\", --out, /results, --quiet, --base{args}]\n        resources:\n          requests: {{cpu: \"1\", memory: 512Mi}}\n        volumeMounts:\n        - {{name: sweep, mountPath: /sweep}}\n        - {{name: results, mountPath: /results}}\n      volumes:\n      - name: sweep\n        configMap: {{name: {name}}}\n      - name: results\n        persistentVolumeClaim: {{claimName: {name}-results}}\n",
                sweep_name = sweep.name,
            )
        }
    }
}
