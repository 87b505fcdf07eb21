//! `test`: what CI runs. The cross-build tools, then the code's form (rustfmt, clippy),
//! the venvs; the host's module binary (a debug build: the suite exercises
//! behaviour, not size), the docs check, the changelog check, ansible-lint of what users
//! copy, the execution environment checks, the collection tarball installed where the
//! end-to-end tests run it from; then every test of the workspace, with `ansible-test
//! units`, `ansible-test sanity` and the docs site (built from that installed tarball,
//! checked, shot) beside them.
//!
//! Every other platform's release binary is cross-built meanwhile, at the lowest CPU
//! priority ([`cross::Priority::Background`]): the builds take whatever CPU the host
//! build, the checks, the tests and sanity leave (the pip installs, ansible-test's single
//! core, the waits on the simulator's tasks and on community.proxmox's polls) and never
//! hold them up. Run before the tests, as they were, they added their whole time to the
//! run's. The tests that read or run a cross-built binary ([`NEEDS_CROSS_BUILDS`]) run
//! last, once the binaries are installed and packed into the test tarball.

use anyhow::Result;

use crate::build::{self, Profile};
use crate::{changelog, cross, docs, ee, galaxy, lint, platform, repo, sanity, setup, site, style, units};

/// The tests that read or run a cross-built binary (nextest's filter language): the
/// checks of every platform's binary, and the linux_aarch64 binary under qemu-user.
const NEEDS_CROSS_BUILDS: &str =
    "(package(collection) & test(/^verify::tests::/)) | (package(ferrox-integration) & test(/^platform_aarch64::/))";

pub(crate) fn test(extra: &[&str]) -> Result<()> {
    // The cross-build tools first, so that the builds start at once and fill what the
    // code's checks and the pip installs leave of the CPU too.
    timed("setup --cross", cross::setup::setup)?;
    let crossed = build::cross_platforms(platform::host().ok());
    cross::check(&crossed)?;
    std::thread::scope(|scope| {
        let cross_builds = scope.spawn(|| {
            timed("cross builds, beside the rest", || {
                build::cross_build(&crossed, cross::Priority::Background)
            })
        });
        let install_cross_builds = || {
            let built = cross_builds
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("the cross builds' thread panicked")))?;
            timed("install the cross builds", || {
                build::install_release(&built)?;
                galaxy::install_for_tests()
            })
        };
        if let Err(e) = before_the_tests() {
            // No test will run: the builds would only keep the failure waiting.
            cross::stop_background();
            return Err(e);
        }
        match nextest_available() {
            // A filter of the caller's own, or no nextest to filter with: the suite as
            // asked, once every binary is there.
            false => {
                install_cross_builds()?;
                suite_beside_units_and_sanity(test_command(&["test", "--workspace", "--no-fail-fast"], extra))
            }
            true if !extra.is_empty() => {
                install_cross_builds()?;
                suite_beside_units_and_sanity(nextest(extra))
            }
            true => {
                let rest = format!("not ({NEEDS_CROSS_BUILDS})");
                let first = suite_beside_units_and_sanity(nextest(&["-E", &rest]));
                let last = install_cross_builds().and_then(|()| {
                    timed("tests of the cross-built binaries", || {
                        repo::run(&mut nextest(&["-E", NEEDS_CROSS_BUILDS]))
                    })
                });
                first.and(last)
            }
        }
    })
}

/// The code's form (rustfmt, clippy), the venvs, the host's debug build, the checks of
/// what ships, and the tarball installed for the tests.
fn before_the_tests() -> Result<()> {
    timed("style (rustfmt, clippy)", style::check)?;
    timed("setup", setup::setup)?;
    timed("build (host debug)", || build::build(Profile::Debug))?;
    timed("docs, changelog, lint, ee checks", || {
        docs::check()?;
        changelog::check()?;
        lint::lint()?;
        ee::check()
    })?;
    timed("install for tests", galaxy::install_for_tests)
}

/// `cargo nextest run` of the whole workspace with `args` (a test failing does not stop
/// the others).
fn nextest(args: &[&str]) -> std::process::Command {
    test_command(&["nextest", "run", "--workspace", "--no-fail-fast"], args)
}

fn test_command(base: &[&str], extra: &[&str]) -> std::process::Command {
    let mut cmd = repo::cargo();
    cmd.args(base).args(extra);
    cmd
}

/// Runs `tests` with the units, sanity and the docs site beside them.
///
/// ansible-test works on one core and waits on pip; side by side with the tests it takes
/// no wall time of its own (in CI, sanity's 266 s end long before the tests' 391 s). The
/// unit tests (a few seconds) run first in that thread, their output in
/// build/units/units.log, then sanity's in build/sanity/*.log (their ends shown on
/// failure). The docs site (its venv from PyPI, then about half a minute of one core,
/// logs in build/site/) has a thread of its own, for the same reason. A failure of any
/// of them is reported after the tests, which run either way.
fn suite_beside_units_and_sanity(mut tests: std::process::Command) -> Result<()> {
    let logs = repo::root().join("build/sanity");
    let unit_logs = repo::root().join("build/units");
    let (sanity, tests) = std::thread::scope(|scope| {
        let sanity = scope.spawn(|| {
            let units = timed("units, beside the tests", || units::units(true, Some(&unit_logs)));
            let sanity = timed("sanity, beside the tests", || {
                sanity::sanity(true, sanity::Scope::Ci, Some(&logs))
            });
            both(units, sanity)
        });
        let site = scope.spawn(|| {
            timed("docs site, beside the tests", || {
                site::build_and_check(&galaxy::test_collections())
            })
        });
        let tests = timed("tests", || repo::run(&mut tests));
        let site = site
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the docs site's build panicked")));
        let sanity = sanity
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the sanity run panicked")));
        (both(sanity, site), tests)
    });
    sanity.and(tests)
}

/// Both results: the first error, or both errors' messages.
fn both(first: Result<()>, second: Result<()>) -> Result<()> {
    match (first, second) {
        (Err(a), Err(b)) => Err(anyhow::anyhow!("{a:#}\n{b:#}")),
        (first, second) => first.and(second),
    }
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
