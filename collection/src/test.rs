//! `test`: what CI runs. The code's form first (rustfmt, clippy), then the venvs and the cross-build tools, the module binaries (the
//! host's a debug build: the suite exercises behaviour, not size; every other platform's
//! the release cross build, which the platform tests run or check), the docs check, the changelog check, ansible-lint of what
//! users copy, the execution environment checks, the collection tarball installed where
//! the end-to-end tests run it from, `ansible-test sanity` and `ansible-test units` on it,
//! then every test of the workspace.

use anyhow::Result;

use crate::{build, changelog, cross, docs, ee, galaxy, lint, repo, sanity, setup, style, units};

pub fn test(extra: &[&str]) -> Result<()> {
    timed("style (rustfmt, clippy)", style::check)?;
    timed("setup", setup::setup)?;
    timed("setup --cross", cross::setup::setup)?;
    timed("build (host debug, cross release)", || {
        build::build_platforms(build::Profile::Debug)
    })?;
    timed("docs, changelog, lint, ee checks", || {
        docs::check()?;
        changelog::check()?;
        lint::lint()?;
        ee::check()
    })?;
    timed("install for tests", galaxy::install_for_tests)?;
    let mut cmd = repo::cargo();
    if nextest_available() {
        cmd.args(["nextest", "run", "--workspace", "--no-fail-fast"]);
    } else {
        cmd.args(["test", "--workspace", "--no-fail-fast"]);
    }
    cmd.args(extra);
    // ansible-test works on one core, and the end-to-end tests spend most of their time
    // waiting on the simulator's tasks: side by side, the two take little longer than the
    // tests alone. The unit tests (a few seconds) run first in that thread, their output
    // in build/units/units.log, then sanity's in build/sanity/*.log (their ends shown on
    // failure); a failure of either is reported after the tests, which run either way.
    let logs = repo::root().join("build/sanity");
    let unit_logs = repo::root().join("build/units");
    let (sanity, tests) = std::thread::scope(|scope| {
        let sanity = scope.spawn(|| {
            let units = timed("units, beside the tests", || units::units(true, Some(&unit_logs)));
            let sanity = timed("sanity, beside the tests", || {
                sanity::sanity(true, sanity::Scope::Ci, Some(&logs))
            });
            match (units, sanity) {
                (Err(u), Err(s)) => Err(anyhow::anyhow!("{u:#}\n{s:#}")),
                (units, sanity) => units.and(sanity),
            }
        });
        let tests = timed("tests", || repo::run(&mut cmd));
        (
            sanity
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("the sanity run panicked"))),
            tests,
        )
    });
    sanity.and(tests)
}

/// Runs one phase, then says how long it took (CI's log shows where its time goes).
fn timed<T>(phase: &str, run: impl FnOnce() -> Result<T>) -> Result<T> {
    let started = std::time::Instant::now();
    let result = run();
    eprintln!(
        "=== {phase}: {} s{}",
        started.elapsed().as_secs(),
        if result.is_err() { " (failed)" } else { "" }
    );
    result
}

fn nextest_available() -> bool {
    repo::cargo()
        .args(["nextest", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}
