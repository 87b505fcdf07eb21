//! `test`: what CI runs. The venvs, the module binaries (debug: the suite exercises
//! behaviour, not size), the docs check, then every test of the workspace.

use anyhow::Result;

use crate::{build, docs, repo, setup};

pub fn test(extra: &[&str]) -> Result<()> {
    setup::setup()?;
    build::build(build::Profile::Debug)?;
    docs::check()?;
    let mut cmd = repo::cargo();
    if nextest_available() {
        cmd.args(["nextest", "run", "--workspace", "--no-fail-fast"]);
    } else {
        cmd.args(["test", "--workspace", "--no-fail-fast"]);
    }
    cmd.args(extra);
    repo::run(&mut cmd)
}

fn nextest_available() -> bool {
    repo::cargo()
        .args(["nextest", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}
