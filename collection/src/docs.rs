//! `docs`: the docs-only module files `plugins/modules/<m>.py`, rendered from each
//! module's declaration; `docs --check` fails when a file differs from the render.

use std::path::PathBuf;

use anyhow::{bail, Result};
use ferrox_common::docs::render_stub;

use crate::modules;
use crate::repo;

fn stub_path(name: &str) -> PathBuf {
    repo::root()
        .join("plugins/modules")
        .join(format!("{name}.py"))
}

pub fn write() -> Result<()> {
    std::fs::create_dir_all(repo::root().join("plugins/modules"))?;
    for (name, spec) in modules::MODULES {
        let path = stub_path(name);
        let text = render_stub(&spec());
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&path, text)?;
            println!("wrote {}", repo::rel(&path));
        }
    }
    Ok(())
}

pub fn check() -> Result<()> {
    let mut stale = Vec::new();
    for (name, spec) in modules::MODULES {
        let path = stub_path(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(render_stub(&spec()).as_str()) {
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
