//! The sidecar documentation (`plugins/modules/<name>.yml`) rendered from a module's
//! declaration, so `ansible-doc` shows exactly the options the binary validates.
//!
//! `collection docs` writes these files and `collection docs --check` fails when a
//! committed file differs from what the declaration renders.

use serde_json::Value;

use crate::options::{ModuleSpec, Opt};

const HEADER: &str = "# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
---
";

/// The whole sidecar file for a module.
pub fn render_sidecar(spec: &ModuleSpec) -> String {
    let mut y = String::from(HEADER);
    y.push_str("DOCUMENTATION:\n");
    line(&mut y, 1, "module", &scalar(spec.name));
    line(&mut y, 1, "short_description", &scalar(spec.short_description));
    line(&mut y, 1, "version_added", &quoted(spec.version_added));
    list(&mut y, 1, "description", &spec.description);
    y.push_str("  author:\n    - ferrox.proxmox contributors\n");
    y.push_str("  options:\n");
    let mut options: Vec<&Opt> = spec.options.iter().collect();
    options.sort_by_key(|o| o.name);
    for opt in options {
        render_option(&mut y, 2, opt);
    }
    y.push_str("  attributes:\n");
    attribute(&mut y, "check_mode", spec.check_mode.0.as_str(), spec.check_mode.1);
    attribute(&mut y, "diff_mode", spec.diff_mode.0.as_str(), spec.diff_mode.1);
    y.push_str("    action_group:\n      description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.\n      support: full\n      membership:\n        - ferrox.proxmox.proxmox\n");
    if !spec.notes.is_empty() {
        list(&mut y, 1, "notes", &spec.notes);
    }
    if !spec.seealso.is_empty() {
        y.push_str("  seealso:\n");
        for s in &spec.seealso {
            y.push_str(&format!("    - module: {s}\n"));
        }
    }
    y.push_str("\nEXAMPLES: |\n");
    for l in spec.examples.trim_matches('\n').lines() {
        if l.is_empty() {
            y.push('\n');
        } else {
            y.push_str(&format!("  {l}\n"));
        }
    }
    y.push_str("\nRETURN:\n");
    for l in spec.returns.trim_matches('\n').lines() {
        if l.is_empty() {
            y.push('\n');
        } else {
            y.push_str(&format!("  {l}\n"));
        }
    }
    y
}

fn attribute(y: &mut String, name: &str, support: &str, description: &str) {
    y.push_str(&format!("    {name}:\n      support: {support}\n"));
    if !description.is_empty() {
        y.push_str(&format!("      details: {}\n", scalar(description)));
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
