//! `tarball` and `install`: the collection as users get it, through ansible-galaxy.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::modules;
use crate::repo;

/// `build/ferrox-proxmox-<version>.tar.gz`, with the binaries currently in plugins/modules.
pub fn tarball() -> Result<PathBuf> {
    let root = repo::root();
    let missing: Vec<&str> = modules::names().filter(|m| !root.join("plugins/modules").join(m).is_file()).collect();
    if !missing.is_empty() {
        bail!("plugins/modules/ lacks {}: run `cargo collection build` first", missing.join(", "));
    }
    let out_dir = root.join("build");
    std::fs::create_dir_all(&out_dir)?;
    let mut cmd = std::process::Command::new(repo::venv_tool("ansible-galaxy")?);
    cmd.current_dir(&root)
        .args(["collection", "build", "--force", "--output-path"])
        .arg(&out_dir)
        .arg(&root);
    repo::run(&mut cmd)?;
    let path = out_dir.join(format!("ferrox-proxmox-{}.tar.gz", version()?));
    if !path.is_file() {
        bail!("ansible-galaxy did not write {}", path.display());
    }
    println!("{}", path.display());
    Ok(path)
}

/// Builds the tarball and installs it into `dir` (an `ansible_collections` parent).
pub fn install(dir: &Path) -> Result<()> {
    let tarball = tarball()?;
    std::fs::create_dir_all(dir)?;
    let mut cmd = std::process::Command::new(repo::venv_tool("ansible-galaxy")?);
    cmd.args(["collection", "install", "--force", "-p"]).arg(dir).arg(&tarball);
    repo::run(&mut cmd)?;
    println!("installed into {} (use ANSIBLE_COLLECTIONS_PATH={})", dir.display(), dir.display());
    Ok(())
}

/// The `version:` of galaxy.yml.
fn version() -> Result<String> {
    let text = std::fs::read_to_string(repo::root().join("galaxy.yml")).context("reading galaxy.yml")?;
    text.lines()
        .find_map(|l| l.strip_prefix("version:"))
        .map(|v| v.trim().trim_matches('"').to_string())
        .context("galaxy.yml has no version")
}
