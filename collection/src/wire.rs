//! `plugins/plugin_utils/_wire.py`: every fact the action plugins and the module binary
//! must agree on — the private argument and result names, the protocol version, PVE's
//! default port, the connection options' environment fallbacks, the modules and which
//! of them use the run's name index, the shipped platforms, the controller-side
//! settings' names and defaults — rendered from the Rust constants that the binary
//! itself uses. `cargo collection docs` writes it, `docs --check` fails when it differs,
//! so a fact is spelled once, in Rust.

use std::fmt::Write as _;

use ferrox_ansible::protocol::{MODULE_ARG, PRIVATE_PREFIX, PROTOCOL_ARG, PROTOCOL_VERSION};
use ferrox_dryrun::{EFFECTS_KEY, PLAN_ARG};
use ferrox_pve_client::client::url::DEFAULT_PORT;
use ferrox_pve_client::client::DEFAULT_RENEW_AFTER;
use ferrox_run::connection;
use ferrox_run::name_index::{DEFAULT_MAX_AGE_SECS, MAX_AGE_ENV, NAMES_ARG, NAMES_KEY};
use ferrox_run::placements::{PLACEMENTS_ARG, PLACEMENT_KEY};
use ferrox_run::ticket::{RENEW_AFTER_ENV, TICKET_ARG, TICKET_KEY};
use ferrox_run::PROGRESS_KEY;

use crate::platform::PLATFORMS;

/// The repository path of the rendered file.
pub(crate) const PATH: &str = "plugins/plugin_utils/_wire.py";

/// One constant of the Python file: its name, a comment, and its Python literal.
pub(crate) struct Constant {
    pub name: &'static str,
    pub about: &'static str,
    pub value: String,
}

/// A Python tuple of `items`: on one line while it fits (pep8's 160 columns, with the
/// name before it), else one item a line.
fn tuple(items: &[String]) -> String {
    match items {
        [one] => format!("({one},)"),
        _ if items.join(", ").len() <= 100 => format!("({})", items.join(", ")),
        _ => format!(
            "(\n{})",
            items.iter().map(|i| format!("    {i},\n")).collect::<String>()
        ),
    }
}

/// Every constant, from the Rust sources.
pub(crate) fn constants() -> Vec<Constant> {
    let text = |s: &str| format!("'{s}'");
    let modules: Vec<String> = ferrox::MODULES.iter().map(|m| text(m.name)).collect();
    let indexed: Vec<String> = ferrox::NAME_INDEX_MODULES.iter().map(|m| text(m)).collect();
    let platforms: Vec<String> = PLATFORMS.iter().map(|p| text(p.name)).collect();
    vec![
        c(
            "BINARY",
            "The module binary's file name (modules/ferrox).",
            text(ferrox::BINARY),
        ),
        c(
            "MODULES",
            "Every module the binary runs, in meta/runtime.yml's order.",
            tuple(&modules),
        ),
        c(
            "NAME_INDEX_MODULES",
            "The modules that look guests up by name through the run's name index.",
            tuple(&indexed),
        ),
        c(
            "RELEASED_PLATFORMS",
            "The platforms the tarball ships a binary for.",
            tuple(&platforms),
        ),
        c(
            "PRIVATE_PREFIX",
            "Every private argument and result key starts with it.",
            text(PRIVATE_PREFIX),
        ),
        c(
            "MODULE_ARG",
            "The argument naming the module the binary runs.",
            text(MODULE_ARG),
        ),
        c(
            "PROTOCOL_ARG",
            "The argument carrying the shim's protocol version.",
            text(PROTOCOL_ARG),
        ),
        c(
            "PROTOCOL_VERSION",
            "The protocol version shim and binary speak.",
            PROTOCOL_VERSION.to_string(),
        ),
        c("PLAN_ARG", "The argument carrying the check-mode plan.", text(PLAN_ARG)),
        c(
            "EFFECTS_KEY",
            "The result key carrying a check-mode task's planned effects.",
            text(EFFECTS_KEY),
        ),
        c(
            "NAMES_ARG",
            "The argument carrying the run's name index.",
            text(NAMES_ARG),
        ),
        c(
            "NAMES_KEY",
            "The result key carrying a fresh name index.",
            text(NAMES_KEY),
        ),
        c(
            "MAX_AGE_ENV",
            "Seconds a name index is trusted (0: off).",
            text(MAX_AGE_ENV),
        ),
        c("DEFAULT_MAX_AGE", "Its default.", format!("{DEFAULT_MAX_AGE_SECS}.0")),
        c(
            "PLACEMENTS_ARG",
            "The argument carrying the run's placements (proxmox_kvm's placement).",
            text(PLACEMENTS_ARG),
        ),
        c(
            "PLACEMENT_KEY",
            "The result key carrying the placement a task made.",
            text(PLACEMENT_KEY),
        ),
        c(
            "TICKET_ARG",
            "The argument carrying the run's login ticket.",
            text(TICKET_ARG),
        ),
        c(
            "TICKET_KEY",
            "The result key carrying a ticket the task got.",
            text(TICKET_KEY),
        ),
        c(
            "PROGRESS_KEY",
            "The result key carrying the task's lines of progress, printed under -v.",
            text(PROGRESS_KEY),
        ),
        c(
            "RENEW_AFTER_ENV",
            "Seconds after which a kept ticket is renewed (0: no reuse).",
            text(RENEW_AFTER_ENV),
        ),
        c(
            "DEFAULT_RENEW_AFTER",
            "Its default.",
            format!("{}.0", DEFAULT_RENEW_AFTER.as_secs()),
        ),
        c(
            "DEFAULT_PORT",
            "PVE's API port when api_port is not given.",
            DEFAULT_PORT.to_string(),
        ),
        c(
            "ENV_FALLBACKS",
            "Each connection option's environment variables, in the order the binary reads them.",
            env_fallbacks(),
        ),
    ]
}

fn c(name: &'static str, about: &'static str, value: String) -> Constant {
    Constant { name, about, value }
}

/// `{'api_host': ('PROXMOX_HOST',), ...}` from the connection options' declaration.
fn env_fallbacks() -> String {
    let mut out = String::from("{\n");
    for opt in connection::options().iter().filter(|o| !o.env.is_empty()) {
        let vars: Vec<String> = opt.env.iter().map(|v| format!("'{v}'")).collect();
        let vars = if vars.len() == 1 {
            format!("({},)", vars[0])
        } else {
            format!("({})", vars.join(", "))
        };
        let _ = writeln!(out, "    '{}': {vars},", opt.name);
    }
    out.push('}');
    out
}

/// The Python file holding `constants`.
pub(crate) fn render(constants: &[Constant]) -> String {
    let mut out = String::from(
        "# -*- coding: utf-8 -*-\n\
         # Copyright (c) ferrox.proxmox contributors\n\
         # GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)\n\
         # SPDX-License-Identifier: GPL-3.0-or-later\n\
         \"\"\"What the action plugins and the module binary agree on, generated from the Rust\n\
         sources by ``cargo collection docs`` (``collection/src/wire.rs``); ``cargo collection\n\
         docs --check`` fails when this file differs. Do not edit: change the Rust constant.\n\
         \"\"\"\n\
         \n\
         from __future__ import annotations\n",
    );
    for constant in constants {
        let _ = write!(out, "\n# {}\n{} = {}\n", constant.about, constant.name, constant.value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_in_the_tree_is_the_render() {
        let on_disk = std::fs::read_to_string(crate::repo::root().join(PATH)).unwrap();
        assert_eq!(on_disk, render(&constants()), "run `cargo collection docs`");
    }

    #[test]
    fn a_constant_changed_on_the_rust_side_makes_the_file_stale() {
        let mut changed = constants();
        let ticket = changed.iter_mut().find(|c| c.name == "TICKET_ARG").unwrap();
        ticket.value = "'_ferrox_login'".into();
        let stale = crate::docs::stale_files(&[(crate::repo::root().join(PATH), render(&changed))]);
        assert_eq!(stale, vec![PATH.to_string()]);
        assert!(crate::docs::stale_files(&[(crate::repo::root().join(PATH), render(&constants()))]).is_empty());
    }

    #[test]
    fn every_private_name_starts_with_the_prefix() {
        for constant in constants()
            .iter()
            .filter(|c| c.name.ends_with("_ARG") || c.name.ends_with("_KEY"))
        {
            assert!(
                constant.value.starts_with(&format!("'{PRIVATE_PREFIX}")),
                "{}",
                constant.name
            );
        }
    }
}
