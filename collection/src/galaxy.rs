//! `tarball` and `install`: the collection as users get it, through ansible-galaxy.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::modules;
use crate::platform::PLATFORMS;
use crate::repo;

/// Galaxy refuses to import a larger collection tarball.
pub(crate) const GALAXY_MAX_BYTES: u64 = 20 * 1000 * 1000;

/// `build/ferrox-proxmox-<version>.tar.gz`, with the binaries currently in
/// `plugins/modules/__bin/<platform>/` (every platform folder present, each with its
/// binary); fails when Galaxy would refuse it for its size.
pub(crate) fn tarball() -> Result<PathBuf> {
    let path = tarball_into(&repo::root().join("build"))?;
    let size = std::fs::metadata(&path)?.len();
    if size > GALAXY_MAX_BYTES {
        bail!(
            "{} is {size} bytes, over Galaxy's limit of {GALAXY_MAX_BYTES}: build the binaries with the release profile (`cargo collection build --all-platforms`), not --debug",
            path.display()
        );
    }
    Ok(path)
}

/// The tarball, written into `out_dir`.
fn tarball_into(out_dir: &Path) -> Result<PathBuf> {
    let root = repo::root();
    let platforms = shipped_platforms()?;
    println!("platforms in the tarball: {}", platforms.join(", "));
    let unshipped: Vec<&str> = PLATFORMS
        .iter()
        .map(|p| p.name)
        .filter(|p| !platforms.iter().any(|s| s == p))
        .collect();
    if !unshipped.is_empty() {
        println!(
            "not in the tarball: {} (tasks there fail naming the platform; `cargo collection build --all-platforms` builds them)",
            unshipped.join(", ")
        );
    }
    std::fs::create_dir_all(out_dir)?;
    let mut cmd = std::process::Command::new(repo::venv_tool("ansible-galaxy")?);
    cmd.current_dir(&root)
        .args(["collection", "build", "--force", "--output-path"])
        .arg(out_dir)
        .arg(&root);
    repo::run(&mut cmd)?;
    let path = out_dir.join(format!("ferrox-proxmox-{}.tar.gz", version()?));
    if !path.is_file() {
        bail!("ansible-galaxy did not write {}", path.display());
    }
    println!("{} ({} bytes)", path.display(), std::fs::metadata(&path)?.len());
    Ok(path)
}

/// The platform folders of `plugins/modules/__bin/`; fails when there is none or one
/// lacks the binary (a platform half shipped would fail tasks at run time).
fn shipped_platforms() -> Result<Vec<String>> {
    let bin_root = repo::bin_root();
    let mut platforms = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&bin_root) {
        for entry in entries {
            let path = entry?.path();
            if !path.is_dir() {
                continue;
            }
            let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
            if !path.join(modules::BINARY).is_file() {
                bail!(
                    "{} lacks its {} binary: run `cargo collection build --all-platforms`, or remove the folder",
                    repo::rel(&path),
                    modules::BINARY
                );
            }
            platforms.push(name);
        }
    }
    if platforms.is_empty() {
        bail!(
            "{} holds no module binaries: run `cargo collection build` first",
            repo::rel(&bin_root)
        );
    }
    platforms.sort();
    Ok(platforms)
}

/// Builds the tarball and installs it into `dir` (an `ansible_collections` parent).
pub(crate) fn install(dir: &Path) -> Result<()> {
    install_tarball(&tarball()?, dir)
}

/// Where the end-to-end tests find the collection: the tarball of the debug build,
/// installed like a user installs it (tests/integration/src/paths.rs reads it there).
pub(crate) fn test_collections() -> PathBuf {
    repo::root().join("build/test-collections")
}

/// Builds a tarball of what is in the tree now (debug binaries included) and installs
/// it where the end-to-end tests look, leaving `build/`'s release tarball alone.
pub(crate) fn install_for_tests() -> Result<()> {
    install_tree(&repo::root().join("build/test-tarball"), &test_collections())
}

/// Builds a tarball of what is in the tree now into `tarball_dir` and installs it,
/// alone, into `dir` (emptied first).
pub(crate) fn install_tree(tarball_dir: &Path, dir: &Path) -> Result<()> {
    let tarball = tarball_into(tarball_dir)?;
    let _ = std::fs::remove_dir_all(dir);
    install_tarball(&tarball, dir)
}

fn install_tarball(tarball: &Path, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut cmd = std::process::Command::new(repo::venv_tool("ansible-galaxy")?);
    cmd.args(["collection", "install", "--force", "-p"])
        .arg(dir)
        .arg(tarball);
    repo::run(&mut cmd)?;
    println!(
        "installed into {} (use ANSIBLE_COLLECTIONS_PATH={})",
        dir.display(),
        dir.display()
    );
    Ok(())
}

/// The `version:` of galaxy.yml.
pub(crate) fn version() -> Result<String> {
    let text = std::fs::read_to_string(repo::root().join("galaxy.yml")).context("reading galaxy.yml")?;
    text.lines()
        .find_map(|l| l.strip_prefix("version:"))
        .map(|v| v.trim().trim_matches('"').to_string())
        .context("galaxy.yml has no version")
}
