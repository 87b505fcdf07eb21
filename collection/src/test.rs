//! `test`: what CI runs. The venvs and the cross-build tools, the module binaries (the
//! host's a debug build: the suite exercises behaviour, not size; every other platform's
//! the release cross build, which the platform tests run or check), the docs check, the changelog check, ansible-lint of what
//! users copy, the execution environment checks, the collection tarball installed where
//! the end-to-end tests run it from, `ansible-test sanity` on it, then every test of
//! the workspace.

use anyhow::Result;

use crate::{build, changelog, cross, docs, ee, galaxy, lint, repo, sanity, setup};

pub fn test(extra: &[&str]) -> Result<()> {
    setup::setup()?;
    cross::setup::setup()?;
    build::build_platforms(build::Profile::Debug)?;
    docs::check()?;
    changelog::check()?;
    lint::lint()?;
    ee::check()?;
    galaxy::install_for_tests()?;
    // A sanity failure is reported after the tests, which run either way.
    let sanity = sanity::sanity(true, sanity::Scope::Ci);
    let mut cmd = repo::cargo();
    if nextest_available() {
        cmd.args(["nextest", "run", "--workspace", "--no-fail-fast"]);
    } else {
        cmd.args(["test", "--workspace", "--no-fail-fast"]);
    }
    cmd.args(extra);
    let tests = repo::run(&mut cmd);
    sanity.and(tests)
}

fn nextest_available() -> bool {
    repo::cargo()
        .args(["nextest", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}
