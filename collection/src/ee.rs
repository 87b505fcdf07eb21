//! `ee`: the collection in execution environments (how AWX and Ansible Automation
//! Platform run it). Two checks, no container runtime needed:
//! - ansible-builder's introspection of the installed collection finds no Python and
//!   no system requirement (what `meta/execution-environment.yml` declares);
//! - `ansible-builder create` turns `examples/execution-environment/` into a build
//!   context that installs the collection tarball.

use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::{lint, repo};

const EXAMPLE: &str = "examples/execution-environment";
/// The tarball name the example expects next to its definition.
const TARBALL: &str = "ferrox-proxmox.tar.gz";

pub(crate) fn check() -> Result<()> {
    let builder = repo::venv_tool("ansible-builder")?;
    let work = repo::root().join("build/ee");
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    lint::link_collection(&work.join("collections"))?;
    let found = repo::output(
        Command::new(&builder)
            .arg("introspect")
            .arg("--sanitize")
            .arg(work.join("collections")),
    )?;
    if !(found.contains("python: []") && found.contains("system: []")) {
        bail!("ansible-builder introspect found requirements of the collection, but it needs none:\n{found}");
    }

    // The example, with an empty stand-in for the tarball: `create` only copies it.
    let example = work.join("example");
    std::fs::create_dir_all(&example)?;
    for name in ["execution-environment.yml", "requirements.yml"] {
        std::fs::copy(repo::root().join(EXAMPLE).join(name), example.join(name))
            .with_context(|| format!("{EXAMPLE}/{name}"))?;
    }
    std::fs::write(example.join(TARBALL), b"")?;
    let context = work.join("context");
    let mut create = Command::new(&builder);
    create
        .current_dir(&example)
        .args([
            "create",
            "--file",
            "execution-environment.yml",
            "--output-filename",
            "Containerfile",
            "--context",
        ])
        .arg(&context);
    repo::output(&mut create)?;
    let containerfile =
        std::fs::read_to_string(context.join("Containerfile")).context("the build context has no Containerfile")?;
    if !containerfile.contains("ansible-galaxy collection install") {
        bail!("the Containerfile installs no collection:\n{containerfile}");
    }
    if !context.join("_build/collections").join(TARBALL).is_file() {
        bail!("the build context lacks _build/collections/{TARBALL}");
    }
    println!("ee: introspection finds no requirements; ansible-builder create of {EXAMPLE} ok");
    Ok(())
}
