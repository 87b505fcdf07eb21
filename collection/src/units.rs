//! `units`: `ansible-test units` of the Python plugin utils (`tests/unit/`, pytest), run
//! on the collection as the tarball installs it, as [`crate::sanity`] runs sanity.
//!
//! ansible-test lists files through git: the installed copy goes to
//! `build/units/ansible_collections/ferrox/proxmox` with a `git init`, and runs with
//! `HOME=build/units/home`. The tests run on the controller's Python of `.venv`, whose
//! pytest, pytest-xdist, pytest-mock and mock `cargo collection setup` installs (pinned):
//! ansible-test installs nothing here. A failure names each failing test (pytest's
//! summary), and the other tests still run.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::repo;

/// The venv whose ansible-test and Python run the unit tests (`setup::VENVS`).
const VENV: &str = ".venv";

/// `units`: the installed tarball (refreshed first unless `fresh`: the test command has
/// just installed it). With `logs`, ansible-test's output goes to `<logs>/units.log`
/// (its end shown when it fails) instead of the terminal, for a run beside the tests.
pub(crate) fn units(fresh: bool, logs: Option<&Path>) -> Result<()> {
    if !fresh {
        crate::galaxy::install_for_tests()?;
    }
    let installed = crate::galaxy::test_collections().join("ansible_collections/ferrox/proxmox");
    if !installed.join("tests/unit").is_dir() {
        bail!(
            "{} has no tests/unit: is it excluded by galaxy.yml's build_ignore?",
            installed.display()
        );
    }
    let work = repo::root().join("build/units");
    let tree = work.join("ansible_collections/ferrox/proxmox");
    let _ = std::fs::remove_dir_all(work.join("ansible_collections"));
    std::fs::create_dir_all(tree.parent().context("tree has a parent")?)?;
    repo::run(Command::new("cp").arg("-a").arg(&installed).arg(&tree))?;
    repo::run(Command::new("git").args(["init", "-q"]).current_dir(&tree))?;

    let bin = repo::root().join(VENV).join("bin");
    let ansible_test = bin.join("ansible-test");
    if !ansible_test.exists() {
        bail!("{} is missing: run `cargo collection setup`", ansible_test.display());
    }
    let python = repo::output(
        Command::new(bin.join("python3")).args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"]),
    )?;
    let mut cmd = Command::new(&ansible_test);
    cmd.args(["units", "--color", "no", "--python", python.trim()]);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    cmd.current_dir(&tree).env("HOME", work.join("home")).env("PATH", path);
    let start = std::time::Instant::now();
    let ran = match logs {
        Some(dir) => repo::run_logged(&mut cmd, &dir.join("units.log")),
        None => repo::run(&mut cmd),
    };
    println!(
        "ansible-test units: {} in {:.0} s",
        if ran.is_ok() { "passed" } else { "FAILED" },
        start.elapsed().as_secs_f64()
    );
    ran.context("ansible-test units failed")
}
