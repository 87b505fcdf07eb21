//! `docs`: the sidecar documentation `plugins/modules/<m>.yml`, rendered from each
//! module's declaration; `docs --check` fails when a file differs from the render.

use anyhow::{bail, Result};
use ferrox_common::docs::render_sidecar;

use crate::modules;
use crate::repo;

pub fn write() -> Result<()> {
    for (name, spec) in modules::MODULES {
        let path = repo::root().join("plugins/modules").join(format!("{name}.yml"));
        let text = render_sidecar(&spec());
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
        let path = repo::root().join("plugins/modules").join(format!("{name}.yml"));
        if std::fs::read_to_string(&path).ok().as_deref() != Some(render_sidecar(&spec()).as_str()) {
            stale.push(repo::rel(&path));
        }
    }
    if !stale.is_empty() {
        bail!("stale module docs (run `cargo collection docs`): {}", stale.join(", "));
    }
    println!("module docs are up to date");
    Ok(())
}
