//! Cross builds: the module binary for a platform other than the build host's, with
//! zig as linker and C compiler (ring's C and assembly; macOS needs no SDK) through
//! cargo-zigbuild, and the target's standard library built from source by Debian's
//! rustc-web (`-Zbuild-std`), so nothing but packages of Debian and PyPI is needed
//! (`cargo collection setup --cross` installs them; see [`setup`]).

pub mod setup;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Result};

use crate::platform::{self, Platform};
use crate::repo;

/// Debian's compiler, whose matching standard-library source is rust-web-src.
const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
const DEBIAN_CARGO: &str = "/usr/bin/cargo";
const DEBIAN_STD_SOURCE: &str = "/usr/lib/rustlib/src/rust/library/std";

/// Builds the module binary for `platform` with the release profile; returns the file.
pub fn build(platform: Platform, package: &str, binary: &str) -> Result<PathBuf> {
    let zigbuild = venv_tool("cargo-zigbuild", platform)?;
    let python = venv_tool("python3", platform)?;
    for (path, package) in [(DEBIAN_RUSTC, "rustc-web"), (DEBIAN_CARGO, "cargo-web"), (DEBIAN_STD_SOURCE, "rust-web-src")] {
        if !Path::new(path).exists() {
            bail!(
                "{}: cross-building needs {path} (Debian package {package}): run `cargo collection setup --cross`",
                platform.name
            );
        }
    }
    let triple = platform.cross;
    let mut cmd = Command::new(zigbuild);
    cmd.current_dir(repo::root())
        .args(["build", "--release", "--target", triple, "-p", package, "-Zbuild-std=std,panic_abort"]);
    // Debian's cargo and rustc, not rustup's (whose std for the target is not installed
    // and cannot be fetched here); -Zbuild-std is a nightly flag that a stable compiler
    // accepts with RUSTC_BOOTSTRAP.
    cmd.env("PATH", debian_first_path())
        .env("CARGO", DEBIAN_CARGO)
        .env("RUSTC", DEBIAN_RUSTC)
        .env("RUSTC_BOOTSTRAP", "1")
        // zig is the ziglang package of the same venv.
        .env("CARGO_ZIGBUILD_PYTHON_PATH", python)
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTC_WRAPPER");
    if triple.ends_with("-musl") {
        // Debian's std has no self-contained musl start files: zig supplies them.
        cmd.env(platform::rustflags_var(triple), "-C link-self-contained=no");
    }
    if let Some(version) = platform.deployment_target() {
        cmd.env("MACOSX_DEPLOYMENT_TARGET", version);
    }
    let started = std::time::Instant::now();
    repo::run(&mut cmd)?;
    println!("{}: cross-built for {triple} in {} s", platform.name, started.elapsed().as_secs());
    Ok(repo::target_dir()?.join(triple).join("release").join(binary))
}

/// `cargo-zigbuild` of the main venv, where setup installs it next to ziglang.
fn venv_tool(name: &str, platform: Platform) -> Result<PathBuf> {
    let path = repo::root().join(".venv/bin").join(name);
    if !path.is_file() {
        bail!("{}: cross-building needs {}: run `cargo collection setup --cross`", platform.name, repo::rel(&path));
    }
    Ok(path)
}

/// `PATH` with Debian's `/usr/bin` (cargo, rustc) first.
fn debian_first_path() -> std::ffi::OsString {
    let mut dirs = vec![PathBuf::from("/usr/bin")];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}
