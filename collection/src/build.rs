//! `build`: the module binaries into `plugins/modules/`.
//!
//! Release binaries are linked statically (`+crt-static` for x86_64-unknown-linux-gnu,
//! set only for this invocation so other builds keep their cache): ansible copies the
//! file to the target host and runs it there, where no Rust runtime or matching glibc
//! can be assumed.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::modules;
use crate::repo;

pub const TARGET: &str = "x86_64-unknown-linux-gnu";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Fast to build, dynamically linked: for development and the test suite.
    Debug,
    /// Small, static: what the tarball ships.
    Release,
}

pub fn build(profile: Profile) -> Result<()> {
    let target_dir = repo::target_dir()?;
    let mut cmd = repo::cargo();
    cmd.arg("build");
    for m in modules::names() {
        cmd.args(["-p", m]);
    }
    let out_dir = match profile {
        Profile::Debug => target_dir.join("debug"),
        Profile::Release => {
            cmd.args(["--release", "--target", TARGET])
                .env("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS", "-C target-feature=+crt-static");
            target_dir.join(TARGET).join("release")
        }
    };
    repo::run(&mut cmd)?;

    let dest_dir = repo::root().join("plugins/modules");
    std::fs::create_dir_all(&dest_dir)?;
    println!("{:<18} {:>10}  linkage", "module", "bytes");
    for m in modules::names() {
        let built = out_dir.join(m);
        let dest = dest_dir.join(m);
        install_binary(&built, &dest)?;
        let linkage = if profile == Profile::Release { verify_static(&dest)? } else { "dynamic (debug)".into() };
        let size = std::fs::metadata(&dest)?.len();
        println!("{m:<18} {size:>10}  {linkage}");
    }
    Ok(())
}

/// Copies (replacing, never writing into a file that may be running) with mode 0755.
fn install_binary(built: &PathBuf, dest: &PathBuf) -> Result<()> {
    if !built.is_file() {
        bail!("cargo did not produce {}", built.display());
    }
    let tmp = dest.with_extension("new");
    std::fs::copy(built, &tmp).with_context(|| format!("copying {} to {}", built.display(), tmp.display()))?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
    std::fs::rename(&tmp, dest)?;
    Ok(())
}

/// Fails unless `file` and `ldd` agree that the binary is static.
fn verify_static(path: &PathBuf) -> Result<String> {
    let file = repo::output(Command::new("file").arg("-b").arg(path))?;
    let ldd = Command::new("ldd").arg(path).output().context("running ldd")?;
    let ldd_text = format!("{}{}", String::from_utf8_lossy(&ldd.stdout), String::from_utf8_lossy(&ldd.stderr));
    let static_by_file = file.contains("statically linked") || file.contains("static-pie linked");
    let static_by_ldd = ldd_text.contains("not a dynamic executable") || ldd_text.contains("statically linked");
    if !(static_by_file && static_by_ldd) {
        bail!("{} is not statically linked:\nfile: {file}\nldd: {ldd_text}", path.display());
    }
    Ok(if file.contains("static-pie") { "static-pie".into() } else { "static".into() })
}
