//! `spec <module>`: a module's declaration as AnsibleModule's `argument_spec` plus its
//! constraint lists, in JSON ([`ferrox_ansible::spec_json`]).

use anyhow::{Context, Result};
use ferrox_ansible::spec_json::argument_spec;

use crate::modules;

pub(crate) fn print(module: &str) -> Result<()> {
    let spec = modules::spec_of(module).with_context(|| {
        format!(
            "unknown module {module}; known: {}",
            modules::names().collect::<Vec<_>>().join(", ")
        )
    })?;
    println!("{}", serde_json::to_string_pretty(&argument_spec(&spec))?);
    Ok(())
}
