//! The docs-only module file (`plugins/modules/<name>.py`) rendered from a module's
//! declaration, so `ansible-doc` (and its `-l` listing, Galaxy, ansible-lint) shows
//! exactly the options the binary validates. The file holds only DOCUMENTATION, EXAMPLES
//! and RETURN: the action plugin of the same name runs the binary of every module,
//! `plugins/modules/__bin/<platform>/ferrox`.
//!
//! `collection docs` writes these files and `collection docs --check` fails when a
//! committed file differs from what the declaration renders.

use serde_json::Value;

use crate::options::{ModuleSpec, Opt};

/// The doc fragment every module's docs extend for the connection options.
pub const CONNECTION_FRAGMENT: &str = "ferrox.proxmox.connection";

const HEADER: &str = "# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation and argument spec only: the action plugin plugins/action/{name}.py runs
# the module binary, plugins/modules/__bin/<platform>/ferrox, for the task's target platform.

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

/// The whole `plugins/modules/<name>.py` for a module; `connection` are the shared
/// options the connection fragment documents (declared by the layer that connects).
pub fn render_stub(spec: &ModuleSpec, connection: &[Opt]) -> String {
    let mut py = HEADER.replace("{name}", spec.name);
    py.push_str(&python_block(
        "DOCUMENTATION",
        &wrap_long_lines(&documentation(spec, connection)),
    ));
    py.push('\n');
    py.push_str(&python_block("EXAMPLES", &verbatim(spec.examples)));
    py.push('\n');
    py.push_str(&python_block("RETURN", &wrap_long_lines(&verbatim(spec.returns))));
    py.push_str(&crate::argspec::render(spec, &shared_names(connection)));
    py
}

/// The names of the options documented by the connection fragment.
fn shared_names(connection: &[Opt]) -> Vec<&'static str> {
    connection.iter().map(|o| o.name).collect()
}

const FRAGMENT_HEADER: &str = "# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the shared connection options' declaration by `cargo collection docs`; do not edit.

from __future__ import annotations


class ModuleDocFragment:
    # The connection options every module of the collection accepts.
";

/// `plugins/doc_fragments/connection.py`: the connection options, documented once.
pub fn render_connection_fragment(mut options: Vec<Opt>) -> String {
    let mut y = String::from("options:\n");
    options.sort_by_key(|o| o.name);
    for opt in &options {
        render_option(&mut y, 1, opt);
    }
    // Only the assignment is indented into the class: the YAML keeps its columns.
    format!(
        "{FRAGMENT_HEADER}    {}",
        python_block("DOCUMENTATION", &wrap_long_lines(&y))
    )
}

/// Lines stay within what pep8 (ansible-test's, 160 columns) accepts.
const MAX_LINE: usize = 159;

/// Folds every over-long `- text` or `key: text` line whose value is a plain or
/// double-quoted scalar onto continuation lines. YAML folds a line break inside such a
/// scalar back into the single space it replaced, so the value reads the same; breaks go
/// only at single spaces and never before a word YAML could take for syntax.
fn wrap_long_lines(yaml: &str) -> String {
    let mut out = String::new();
    // Inside a literal or folded block (`key: |`), every line is content: left alone.
    let mut block_indent: Option<usize> = None;
    for l in yaml.lines() {
        let indent = l.len() - l.trim_start().len();
        if block_indent.is_some_and(|b| l.trim().is_empty() || indent > b) {
            out.push_str(l);
            out.push('\n');
            continue;
        }
        let t = l.trim_end();
        block_indent = [" |", " >", " |-", " >-", "- |", "- >"]
            .iter()
            .any(|e| t.ends_with(e))
            .then_some(indent);
        match split_scalar_line(l) {
            Some((head, value, cont_indent)) if l.chars().count() > MAX_LINE => {
                fold(&mut out, head, value, cont_indent);
            }
            _ => {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    out
}

/// `(head, value, continuation indent)` of a `- value` or `key: value` line.
fn split_scalar_line(l: &str) -> Option<(&str, &str, usize)> {
    let indent = l.len() - l.trim_start().len();
    let rest = &l[indent..];
    let value_at = if let Some(v) = rest.strip_prefix("- ") {
        l.len() - v.len()
    } else {
        let colon = rest.find(": ")?;
        if !rest[..colon].chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        indent + colon + 2
    };
    let value = &l[value_at..];
    let quoted = value.starts_with('"') && value.ends_with('"') && value.len() > 1;
    let plain = !value.starts_with(|c: char| "|>'\"[]{}&*!%@`#".contains(c));
    (quoted || plain).then_some((&l[..value_at], value, indent + 2))
}

fn fold(out: &mut String, head: &str, value: &str, cont_indent: usize) {
    let chars: Vec<char> = value.chars().collect();
    let mut line = String::from(head);
    let mut width = head.chars().count();
    let mut start = 0;
    let mut last_break = None;
    for i in 0..chars.len() {
        let breakable = chars[i] == ' '
            && i > 0
            && chars[i - 1] != ' '
            && chars[i - 1] != '\\'
            && chars.get(i + 1).is_some_and(|c| !" -#?:,[]{}&*!|>'\"%@`".contains(*c));
        if breakable {
            last_break = Some(i);
        }
        if width + (i - start) >= MAX_LINE {
            if let Some(b) = last_break.filter(|b| *b > start) {
                line.extend(&chars[start..b]);
                out.push_str(&line);
                out.push('\n');
                line = " ".repeat(cont_indent);
                width = cont_indent;
                start = b + 1;
                last_break = None;
            }
        }
    }
    line.extend(&chars[start..]);
    out.push_str(&line);
    out.push('\n');
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
fn documentation(spec: &ModuleSpec, connection: &[Opt]) -> String {
    let mut y = String::new();
    line(&mut y, 0, "module", &scalar(spec.name));
    line(&mut y, 0, "short_description", &scalar(spec.short_description));
    line(&mut y, 0, "version_added", &quoted(spec.version_added));
    list(&mut y, 0, "description", &spec.description);
    list(&mut y, 0, "author", &[AUTHOR.to_string()]);
    y.push_str("options:\n");
    let shared = shared_names(connection);
    let mut options: Vec<&Opt> = spec.options.iter().filter(|o| !shared.contains(&o.name)).collect();
    options.sort_by_key(|o| o.name);
    for opt in options {
        render_option(&mut y, 1, opt);
    }
    y.push_str(&format!(
        "extends_documentation_fragment:\n  - {CONNECTION_FRAGMENT}\n  - ansible.builtin.action_common_attributes\n  - ansible.builtin.action_common_attributes.flow\n"
    ));
    y.push_str("attributes:\n");
    y.push_str(ACTION_ATTRIBUTES);
    attribute(&mut y, "check_mode", spec.check_mode.0.as_str(), spec.check_mode.1);
    attribute(&mut y, "diff_mode", spec.diff_mode.0.as_str(), spec.diff_mode.1);
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
    fn long_lines_fold_at_spaces_and_unfold_to_the_same_text() {
        let long = "word ".repeat(60) + "end";
        for line in [
            format!("  - {long}"),
            format!("    description: {long}"),
            format!("  - \"{long}: x\""),
        ] {
            let wrapped = wrap_long_lines(&line);
            let lines: Vec<&str> = wrapped.lines().collect();
            assert!(
                lines.len() > 1 && lines.iter().all(|l| l.chars().count() <= MAX_LINE),
                "{wrapped}"
            );
            let unfolded: Vec<&str> = lines
                .iter()
                .enumerate()
                .map(|(i, l)| if i == 0 { *l } else { l.trim_start() })
                .collect();
            assert_eq!(unfolded.join(" "), line);
        }
        assert_eq!(wrap_long_lines("short: line\n"), "short: line\n");
        let block = format!("key: |\n  a: {long}\n");
        assert_eq!(wrap_long_lines(&block), block);
    }

    #[test]
    fn scalars_quote_when_yaml_would_misread() {
        assert_eq!(scalar("plain text"), "plain text");
        assert_eq!(scalar("yes"), "\"yes\"");
        assert_eq!(scalar("2.0"), "\"2.0\"");
        assert_eq!(scalar("key: value"), "\"key: value\"");
        assert_eq!(scalar("-x"), "\"-x\"");
    }
}
