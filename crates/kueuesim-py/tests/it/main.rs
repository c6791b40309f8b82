//! The Python module's tests, run by `cargo test --workspace`: scripts/python-test.sh builds
//! the wheel with maturin in its own virtual environment and runs the pytest suite
//! (crates/kueuesim-py/tests/python). Without Python 3.10 or newer the test says so and
//! passes, unless `KUEUESIM_REQUIRE_PYTHON=1` (CI) makes that a failure.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn pytest_suite_passes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let usable = Command::new(&python)
        .args([
            "-c",
            "import sys, venv; sys.exit(sys.version_info < (3, 10))",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !usable {
        assert!(
            std::env::var("KUEUESIM_REQUIRE_PYTHON").is_err(),
            "{python} (3.10 or newer, with venv) not found and KUEUESIM_REQUIRE_PYTHON is set"
        );
        eprintln!("skipped: {python} 3.10 or newer with venv not found");
        return;
    }
    let mut cmd = Command::new("bash");
    cmd.arg(root.join("scripts/python-test.sh"));
    // The CLI this test binary was built beside (target/debug/kueuesim), if it is there:
    // the suite compares the module's results with its -o json.
    if let Some(bin) = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.parent()?.join("kueuesim")))
        .filter(|b| b.is_file())
    {
        cmd.env("KUEUESIM_BIN", bin);
    }
    let status = cmd.status().expect("bash runs scripts/python-test.sh");
    assert!(status.success(), "the Python test suite failed ({status})");
}
