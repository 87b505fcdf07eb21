//! The collection's modules and their declarations (the binary's own table).

use ferrox_ansible::options::ModuleSpec;

/// The module binary's file name in `plugins/modules/__bin/<platform>/`.
pub(crate) use ferrox::BINARY;

/// Every module of the collection, in the order of `meta/runtime.yml`.
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    ferrox::MODULES.iter().map(|m| m.name)
}

pub(crate) fn spec_of(name: &str) -> Option<ModuleSpec> {
    ferrox::MODULES.iter().find(|m| m.name == name).map(|m| (m.spec)())
}

/// Every module's declaration, in order.
pub(crate) fn specs() -> impl Iterator<Item = (&'static str, ModuleSpec)> {
    ferrox::MODULES.iter().map(|m| (m.name, (m.spec)()))
}
