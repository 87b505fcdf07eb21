//! The docs-only module file (`plugins/modules/<name>.py`) rendered from a module's
//! declaration, so `ansible-doc` (and its `-l` listing, Galaxy, ansible-lint) shows
//! exactly the options the binary validates. The file holds only DOCUMENTATION, EXAMPLES
//! and RETURN: the action plugin of the same name runs the binary from
//! `plugins/modules/__bin/<platform>/`.
//!
//! `collection docs` writes these files and `collection docs --check` fails when a
//! committed file differs from what the declaration renders.

use serde_json::Value;

use crate::options::{ModuleSpec, Opt};

const HEADER: &str = "# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation only: the action plugin plugins/action/{name}.py runs the module's
# binary, plugins/modules/__bin/<platform>/{name}, for the task's target platform.

from __future__ import annotations

";

/// The author line (validate-modules wants a GitHub handle or `!UNKNOWN`).
const AUTHOR: &str = "ferrox.proxmox contributors (!UNKNOWN)";

/// What the action plugin in front of every binary adds to the module's attributes.
const ACTION_ATTRIBUTES: &str = "  action:
    support: full
    details: The action plugin picks the binary built for the target's platform (C(uname -sm), or the controller's own platform on a local connection).
  async:
    support: full
    details: Like every binary module, C(async) needs Python on the target host for ansible-core's async wrapper.
  bypass_host_loop:
    support: none
  platform:
    support: full
    platforms: posix
    details: Binaries run on the host the task targets, usually the controller (C(delegate_to) C(localhost)) or a Proxmox VE node; the collection's README lists the platforms shipped.
";

/// The whole `plugins/modules/<name>.py` for a module.
pub fn render_stub(spec: &ModuleSpec) -> String {
    let mut py = HEADER.replace("{name}", spec.name);
    py.push_str(&python_block("DOCUMENTATION", &documentation(spec)));
    py.push('\n');
    py.push_str(&python_block("EXAMPLES", &verbatim(spec.examples)));
    py.push('\n');
    py.push_str(&python_block("RETURN", &verbatim(spec.returns)));
    py
}

/// `NAME = r"""\n<yaml>"""`; the YAML may not hold a triple quote (checked).
fn python_block(name: &str, yaml: &str) -> String {
    assert!(
        !yaml.contains("\"\"\""),
        "{name} of a module must not contain a triple quote"
    );
    format!("{name} = r\"\"\"\n{yaml}\"\"\"\n")
}

fn verbatim(text: &str) -> String {
    let mut y = String::new();
    for l in text.trim_matches('\n').lines() {
        y.push_str(l.trim_end());
        y.push('\n');
    }
    y
}

/// The DOCUMENTATION mapping, top-level keys at column 0.
fn documentation(spec: &ModuleSpec) -> String {
    let mut y = String::new();
    line(&mut y, 0, "module", &scalar(spec.name));
    line(
        &mut y,
        0,
        "short_description",
        &scalar(spec.short_description),
    );
    line(&mut y, 0, "version_added", &quoted(spec.version_added));
    list(&mut y, 0, "description", &spec.description);
    list(&mut y, 0, "author", &[AUTHOR.to_string()]);
    y.push_str("options:\n");
    let mut options: Vec<&Opt> = spec.options.iter().collect();
    options.sort_by_key(|o| o.name);
    for opt in options {
        render_option(&mut y, 1, opt);
    }
    y.push_str("extends_documentation_fragment:\n  - ansible.builtin.action_common_attributes\n  - ansible.builtin.action_common_attributes.flow\n");
    y.push_str("attributes:\n");
    y.push_str(ACTION_ATTRIBUTES);
    attribute(
        &mut y,
        "check_mode",
        spec.check_mode.0.as_str(),
        spec.check_mode.1,
    );
    attribute(
        &mut y,
        "diff_mode",
        spec.diff_mode.0.as_str(),
        spec.diff_mode.1,
    );
    y.push_str("  action_group:\n    description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.\n    support: full\n    membership:\n      - ferrox.proxmox.proxmox\n");
    if !spec.notes.is_empty() {
        list(&mut y, 0, "notes", &spec.notes);
    }
    if !spec.seealso.is_empty() {
        y.push_str("seealso:\n");
        for s in &spec.seealso {
            y.push_str(&format!("  - module: {s}\n"));
        }
    }
    y
}

fn attribute(y: &mut String, name: &str, support: &str, description: &str) {
    y.push_str(&format!("  {name}:\n    support: {support}\n"));
    if !description.is_empty() {
        y.push_str(&format!("    details: {}\n", scalar(description)));
    }
}

fn render_option(y: &mut String, depth: usize, opt: &Opt) {
    let pad = "  ".repeat(depth);
    y.push_str(&format!("{pad}{}:\n", opt.name));
    let d = depth + 1;
    let mut description = opt.description.clone();
    if description.is_empty() {
        description.push(format!("The O({}) option.", opt.name));
    }
    list(y, d, "description", &description);
    line(y, d, "type", opt.kind.ansible_name());
    if let Some(el) = opt.elements {
        line(y, d, "elements", el.ansible_name());
    }
    if opt.required {
        line(y, d, "required", "true");
    }
    if let Some(default) = &opt.default {
        line(y, d, "default", &value(default));
    }
    if !opt.choices.is_empty() {
        let pad = "  ".repeat(d);
        y.push_str(&format!("{pad}choices:\n"));
        for c in &opt.choices {
            y.push_str(&format!("{pad}  - {}\n", value(c)));
        }
    }
    if !opt.aliases.is_empty() {
        let aliases: Vec<String> = opt.aliases.iter().map(|a| a.to_string()).collect();
        list(y, d, "aliases", &aliases);
    }
    if let Some(v) = opt.version_added {
        line(y, d, "version_added", &quoted(v));
    }
    if let Some(sub) = &opt.suboptions {
        y.push_str(&format!("{}suboptions:\n", "  ".repeat(d)));
        let mut subs: Vec<&Opt> = sub.iter().collect();
        subs.sort_by_key(|o| o.name);
        for s in subs {
            render_option(y, d + 1, s);
        }
    }
}

fn line(y: &mut String, depth: usize, key: &str, val: &str) {
    y.push_str(&format!("{}{key}: {val}\n", "  ".repeat(depth)));
}

fn list(y: &mut String, depth: usize, key: &str, items: &[String]) {
    let pad = "  ".repeat(depth);
    y.push_str(&format!("{pad}{key}:\n"));
    for item in items {
        y.push_str(&format!("{pad}  - {}\n", scalar(item)));
    }
}

fn value(v: &Value) -> String {
    match v {
        Value::String(s) => scalar(s),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A YAML scalar: plain when that reads back as the same string, double-quoted otherwise.
fn scalar(s: &str) -> String {
    let plain_safe = !s.is_empty()
        && !s.starts_with(|c: char| " -?:,[]{}#&*!|>'\"%@`~".contains(c) || c.is_ascii_digit())
        && !s.ends_with([' ', ':'])
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.contains('\n')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    if plain_safe {
        s.to_string()
    } else {
        quoted(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_quote_when_yaml_would_misread() {
        assert_eq!(scalar("plain text"), "plain text");
        assert_eq!(scalar("yes"), "\"yes\"");
        assert_eq!(scalar("2.0"), "\"2.0\"");
        assert_eq!(scalar("key: value"), "\"key: value\"");
        assert_eq!(scalar("-x"), "\"-x\"");
    }
}
