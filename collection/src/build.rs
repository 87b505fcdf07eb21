//! `build`: the module binary (every module in one file) into
//! `plugins/modules/__bin/<platform>/`, for the platform of the host that runs the
//! build (see [`platform`]), or with `--all-platforms` for every platform the tarball
//! ships: the host's natively, the others cross-built ([`cross`]).
//!
//! Release binaries on Linux are linked statically (`+crt-static` for the gnu target,
//! set only for this invocation so other builds keep their cache; musl when
//! cross-built): ansible copies the file to the target host and runs it there, where no
//! Rust runtime or matching glibc can be assumed. macOS binaries link libSystem
//! dynamically, the only way macOS allows. Every release binary is checked
//! ([`verify`]) before it counts.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::cross;
use crate::modules::{self, BINARY};
use crate::platform::{self, Platform, PLATFORMS};
use crate::repo;
use crate::sanity;
use crate::verify;

/// The crate of the module binary.
const PACKAGE: &str = "ferrox";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Profile {
    /// Fast to build, dynamically linked: for development and the test suite.
    Debug,
    /// Small, static where the platform allows: what the tarball ships.
    Release,
}

/// The host platform's binary.
pub(crate) fn build(profile: Profile) -> Result<()> {
    let host = platform::host()?;
    let built = native(host, profile)?;
    remove_old_layouts()?;
    print_header();
    install(host, &built, profile)?;
    sanity::write_ignores(&repo::bin_root())
}

/// Every platform's release binary: the host's natively, the others cross-built.
///
/// All of them build at once: each cross build has its own target directory, so none
/// waits for another's lock, and their single-threaded stretches (the standard library's
/// crates in a row, the one-unit LTO link) overlap with the others' work on a 2-core
/// machine instead of leaving a core idle.
pub(crate) fn build_all_platforms() -> Result<()> {
    let host = platform::host().ok();
    let crossed = cross_platforms(host);
    cross::check(&crossed)?;
    let (native_built, cross_built) = std::thread::scope(|scope| {
        let cross_built = scope.spawn(|| cross_build(&crossed, cross::Priority::Normal));
        let native_built = host.map(|h| native(h, Profile::Release).map(|file| (h, file)));
        let cross_built = cross_built
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the cross builds' thread panicked")));
        (native_built, cross_built)
    });
    let mut built = match (native_built.transpose(), cross_built) {
        (Ok(native), Ok(crossed)) => native.into_iter().chain(crossed).collect::<Vec<_>>(),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => return Err(e),
        (Err(n), Err(c)) => bail!("{n:#}\n{c:#}"),
    };
    built.sort_by_key(|(p, _)| PLATFORMS.iter().position(|q| q == p));
    install_release(&built)
}

/// The platforms a build on `host` cross-builds: every shipped one but the host's.
pub(crate) fn cross_platforms(host: Option<Platform>) -> Vec<Platform> {
    PLATFORMS.into_iter().filter(|p| Some(*p) != host).collect()
}

/// The release binaries of `platforms`, cross-built at once (each in its own target
/// directory, so none waits for another's lock), not installed yet. Every failure is
/// reported, not only the first.
pub(crate) fn cross_build(platforms: &[Platform], priority: cross::Priority) -> Result<Vec<(Platform, PathBuf)>> {
    let results: Vec<Result<(Platform, PathBuf)>> = std::thread::scope(|scope| {
        let builds: Vec<_> = platforms
            .iter()
            .map(|p| (*p, scope.spawn(move || cross::build(*p, PACKAGE, BINARY, priority))))
            .collect();
        builds
            .into_iter()
            .map(|(p, build)| match build.join() {
                Ok(built) => built.map(|file| (p, file)),
                Err(_) => Err(anyhow::anyhow!("{}: the cross build's thread panicked", p.name)),
            })
            .collect()
    });
    let mut built = Vec::new();
    let mut failed = Vec::new();
    for result in results {
        match result {
            Ok(done) => built.push(done),
            Err(e) => failed.push(format!("{e:#}")),
        }
    }
    if !failed.is_empty() {
        bail!("{}", failed.join("\n"));
    }
    Ok(built)
}

/// Installs release binaries built for their platforms (each checked first), then
/// writes the sanity ignore files, which name every binary present.
pub(crate) fn install_release(built: &[(Platform, PathBuf)]) -> Result<()> {
    remove_old_layouts()?;
    print_header();
    for (p, file) in built {
        install(*p, file, Profile::Release)?;
    }
    sanity::write_ignores(&repo::bin_root())
}

/// Builds with the host's own toolchain; returns the built file.
fn native(host: Platform, profile: Profile) -> Result<PathBuf> {
    let target_dir = repo::target_dir()?;
    let mut cmd = repo::cargo();
    cmd.args(["build", "-p", PACKAGE]);
    let out_dir = match profile {
        Profile::Debug => target_dir.join("debug"),
        Profile::Release => {
            cmd.args(["--release", "--target", host.native]);
            if host.native_crt_static() {
                cmd.env(platform::rustflags_var(host.native), "-C target-feature=+crt-static");
            }
            if let Some(version) = host.deployment_target() {
                cmd.env("MACOSX_DEPLOYMENT_TARGET", version);
            }
            target_dir.join(host.native).join("release")
        }
    };
    repo::run(&mut cmd)?;
    Ok(out_dir.join(BINARY))
}

fn print_header() {
    println!(
        "{:<14} {:<7} {:>10}  checked ({})",
        "platform",
        "binary",
        "bytes",
        repo::rel(&repo::bin_root())
    );
}

/// Copies `built` into `__bin/<platform>/`, checking a release binary first.
fn install(platform: Platform, built: &Path, profile: Profile) -> Result<()> {
    let dest_dir = repo::bin_root().join(platform.name);
    std::fs::create_dir_all(&dest_dir)?;
    let dest = dest_dir.join(BINARY);
    install_binary(built, &dest, profile)?;
    let checked = match profile {
        Profile::Debug => "debug build, dynamic, DWARF stripped".to_string(),
        Profile::Release => verify::binary(&dest, platform).inspect_err(|_| {
            let _ = std::fs::remove_file(&dest);
        })?,
    };
    let size = std::fs::metadata(&dest)?.len();
    println!("{:<14} {BINARY:<7} {size:>10}  {checked}", platform.name);
    Ok(())
}

/// Binaries of earlier layouts: `plugins/modules/<module>` would shadow the docs stubs
/// in `ansible-doc -l`, and `__bin/<platform>/<module>` (one file per module) would be
/// packed into the tarball for nothing.
fn remove_old_layouts() -> Result<()> {
    let mut old: Vec<PathBuf> = modules::names()
        .map(|m| repo::root().join("plugins/modules").join(m))
        .collect();
    for p in PLATFORMS {
        old.extend(modules::names().map(|m| repo::bin_root().join(p.name).join(m)));
    }
    for path in old.into_iter().filter(|p| p.is_file()) {
        std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        println!(
            "removed {} (every module is now plugins/modules/__bin/<platform>/{BINARY})",
            repo::rel(&path)
        );
    }
    Ok(())
}

/// Copies (replacing, never writing into a file that may be running) with mode 0755.
/// Debug copies lose their DWARF sections (about 40 MB → 10 MB each): ansible copies
/// the file for every task and the test tarball packs it, while panics keep their
/// file:line (those are strings in the binary, not debug info).
fn install_binary(built: &Path, dest: &Path, profile: Profile) -> Result<()> {
    if !built.is_file() {
        bail!("cargo did not produce {}", built.display());
    }
    let tmp = dest.with_extension("new");
    std::fs::copy(built, &tmp).with_context(|| format!("copying {} to {}", built.display(), tmp.display()))?;
    if profile == Profile::Debug {
        let flag = if cfg!(target_os = "macos") {
            "-S"
        } else {
            "--strip-debug"
        };
        let stripped = Command::new("strip")
            .arg(flag)
            .arg(&tmp)
            .status()
            .is_ok_and(|s| s.success());
        if !stripped {
            eprintln!(
                "warning: `strip {flag}` failed on {}; keeping its debug info",
                tmp.display()
            );
        }
    }
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
    std::fs::rename(&tmp, dest)?;
    Ok(())
}
