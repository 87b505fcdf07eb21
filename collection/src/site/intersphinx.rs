//! The Ansible docs' targets the collection's pages refer to, as a Sphinx inventory
//! written beside the site's sources.
//!
//! antsibull-docs' pages refer into the Ansible docs (`action_plugins`,
//! `common_return_values`, the cache plugins' environment variables, ...), which Sphinx
//! resolves through intersphinx from docs.ansible.com's `objects.inv`. The site is built
//! offline (the build machines reach only the package registries), so that inventory
//! cannot be fetched, and every such reference would be a warning, drowning the ones
//! that matter. Rather than turning warnings off, the build reads this inventory, made
//! from [`TARGETS`]: each reference still becomes a link to its page on
//! docs.ansible.com, the build needs no network, and Sphinx runs with warnings as
//! errors, so a broken reference inside the collection (or a new reference into the
//! Ansible docs, to be added here) fails the build.

use std::io::Write;

use anyhow::Result;

/// Where the targets live (the Ansible docs' devel version, as antsibull-docs' own
/// `conf.py` names it).
pub(crate) const BASE_URL: &str = "https://docs.ansible.com/projects/ansible/devel/";

/// One target: `(name, Sphinx role, page and anchor under BASE_URL, title)`.
pub(crate) type Target = (&'static str, &'static str, &'static str, &'static str);

/// Every target of the Ansible docs that the generated pages refer to.
pub(crate) const TARGETS: [Target; 8] = [
    (
        "action_plugins",
        "std:label",
        "plugins/action.html#action-plugins",
        "Action plugins",
    ),
    (
        "callback_plugins",
        "std:label",
        "plugins/callback.html#callback-plugins",
        "Callback plugins",
    ),
    (
        "common_return_values",
        "std:label",
        "reference_appendices/common_return_values.html#common-return-values",
        "Return Values",
    ),
    (
        "ansible_configuration_settings",
        "std:label",
        "reference_appendices/config.html#ansible-configuration-settings",
        "Ansible Configuration Settings",
    ),
    (
        "ANSIBLE_CACHE_PLUGIN",
        "std:envvar",
        "reference_appendices/config.html#envvar-ANSIBLE_CACHE_PLUGIN",
        "-",
    ),
    (
        "ANSIBLE_CACHE_PLUGIN_CONNECTION",
        "std:envvar",
        "reference_appendices/config.html#envvar-ANSIBLE_CACHE_PLUGIN_CONNECTION",
        "-",
    ),
    (
        "ANSIBLE_CACHE_PLUGIN_PREFIX",
        "std:envvar",
        "reference_appendices/config.html#envvar-ANSIBLE_CACHE_PLUGIN_PREFIX",
        "-",
    ),
    (
        "ANSIBLE_CACHE_PLUGIN_TIMEOUT",
        "std:envvar",
        "reference_appendices/config.html#envvar-ANSIBLE_CACHE_PLUGIN_TIMEOUT",
        "-",
    ),
];

/// A Sphinx inventory (version 2: a text header, then zlib-compressed lines of
/// `name role priority uri title`) of `targets`.
pub(crate) fn inventory(targets: &[Target]) -> Result<Vec<u8>> {
    let mut out = b"# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n# The remainder of this file is compressed using zlib.\n".to_vec();
    let mut body = String::new();
    for (name, role, uri, title) in targets {
        let priority = if *role == "std:label" { -1 } else { 1 };
        body.push_str(&format!("{name} {role} {priority} {uri} {title}\n"));
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(body.as_bytes())?;
    out.extend(z.finish()?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn the_inventory_has_sphinx_header_and_one_line_per_target() {
        let inv = inventory(&TARGETS[..2]).unwrap();
        let header = "# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n# The remainder of this file is compressed using zlib.\n";
        assert!(inv.starts_with(header.as_bytes()));
        let mut body = String::new();
        flate2::read::ZlibDecoder::new(&inv[header.len()..])
            .read_to_string(&mut body)
            .unwrap();
        assert_eq!(
            body,
            "action_plugins std:label -1 plugins/action.html#action-plugins Action plugins\n\
             callback_plugins std:label -1 plugins/callback.html#callback-plugins Callback plugins\n"
        );
    }
}
