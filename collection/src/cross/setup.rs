//! `setup --cross`: what cross builds and the emulated tests need, each from the
//! registry that has it, saying what it installs and from where:
//!
//! - Debian: `rustc-web`, `cargo-web`, `rust-web-src` (a compiler with its standard
//!   library's source, for `-Zbuild-std`), `qemu-user-static` (runs linux_aarch64
//!   binaries on another host for the tests);
//! - PyPI, into `.venv`: `ziglang` and `cargo-zigbuild` (linker and C compiler for
//!   every target);
//! - the kernel: `binfmt_misc` mounted and Debian's qemu-aarch64 entry registered, so
//!   an aarch64 binary runs like a native one (ansible-core execs the module directly).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::repo;
use crate::setup;

/// Debian packages, each with what it is for.
pub const DEBIAN_PACKAGES: [(&str, &str); 4] = [
    ("rustc-web", "a Rust compiler that builds the targets' std from source"),
    ("cargo-web", "its cargo"),
    ("rust-web-src", "the standard library's source for -Zbuild-std"),
    ("qemu-user-static", "runs linux_aarch64 binaries on other hosts (tests)"),
];

/// PyPI packages, into the main venv.
pub const PYPI_PACKAGES: [&str; 2] = ["ziglang==0.17.1", "cargo-zigbuild==0.24.1"];

const BINFMT_DIR: &str = "/proc/sys/fs/binfmt_misc";
const QEMU_AARCH64_ENTRY: &str = "/usr/lib/binfmt.d/qemu-aarch64.conf";

pub fn setup() -> Result<()> {
    debian_packages()?;
    setup::venv(".venv", &PYPI_PACKAGES)?;
    if std::env::consts::ARCH != "aarch64" {
        register_qemu_aarch64()?;
    }
    Ok(())
}

fn debian_packages() -> Result<()> {
    let missing: Vec<&str> = DEBIAN_PACKAGES.iter().map(|(p, _)| *p).filter(|p| !installed(p)).collect();
    if missing.is_empty() {
        println!("Debian packages: up to date ({})", DEBIAN_PACKAGES.map(|(p, _)| p).join(", "));
        return Ok(());
    }
    let install = format!("apt-get update && apt-get install -y {}", missing.join(" "));
    if !Path::new("/usr/bin/apt-get").exists() {
        bail!(
            "cross builds need Debian's packages {} (or a rustup toolchain with the targets' std and zig); this machine has no apt-get",
            missing.join(", ")
        );
    }
    if unsafe { libc::geteuid() } != 0 {
        bail!("cross builds need the Debian packages {}: run as root `{install}`", missing.join(", "));
    }
    for (package, why) in DEBIAN_PACKAGES.iter().filter(|(p, _)| missing.contains(p)) {
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
    let fix = format!("as root: `mount -t binfmt_misc binfmt_misc {BINFMT_DIR}; cat {QEMU_AARCH64_ENTRY} > {BINFMT_DIR}/register`");
    if !Path::new(BINFMT_DIR).join("register").exists() {
        println!("mounting binfmt_misc on {BINFMT_DIR}");
        let mounted = Command::new("mount").args(["-t", "binfmt_misc", "binfmt_misc", BINFMT_DIR]).status();
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
