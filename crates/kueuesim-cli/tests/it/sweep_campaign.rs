//! The mutation campaign of Sweep files through `--emit`: the repository's Sweeps (and two of
//! the forms they may take) with numbers turned into extremes, lines deleted or duplicated,
//! bytes flipped, and hostile text (document markers, U+2028, quotes, command substitutions,
//! newlines) inserted, under hostile file and `--out` names. Whatever the mutant, `--emit
//! kubernetes` prints exactly a ConfigMap holding the Sweep as written and a Job, and
//! `--emit slurm` a script that passes `bash -n` (and shellcheck where installed) and runs
//! `kueuesim` with exactly the paths given; or the emit exits 1 or 2 with an error. Never a
//! panic, never a hang.
//!
//! Its time is the scenario campaign's, `KUEUESIM_FUZZ_SECONDS` (default 20; CI gives it
//! 60), from `KUEUESIM_FUZZ_SEED` (default 1); a failure names its case, and
//! `KUEUESIM_FUZZ_CASE=<case>` reruns just that one.

use std::path::Path;
use std::time::Duration;

use super::emit::{check_script, manifests_of, run_script};
use super::hostile::run_bounded;
use super::scenario;

/// SplitMix64: the campaign's random numbers, reproducible from one seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, of: &[&'a str]) -> &'a str {
        of[self.below(of.len())]
    }
}

/// The seeds, each as a Sweep in `sweeps/` of a directory holding `platform/` and
/// `native/` (the trace example): the repository's Sweeps, a list of variants with a patch,
/// and a sweep of a trace.
fn seeds() -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/sweeps");
    let mut out: Vec<String> = ["ml-team-quota-grid.yaml", "ml-team-quota.yaml"]
        .iter()
        .map(|f| std::fs::read_to_string(format!("{root}/{f}")).expect("a seed Sweep"))
        .collect();
    out.push(
        "apiVersion: kueuesim.io/v1alpha1
kind: Sweep
metadata:
  name: variants
spec:
  base: ../platform
  seeds: [1, 5, 9]
  figures: [\"waitSecondsInclPending.*\"]
  variants:
  - name: more-quota
    set: ['cq/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota=192']
  - name: patched
    patch: |
      apiVersion: kueue.x-k8s.io/v1beta2
      kind: ClusterQueue
      metadata: {name: ml-team}
      spec:
        fairSharing: {weight: \"2\"}
"
        .to_string(),
    );
    out.push(
        "apiVersion: kueuesim.io/v1alpha1
kind: Sweep
metadata:
  name: trace
spec:
  base: ../native/scenario.yaml
  seeds: 1..2
  parameters:
  - name: rows
    values: [5, 8]
    set: 'workloadtrace/team-trace:spec.limit={{value}}'
"
        .to_string(),
    );
    out
}

/// Text that must never become structure, a line or a command.
const HOSTILE: &[&str] = &[
    "\n---\napiVersion: v1\nkind: Pod\nspec: {hostPID: true}\n",
    "\u{2028}kind: Pod",
    "\u{85}",
    "\u{2029}",
    "'",
    "\"",
    "$(touch pwned)",
    "`touch pwned`",
    "\\",
    "\r\n",
    "|\n  x",
    "\t",
    "{{value}}",
    "\n#SBATCH --wrap='touch pwned'\n",
    "# ",
    "\u{0}",
    "\u{1b}[2J",
];

/// File names and `--out` names the paths in the script must survive.
const NAMES: &[&str] = &[
    "m",
    "q'$(touch pwned)'",
    "a b",
    "-m",
    "m\nexec touch pwned",
    "`touch pwned`",
    "m\\'\"",
];

/// The mutant of case `case`: its text and what was done.
fn mutant(seeds: &[String], case: u64) -> (Vec<u8>, String, String, Vec<String>) {
    let mut rng = Rng(case);
    let mut text = seeds[rng.below(seeds.len())].clone().into_bytes();
    let mut said = Vec::new();
    for _ in 0..1 + rng.below(2) {
        let s = String::from_utf8_lossy(&text).into_owned();
        let lines: Vec<&str> = s.lines().collect();
        match rng.below(8) {
            0 => {
                // A run of digits becomes an extreme.
                let b = s.as_bytes();
                let runs: Vec<usize> = (0..b.len())
                    .filter(|&i| b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit()))
                    .collect();
                if runs.is_empty() {
                    continue;
                }
                let a = runs[rng.below(runs.len())];
                let z = (a..b.len())
                    .find(|&i| !b[i].is_ascii_digit())
                    .unwrap_or(b.len());
                let e = rng.pick(&[
                    "0",
                    "-1",
                    "99999999999999999999",
                    "1e308",
                    ".nan",
                    "1000000",
                ]);
                said.push(format!("number at {a} -> {e}"));
                text = format!("{}{e}{}", &s[..a], &s[z..]).into_bytes();
            }
            1 | 2 => {
                let i = rng.below(lines.len());
                let mut l = lines.clone();
                if rng.below(2) == 0 {
                    l.remove(i);
                    said.push(format!("delete line {}", i + 1));
                } else {
                    l.insert(i, lines[i]);
                    said.push(format!("duplicate line {}", i + 1));
                }
                text = l.join("\n").into_bytes();
            }
            3 => {
                let i = rng.below(text.len());
                let mask = 1 + rng.below(255) as u8;
                said.push(format!("flip byte {i} ^ {mask}"));
                text[i] ^= mask;
            }
            4 => {
                // Hostile text inside a line, often in a value (after ": ").
                let i = rng.below(lines.len());
                let h = rng.pick(HOSTILE);
                let line = lines[i];
                let at = match line.find(": ") {
                    Some(p) if rng.below(3) > 0 => p + 2 + rng.below(line.len() - p - 1),
                    _ => rng.below(line.len() + 1),
                };
                let at = (0..=at)
                    .rev()
                    .find(|&j| line.is_char_boundary(j))
                    .unwrap_or(0);
                let mut l: Vec<String> = lines.iter().map(|x| x.to_string()).collect();
                l[i] = format!("{}{h}{}", &line[..at], &line[at..]);
                said.push(format!("insert {h:?} in line {} at {at}", i + 1));
                text = (l.join("\n") + "\n").into_bytes();
            }
            5 | 6 => {
                // Hostile text as a figure name, quoted: the YAML stays valid, so the
                // text reaches the emit (a figure no run has is a warning).
                let h = rng.pick(HOSTILE);
                let quoted = serde_json::to_string(h).expect("a JSON string");
                said.push(format!("figure {quoted}"));
                text = match s.find("  figures: [") {
                    Some(at) => format!("{}{quoted}, {}", &s[..at + 12], &s[at + 12..]),
                    None => s.replacen("spec:\n", &format!("spec:\n  figures: [{quoted}]\n"), 1),
                }
                .into_bytes();
            }
            _ => {
                // The name itself, quoted so that the YAML holds the hostile text.
                let h = rng.pick(HOSTILE);
                let quoted = serde_json::to_string(&format!("n{h}n")).expect("a JSON string");
                let l: Vec<String> = lines
                    .iter()
                    .map(|x| match x.strip_prefix("  name: ") {
                        Some(_) if !x.starts_with("  name: gpus") => format!("  name: {quoted}"),
                        None => x.to_string(),
                        Some(_) => x.to_string(),
                    })
                    .collect();
                said.push(format!("name {quoted}"));
                text = (l.join("\n") + "\n").into_bytes();
            }
        }
    }
    let file = format!("{}.yaml", rng.pick(NAMES));
    let out = rng.pick(NAMES).to_string();
    (text, file, out, said)
}

/// The directory the mutants live in: `platform/`, `native/` and `sweeps/`.
fn layout(dir: &Path) {
    let copy_dir = |from: &str, to: &Path| {
        std::fs::create_dir_all(to).expect("dir");
        for e in std::fs::read_dir(scenario(from)).expect("scenario dir") {
            let p = e.expect("entry").path();
            std::fs::copy(&p, to.join(p.file_name().expect("name"))).expect("copy");
        }
    };
    copy_dir("platform", &dir.join("platform"));
    copy_dir("examples/trace-native", &dir.join("native"));
    std::fs::create_dir_all(dir.join("sweeps")).expect("dir");
}

/// One mutant through both emits: whether each printed its artifact (else it exited with an
/// error), or a description of what went wrong.
fn check(dir: &Path, case: u64, seeds: &[String]) -> Result<(bool, bool), String> {
    let (text, file, out, said) = mutant(seeds, case);
    let path = dir.join("sweeps").join(&file);
    std::fs::write(&path, &text).expect("write the mutant");
    let p = path.to_str().expect("utf-8");
    let limit = Duration::from_secs(60);
    let o = run_bounded(
        &["sweep", p, "--emit", "kubernetes", "--allow-outside-base"],
        limit,
    );
    let fail = |what: String| format!("{what} after {said:?} of {file:?}");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let manifests = o.status.code() == Some(0);
    match o.status.code() {
        Some(0) => {
            let docs = std::panic::catch_unwind(|| manifests_of(&o.stdout))
                .map_err(|_| fail("--emit kubernetes printed other documents".into()))?;
            let written = String::from_utf8(text.clone()).ok();
            // The Sweep as written (a BOM or another encoding is decoded on the way in).
            if let Some(w) = written.filter(|w| !w.starts_with('\u{feff}'))
                && docs[0]["data"]["sweep.yaml"] != w.as_str()
            {
                return Err(fail("the ConfigMap's sweep.yaml is not the file".into()));
            }
            let args = &docs[1]["spec"]["template"]["spec"]["containers"][0]["args"];
            if args[0] != "sweep"
                || args[1] != "/sweep/sweep.yaml"
                || args[3] != "$(JOB_COMPLETION_INDEX)"
            {
                return Err(fail(format!("the Job's arguments {args}")));
            }
        }
        Some(1 | 2) if err.starts_with("error: ") && o.stdout.is_empty() => {}
        c => return Err(fail(format!("--emit kubernetes exit {c:?}: {err}"))),
    }
    let out_path = dir.join(&out);
    let o = run_bounded(
        &[
            "sweep",
            p,
            "--emit",
            "slurm",
            "--out",
            out_path.to_str().expect("utf-8"),
        ],
        limit,
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let script_made = o.status.code() == Some(0);
    match o.status.code() {
        Some(0) => {
            let script = dir.join("job.sbatch");
            std::fs::write(&script, &o.stdout).expect("write the script");
            std::panic::catch_unwind(|| check_script(&script))
                .map_err(|_| fail("the script fails bash -n or shellcheck".into()))?;
            let commands: Vec<&str> = std::str::from_utf8(&o.stdout)
                .map_err(|_| fail("the script is not UTF-8".into()))?
                .lines()
                .filter(|l| !l.starts_with('#'))
                .collect();
            if commands.len() != 1 || !commands[0].starts_with("exec kueuesim sweep ") {
                return Err(fail(format!("the script's commands: {commands:?}")));
            }
            // Run, with a `kueuesim` that records its arguments: exactly the paths given.
            let argv = std::panic::catch_unwind(|| run_script(&script, &dir.join("run")))
                .map_err(|_| fail("the script does not run".into()))?;
            let want_file = std::path::absolute(&path).expect("absolute");
            if argv.len() != 7
                || Path::new(&argv[1]) != want_file
                || Path::new(&argv[5]) != out_path
            {
                return Err(fail(format!("the script ran kueuesim {argv:?}")));
            }
        }
        Some(1 | 2) if err.starts_with("error: ") && o.stdout.is_empty() => {}
        c => return Err(fail(format!("--emit slurm exit {c:?}: {err}"))),
    }
    let _ = std::fs::remove_file(&path);
    Ok((manifests, script_made))
}

// The wall clock bounds the campaign; it decides nothing simulated.
#[allow(clippy::disallowed_methods)]
#[test]
fn campaign_sweep_mutants_emit_exactly_what_was_written_or_fail_with_an_error() {
    let env = |k: &str| std::env::var(k).ok();
    let seeds = seeds();
    let cases: Box<dyn Iterator<Item = u64>> = match env("KUEUESIM_FUZZ_CASE") {
        Some(c) => Box::new(std::iter::once(
            u64::from_str_radix(c.trim_start_matches("0x"), 16).expect("a hex case"),
        )),
        None => {
            let mut rng = Rng(env("KUEUESIM_FUZZ_SEED").map_or(1, |s| s.parse().expect("seed")));
            Box::new(std::iter::repeat_with(move || rng.next()))
        }
    };
    let budget = Duration::from_secs(
        env("KUEUESIM_FUZZ_SECONDS").map_or(20, |s| s.parse().expect("seconds")),
    );
    let dir = super::temp_dir("sweep-campaign");
    layout(&dir);
    let start = std::time::Instant::now();
    let (mut ran, mut manifests, mut scripts) = (0u64, 0u64, 0u64);
    let mut failures = Vec::new();
    for case in cases {
        if start.elapsed() >= budget && ran > 0 {
            break;
        }
        match check(&dir, case, &seeds) {
            Ok((m, s)) => {
                manifests += u64::from(m);
                scripts += u64::from(s);
            }
            Err(e) => failures.push(format!("KUEUESIM_FUZZ_CASE={case:x}: {e}")),
        }
        ran += 1;
        if failures.len() >= 10 {
            break;
        }
    }
    // A command substitution that ran would have left this.
    let pwned = ["sweeps/pwned", "pwned", "run/cwd/pwned"]
        .iter()
        .any(|p| dir.join(p).exists());
    eprintln!(
        "sweep mutation campaign: {ran} mutants in {:.0?}: {manifests} emitted manifests, {scripts} scripts, the rest exit 1 or 2",
        start.elapsed()
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!pwned, "a command ran");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
