//! Paths of the checkout and running the tools it needs.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The repository root, which is also the collection root.
pub(crate) fn root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    here.canonicalize().unwrap_or(here)
}

/// `plugins/modules/__bin`: one folder per platform, hidden from `ansible-doc -l`, where
/// `build` puts the module binaries and the tarball and sanity ignores find them.
pub(crate) fn bin_root() -> PathBuf {
    root().join("plugins/modules/__bin")
}

/// The cargo that runs us (so `+toolchain` and the environment carry over).
pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Cargo's target directory, honouring `CARGO_TARGET_DIR` and config.
pub(crate) fn target_dir() -> Result<PathBuf> {
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .output()
        .context("running cargo metadata")?;
    if !out.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    meta["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .context("cargo metadata did not name the target directory")
}

/// A tool of the main venv (`.venv/bin/<name>`), or an error saying how to create it.
pub(crate) fn venv_tool(name: &str) -> Result<PathBuf> {
    let path = root().join(".venv/bin").join(name);
    if !path.exists() {
        bail!("{} is missing: run `cargo collection setup` first", path.display());
    }
    Ok(path)
}

/// Runs a command, echoing it; fails with its exit status.
pub(crate) fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("+ {}", describe(cmd));
    let status = cmd.status().with_context(|| format!("starting {}", describe(cmd)))?;
    if !status.success() {
        bail!("{} failed ({status})", describe(cmd));
    }
    Ok(())
}

/// Runs a command with its output into the file `log`; fails with its exit status and
/// the log's last lines.
pub(crate) fn run_logged(cmd: &mut Command, log: &Path) -> Result<()> {
    run_logged_watched(cmd, log, |_| {}, |_| {})
}

/// [`run_logged`], telling `started` the child's pid once it runs and `ended` once it
/// has exited (whoever may stop it meanwhile, see `cross::stop_background`).
pub(crate) fn run_logged_watched(
    cmd: &mut Command,
    log: &Path,
    started: impl FnOnce(u32),
    ended: impl FnOnce(u32),
) -> Result<()> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    eprintln!("+ {} > {}", describe(cmd), rel(log));
    let mut child = cmd
        .stdout(file.try_clone()?)
        .stderr(file)
        .spawn()
        .with_context(|| format!("starting {}", describe(cmd)))?;
    started(child.id());
    let status = child.wait();
    ended(child.id());
    let status = status.with_context(|| format!("waiting for {}", describe(cmd)))?;
    if !status.success() {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        bail!("{} failed ({status}); the end of {}:\n{tail}", describe(cmd), rel(log));
    }
    Ok(())
}

/// Runs a command and returns its stdout (stderr passes through).
pub(crate) fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().with_context(|| format!("starting {}", describe(cmd)))?;
    if !out.status.success() {
        bail!(
            "{} failed ({}): {}",
            describe(cmd),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// `path` relative to the repository, for messages.
pub(crate) fn rel(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string()
}
