//! `build`: the module binaries into `plugins/modules/__bin/<platform>/`, for the
//! platform of the host that runs the build (see [`platform`]).
//!
//! Release binaries on Linux are linked statically (`+crt-static` for the gnu target,
//! set only for this invocation so other builds keep their cache): ansible copies the
//! file to the target host and runs it there, where no Rust runtime or matching glibc
//! can be assumed. macOS binaries link libSystem dynamically, the only way macOS allows.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::modules;
use crate::platform::{self, Platform};
use crate::repo;
use crate::sanity;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Fast to build, dynamically linked: for development and the test suite.
    Debug,
    /// Small, static where the platform allows: what the tarball ships.
    Release,
}

/// `plugins/modules/__bin`: one folder per platform, hidden from `ansible-doc -l`.
pub fn bin_root() -> PathBuf {
    repo::root().join("plugins/modules/__bin")
}

pub fn build(profile: Profile) -> Result<()> {
    let host = platform::host()?;
    let target_dir = repo::target_dir()?;
    let mut cmd = repo::cargo();
    cmd.arg("build");
    for m in modules::names() {
        cmd.args(["-p", m]);
    }
    let out_dir = match profile {
        Profile::Debug => target_dir.join("debug"),
        Profile::Release => {
            cmd.args(["--release", "--target", host.triple]);
            if host.crt_static {
                let var = format!(
                    "CARGO_TARGET_{}_RUSTFLAGS",
                    host.triple.to_ascii_uppercase().replace('-', "_")
                );
                cmd.env(var, "-C target-feature=+crt-static");
            }
            target_dir.join(host.triple).join("release")
        }
    };
    repo::run(&mut cmd)?;

    let dest_dir = bin_root().join(host.name);
    std::fs::create_dir_all(&dest_dir)?;
    remove_flat_binaries()?;
    println!(
        "{:<18} {:>10}  linkage ({})",
        "module",
        "bytes",
        repo::rel(&dest_dir)
    );
    for m in modules::names() {
        let dest = dest_dir.join(m);
        install_binary(&out_dir.join(m), &dest, profile)?;
        let linkage = match profile {
            Profile::Debug => "dynamic (debug, DWARF stripped)".to_string(),
            Profile::Release => verify_linkage(&dest, host)?,
        };
        let size = std::fs::metadata(&dest)?.len();
        println!("{m:<18} {size:>10}  {linkage}");
    }
    sanity::write_ignores(&bin_root())
}

/// Binaries of the old flat layout (`plugins/modules/<module>`) would shadow the
/// docs stubs in `ansible-doc -l`; a build replaces them with the `__bin/` layout.
fn remove_flat_binaries() -> Result<()> {
    for m in modules::names() {
        let old = repo::root().join("plugins/modules").join(m);
        if old.is_file() {
            std::fs::remove_file(&old).with_context(|| format!("removing {}", old.display()))?;
            println!(
                "removed {} (binaries now live in plugins/modules/__bin/<platform>/)",
                repo::rel(&old)
            );
        }
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
    std::fs::copy(built, &tmp)
        .with_context(|| format!("copying {} to {}", built.display(), tmp.display()))?;
    if profile == Profile::Debug {
        let flag = if cfg!(target_os = "macos") { "-S" } else { "--strip-debug" };
        let stripped = Command::new("strip").arg(flag).arg(&tmp).status().is_ok_and(|s| s.success());
        if !stripped {
            eprintln!("warning: `strip {flag}` failed on {}; keeping its debug info", tmp.display());
        }
    }
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
    std::fs::rename(&tmp, dest)?;
    Ok(())
}

/// Linux: fails unless `file` and `ldd` agree that the binary is static. macOS: fails
/// unless every linked library is part of the OS (`otool -L`).
fn verify_linkage(path: &Path, host: Platform) -> Result<String> {
    if host.name.starts_with("darwin") {
        return verify_system_libraries_only(path);
    }
    let file = repo::output(Command::new("file").arg("-b").arg(path))?;
    let ldd = Command::new("ldd")
        .arg(path)
        .output()
        .context("running ldd")?;
    let ldd_text = format!(
        "{}{}",
        String::from_utf8_lossy(&ldd.stdout),
        String::from_utf8_lossy(&ldd.stderr)
    );
    let static_by_file = file.contains("statically linked") || file.contains("static-pie linked");
    let static_by_ldd =
        ldd_text.contains("not a dynamic executable") || ldd_text.contains("statically linked");
    if !(static_by_file && static_by_ldd) {
        bail!(
            "{} is not statically linked:\nfile: {file}\nldd: {ldd_text}",
            path.display()
        );
    }
    Ok(if file.contains("static-pie") {
        "static-pie".into()
    } else {
        "static".into()
    })
}

fn verify_system_libraries_only(path: &Path) -> Result<String> {
    let out = repo::output(Command::new("otool").arg("-L").arg(path))?;
    let foreign: Vec<&str> = out
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !(l.starts_with("/usr/lib/") || l.starts_with("/System/")))
        .collect();
    if !foreign.is_empty() {
        bail!(
            "{} links libraries macOS does not ship: {}",
            path.display(),
            foreign.join("; ")
        );
    }
    Ok("dynamic (macOS system libraries only)".into())
}
