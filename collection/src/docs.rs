//! `docs`: the docs-only module files `plugins/modules/<m>.py` (with their argument
//! spec) and the connection doc fragment `plugins/doc_fragments/connection.py`, rendered
//! from the declarations; `docs --check` fails when a file differs from the render.

use std::path::PathBuf;

use anyhow::{bail, Result};
use ferrox_common::docs::{render_connection_fragment, render_stub};

use crate::modules;
use crate::repo;

fn stub_path(name: &str) -> PathBuf {
    repo::root()
        .join("plugins/modules")
        .join(format!("{name}.py"))
}

/// Every generated file with what it must hold: the stubs and the connection fragment.
fn rendered() -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> =
        modules::MODULES.iter().map(|(name, spec)| (stub_path(name), render_stub(&spec()))).collect();
    files.push((repo::root().join("plugins/doc_fragments/connection.py"), render_connection_fragment()));
    files
}

pub fn write() -> Result<()> {
    for (path, text) in rendered() {
        std::fs::create_dir_all(path.parent().expect("a parent"))?;
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&path, text)?;
            println!("wrote {}", repo::rel(&path));
        }
    }
    Ok(())
}

pub fn check() -> Result<()> {
    let mut stale = Vec::new();
    for (path, text) in rendered() {
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(repo::rel(&path));
        }
    }
    if !stale.is_empty() {
        bail!(
            "stale module docs (run `cargo collection docs`): {}",
            stale.join(", ")
        );
    }
    println!("module docs are up to date");
    Ok(())
}
