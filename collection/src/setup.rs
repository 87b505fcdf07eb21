//! `setup`: the Python environments the tests and the demo run ansible from.
//!
//! `.venv` holds the ansible-core the collection is developed against (plus proxmoxer
//! and requests, which community.proxmox needs, for side-by-side comparisons, and the
//! ecosystem tools: antsibull-changelog, ansible-lint, ansible-builder);
//! `.venv-2.17` the oldest ansible-core that `meta/runtime.yml` admits. Both are
//! pinned, created from PyPI, and left alone when already right. Then community.proxmox
//! 1.6 is put into build/anchor for the tests that compare against it.

use std::path::Path;
use std::process::Command;

use anyhow::Result;

use crate::repo;

/// `(venv dir, pip requirements)`.
pub(crate) const VENVS: [(&str, &[&str]); 2] = [
    (
        ".venv",
        &[
            "ansible-core==2.19.14",
            "proxmoxer==2.3.0",
            "requests==2.34.2",
            // The ecosystem checks of `cargo collection test`: changelog, lint, EE.
            "antsibull-changelog==0.36.0",
            "ansible-lint==26.10.1",
            "ansible-builder==3.2.0",
            // `ansible-test units` (tests/unit/) runs on this venv's Python: what
            // ansible-test's units requirements name, which it does not install itself.
            "pytest==9.2.0",
            "pytest-xdist==3.8.0",
            "pytest-mock==3.17.0",
            "mock==5.2.0",
        ],
    ),
    (".venv-2.17", &["ansible-core==2.17.14"]),
];

pub(crate) fn setup() -> Result<()> {
    for (dir, requirements) in VENVS {
        venv(dir, requirements)?;
    }
    anchor()
}

/// Only the main venv (ansible-galaxy, ansible-playbook): what the demo and the
/// conformance run need, so that they work on a fresh clone without `setup` first.
pub(crate) fn main_venv() -> Result<()> {
    let (dir, requirements) = VENVS[0];
    venv(dir, requirements)
}

/// Creates the venv `dir` (relative to the repository) with `requirements`, unless
/// it already has them.
pub(crate) fn venv(dir: &str, requirements: &[&str]) -> Result<()> {
    let venv = repo::root().join(dir);
    if satisfied(&venv, requirements) {
        println!("{dir}: up to date ({})", requirements.join(", "));
        return Ok(());
    }
    if !venv.join("bin/python3").exists() {
        repo::run(Command::new(python()).args(["-m", "venv"]).arg(&venv))?;
    }
    let mut pip = Command::new(venv.join("bin/python3"));
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .args(requirements);
    repo::run(&mut pip)?;
    println!("{dir}: installed {}", requirements.join(", "));
    Ok(())
}

/// community.proxmox 1.6 itself, which the simulator's fidelity tests run against
/// (tests/anchor/setup is idempotent and pins what it fetches).
fn anchor() -> Result<()> {
    let script = repo::root().join("tests/anchor/setup");
    if script.is_file() {
        let mut cmd = Command::new("bash");
        cmd.arg(&script)
            .env("ANCHOR_PYTHON", repo::root().join(".venv/bin/python3"));
        repo::run(&mut cmd)?;
    }
    Ok(())
}

/// The interpreter to create venvs with (`FERROX_PYTHON`, else python3).
fn python() -> String {
    std::env::var("FERROX_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether every `name==version` is installed in the venv.
fn satisfied(venv: &Path, requirements: &[&str]) -> bool {
    let python = venv.join("bin/python3");
    if !python.exists() {
        return false;
    }
    let Ok(out) = Command::new(&python)
        .args(["-m", "pip", "freeze", "--disable-pip-version-check"])
        .output()
    else {
        return false;
    };
    let frozen = String::from_utf8_lossy(&out.stdout)
        .to_ascii_lowercase()
        .replace('_', "-");
    requirements.iter().all(|req| {
        frozen
            .lines()
            .any(|l| l.trim() == req.to_ascii_lowercase().replace('_', "-"))
    })
}
