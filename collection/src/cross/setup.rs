//! `setup --cross`: what cross builds and the emulated tests need, each from the
//! registry that has it, saying what it installs and from where:
//!
//! - every tool of [`TOOLS`]: Debian's packages with apt-get, PyPI's into `.venv`, and
//!   the links of `build/cross-tools/bin` (rustc's `rust-objcopy` → Debian's
//!   `llvm-objcopy`); then it checks that the cross build finds every one;
//! - Debian's `qemu-user-static` (runs linux_aarch64 binaries on another host for the
//!   tests);
//! - the kernel: `binfmt_misc` mounted and Debian's qemu-aarch64 entry registered, so
//!   an aarch64 binary runs like a native one (ansible-core execs the module directly).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::tools::{Source, Toolbox, TOOLS};
use crate::repo;
use crate::setup;

/// Debian packages beyond the build's tools, each with what it is for.
const TEST_PACKAGES: [(&str, &str); 1] = [("qemu-user-static", "runs linux_aarch64 binaries on other hosts (tests)")];

const BINFMT_DIR: &str = "/proc/sys/fs/binfmt_misc";
const QEMU_AARCH64_ENTRY: &str = "/usr/lib/binfmt.d/qemu-aarch64.conf";

pub(crate) fn setup() -> Result<()> {
    debian_packages()?;
    setup::venv(".venv", &pypi_packages())?;
    links()?;
    if std::env::consts::ARCH != "aarch64" {
        register_qemu_aarch64()?;
    }
    Toolbox::of_repo().check(&crate::platform::PLATFORMS)
}

/// Every Debian package of [`TOOLS`] (links name their target's), then the tests'.
pub(crate) fn debian_package_list() -> Vec<(&'static str, &'static str)> {
    let mut packages: Vec<(&str, &str)> = Vec::new();
    for tool in TOOLS {
        let package = match tool.source {
            Source::Debian(package) | Source::Link { package, .. } => package,
            Source::Pypi(_) => continue,
        };
        if !packages.iter().any(|(p, _)| *p == package) {
            packages.push((package, tool.why));
        }
    }
    packages.extend(TEST_PACKAGES);
    packages
}

fn pypi_packages() -> Vec<&'static str> {
    let mut packages: Vec<&str> = TOOLS
        .iter()
        .filter_map(|t| match t.source {
            Source::Pypi(package) => Some(package),
            _ => None,
        })
        .collect();
    packages.sort_unstable();
    packages.dedup();
    packages
}

/// `build/cross-tools/bin/<name>` → the Debian program, for each [`Source::Link`].
fn links() -> Result<()> {
    let dir = Toolbox::of_repo().links;
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for tool in TOOLS {
        let Source::Link { to, package } = tool.source else {
            continue;
        };
        let link = dir.join(tool.name);
        if std::fs::read_link(&link).is_ok_and(|target| target == Path::new(to)) {
            println!("{}: links to {to}", repo::rel(&link));
            continue;
        }
        if !Path::new(to).is_file() {
            bail!("{to} is missing although Debian package {package} is installed; reinstall it: `apt-get install --reinstall {package}`");
        }
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(to, &link).with_context(|| format!("linking {} to {to}", link.display()))?;
        println!(
            "{}: linked to {to} (Debian package {package}): {}",
            repo::rel(&link),
            tool.why
        );
    }
    Ok(())
}

fn debian_packages() -> Result<()> {
    debian(
        &debian_package_list(),
        "cross builds need Debian's packages {} (or a rustup toolchain with the targets' std and zig)",
    )
}

/// Installs, as root with apt-get, those of `wanted` (`(package, what for)`) that are
/// missing; without root or apt-get it fails with `need` (its `{}` replaced by the
/// missing packages) and the command to run.
pub(crate) fn debian(wanted: &[(&str, &str)], need: &str) -> Result<()> {
    let missing: Vec<&str> = wanted.iter().map(|(p, _)| *p).filter(|p| !installed(p)).collect();
    if missing.is_empty() {
        let names: Vec<&str> = wanted.iter().map(|(p, _)| *p).collect();
        println!("Debian packages: up to date ({})", names.join(", "));
        return Ok(());
    }
    let install = format!("apt-get update && apt-get install -y {}", missing.join(" "));
    let need = need.replace("{}", &missing.join(", "));
    if !Path::new("/usr/bin/apt-get").exists() {
        bail!("{need}; this machine has no apt-get");
    }
    if unsafe { libc::geteuid() } != 0 {
        bail!("{need}: run as root `{install}`");
    }
    for (package, why) in wanted.iter().filter(|(p, _)| missing.contains(p)) {
        println!("installing {package} from the machine's Debian sources (apt-get): {why}");
    }
    repo::run(Command::new("apt-get").args(["update", "-q"]))?;
    repo::run(
        Command::new("apt-get")
            .args(["install", "-y", "-q", "--no-install-recommends"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
}

/// Mounts binfmt_misc when it is not, and registers Debian's qemu-aarch64 entry when
/// it is not registered.
fn register_qemu_aarch64() -> Result<()> {
    let entry = Path::new(BINFMT_DIR).join("qemu-aarch64");
    if entry.exists() {
        println!("binfmt_misc: qemu-aarch64 registered");
        return Ok(());
    }
    let fix = format!(
        "as root: `mount -t binfmt_misc binfmt_misc {BINFMT_DIR}; cat {QEMU_AARCH64_ENTRY} > {BINFMT_DIR}/register`"
    );
    if !Path::new(BINFMT_DIR).join("register").exists() {
        println!("mounting binfmt_misc on {BINFMT_DIR}");
        let mounted = Command::new("mount")
            .args(["-t", "binfmt_misc", "binfmt_misc", BINFMT_DIR])
            .status();
        if !mounted.is_ok_and(|s| s.success()) {
            bail!("binfmt_misc cannot be mounted here, so linux_aarch64 binaries cannot run for the tests; {fix}");
        }
    }
    let line = std::fs::read_to_string(QEMU_AARCH64_ENTRY)
        .with_context(|| format!("reading {QEMU_AARCH64_ENTRY} (Debian package qemu-user-static)"))?;
    println!("registering qemu-aarch64 with binfmt_misc (from {QEMU_AARCH64_ENTRY})");
    std::fs::write(Path::new(BINFMT_DIR).join("register"), line.trim())
        .with_context(|| format!("registering qemu-aarch64; {fix}"))?;
    Ok(())
}
