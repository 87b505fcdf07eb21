//! Cross builds: the module binary for a platform other than the build host's, with
//! zig as linker and C compiler (ring's C and assembly; macOS needs no SDK) through
//! cargo-zigbuild, and the target's standard library built from source by Debian's
//! rustc-web (`-Zbuild-std`), so nothing but packages of Debian and PyPI is needed
//! (`cargo collection setup --cross` installs them; see [`setup`]). What the build runs,
//! and the `PATH` it runs with, is [`tools`]' one list.

pub(crate) mod setup;
pub(crate) mod tools;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

use anyhow::{Context, Result};

use crate::platform::{self, Platform};
use crate::repo;
use tools::Toolbox;

/// Fails before anything is built when a tool the cross builds of `platforms` run is
/// not where setup puts it (see [`tools`]).
pub(crate) fn check(platforms: &[Platform]) -> Result<()> {
    Toolbox::of_repo().check(platforms)
}

/// How a cross build shares the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Priority {
    /// As any command: `build --all-platforms`, where the builds are the work.
    Normal,
    /// At the lowest CPU priority (`nice -n 19`), in a process group of its own: the test
    /// command builds beside its other work, which must never wait on a core, and stops
    /// the builds ([`stop_background`]) when that work fails first.
    Background,
}

/// The process groups of the background builds running now.
static BACKGROUND: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Stops every background build running now (SIGTERM to its process group: cargo, rustc
/// and zig), so that a run that failed does not wait minutes for builds it no longer
/// needs; each stopped build then fails.
pub(crate) fn stop_background() {
    let groups = BACKGROUND.lock().unwrap_or_else(|e| e.into_inner());
    for group in groups.iter() {
        // SAFETY: kill(2) with a negative pid signals that process group; no memory is touched.
        unsafe { libc::kill(-group, libc::SIGTERM) };
    }
}

/// Builds the module binary for `platform` with the release profile; returns the file.
/// It runs with [`Toolbox::apply`]'s environment only: Debian's cargo and rustc, and what
/// `setup --cross` installed; in a target directory of its own (`target/cross/<platform>`),
/// so that the builds of several platforms can run at once, and with its output in
/// `build/cross/<platform>.log`, shown when it fails.
pub(crate) fn build(platform: Platform, package: &str, binary: &str, priority: Priority) -> Result<PathBuf> {
    let toolbox = Toolbox::of_repo();
    toolbox.check(&[platform])?;
    let triple = platform.cross;
    let target_dir = repo::target_dir()?.join("cross").join(platform.name);
    let zigbuild = toolbox.venv_bin.join("cargo-zigbuild");
    let mut cmd = match priority {
        Priority::Normal => Command::new(zigbuild),
        Priority::Background => {
            let mut nice = Command::new("nice");
            nice.args(["-n", "19"]).arg(zigbuild).process_group(0);
            nice
        }
    };
    cmd.current_dir(repo::root()).args([
        "build",
        "--release",
        "--target",
        triple,
        "-p",
        package,
        "-Zbuild-std=std,panic_abort",
    ]);
    toolbox.apply(&mut cmd);
    cmd.env("CARGO_TARGET_DIR", &target_dir)
        .env("CARGO_TERM_COLOR", "never");
    if triple.ends_with("-musl") {
        // Debian's std has no self-contained musl start files: zig supplies them.
        cmd.env(platform::rustflags_var(triple), "-C link-self-contained=no");
    }
    if let Some(version) = platform.deployment_target() {
        cmd.env("MACOSX_DEPLOYMENT_TARGET", version);
    }
    let log = repo::root().join("build/cross").join(format!("{}.log", platform.name));
    println!(
        "{}: cross-building for {triple} (output in {})",
        platform.name,
        repo::rel(&log)
    );
    let started = std::time::Instant::now();
    let track = |pid: u32| {
        if priority == Priority::Background {
            BACKGROUND.lock().unwrap_or_else(|e| e.into_inner()).push(pid as i32);
        }
    };
    let untrack = |pid: u32| {
        BACKGROUND
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|group| *group != pid as i32);
    };
    repo::run_logged_watched(&mut cmd, &log, track, untrack)
        .with_context(|| format!("{}: the cross build for {triple} failed", platform.name))?;
    println!(
        "{}: cross-built for {triple} in {} s",
        platform.name,
        started.elapsed().as_secs()
    );
    Ok(target_dir.join(triple).join("release").join(binary))
}
