//! The Python half of a docs-only module file: the module's argument spec and a `main()`
//! that builds an `AnsibleModule` from it, rendered from the same declaration as its
//! docs. ansible-lint's `args` rule and `ansible-test sanity validate-modules` read an
//! argument spec only by running `main()` with `AnsibleModule` replaced; our binary
//! validates the same declaration (and more: integer bounds, the connection's rules).
//!
//! The connection options are never required here, and their rules are left out: they
//! may come from `module_defaults` or the environment, which those checks do not apply,
//! so requiring them would fail every task that takes its connection from there.
//! If anything runs the file as the module, it fails saying so. ansible-lint looks for
//! the action plugin first, so each action plugin's `main()` hands over to this one.

use serde_json::Value;

use crate::options::{Kind, ModuleSpec, Opt, RequiredIf, Rules, Support};
use crate::python::python_repr;

/// Widest line written (pep8 as ansible-test runs it allows 160).
const WIDTH: usize = 150;

/// The argument spec, the rules and `main()`, for the options not in `shared` (the
/// connection options, whose names are given) rendered as declared and those in it as
/// optional.
pub fn render(spec: &ModuleSpec, shared: &[&str]) -> String {
    let options = Py::Dict(
        spec.options
            .iter()
            .map(|o| (o.name.to_string(), option(o, shared.contains(&o.name))))
            .collect(),
    );
    let mut kwargs = vec![
        ("argument_spec".to_string(), Py::Atom("ARGUMENT_SPEC".into())),
        (
            "supports_check_mode".to_string(),
            Py::Atom(py_bool(spec.check_mode.0 != Support::None)),
        ),
    ];
    kwargs.extend(rules(&spec.rules, shared));
    let message = format!(
        "plugins/modules/{name}.py holds only the documentation and argument spec of ferrox.proxmox.{name}; the module is a binary, run by the \
         action plugin ferrox.proxmox.{name}. Something ran this file instead: call the module by its name (ferrox.proxmox.{name}) and do not \
         replace its action plugin.",
        name = spec.name
    );
    let mut py = String::from(
        "\nfrom ansible.module_utils import basic\nfrom ansible.module_utils.basic import env_fallback\n\n",
    );
    py.push_str(&format!("ARGUMENT_SPEC = {}\n\n", options.render_at(0, 16)));
    py.push_str(&format!("NOT_THE_MODULE = {}\n\n\n", wrap_string(&message)));
    py.push_str("def main():\n");
    py.push_str("    # AnsibleModule is looked up when called: the argument checks replace it to read the spec.\n");
    py.push_str(&format!(
        "    module = basic.AnsibleModule{}\n",
        Py::Call(kwargs).render_at(4, 33)
    ));
    py.push_str("    module.fail_json(msg=NOT_THE_MODULE)\n\n\n");
    py.push_str("if __name__ == '__main__':\n    main()\n");
    py
}

fn option(o: &Opt, shared: bool) -> Py {
    let mut d: Vec<(String, Py)> = vec![(
        "type".into(),
        Py::Atom(python_repr(&Value::from(o.kind.ansible_name()))),
    )];
    if let Some(el) = o.elements {
        d.push(("elements".into(), text(el.ansible_name())));
    }
    if o.required && !shared {
        d.push(("required".into(), Py::Atom("True".into())));
    }
    if let Some(default) = &o.default {
        d.push(("default".into(), Py::Atom(python_repr(default))));
    }
    if !o.choices.is_empty() {
        d.push((
            "choices".into(),
            Py::List(o.choices.iter().map(|c| Py::Atom(python_repr(c))).collect()),
        ));
    }
    if !o.aliases.is_empty() {
        d.push(("aliases".into(), Py::List(o.aliases.iter().map(|a| text(a)).collect())));
    }
    if o.no_log {
        d.push(("no_log".into(), Py::Atom("True".into())));
    } else if reads_like_a_secret(o.name) {
        // Not a secret, though its name reads like one (sshkeys are public keys): said
        // explicitly, as validate-modules asks of such names.
        d.push(("no_log".into(), Py::Atom("False".into())));
    }
    if !o.env.is_empty() {
        let vars = Py::List(o.env.iter().map(|v| text(v)).collect());
        d.push((
            "fallback".into(),
            Py::Tuple(vec![Py::Atom("env_fallback".into()), vars]),
        ));
    }
    if let (Kind::Dict, Some(subs)) = (o.kind, &o.suboptions) {
        d.push((
            "options".into(),
            Py::Dict(subs.iter().map(|s| (s.name.to_string(), option(s, false))).collect()),
        ));
        d.extend(rules(&o.sub_rules, &[]));
    }
    Py::Dict(d)
}

/// The words validate-modules takes for a possible secret in an option's name.
fn reads_like_a_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["pass", "secret", "token", "key"].iter().any(|w| name.contains(w))
}

/// AnsibleModule's constraint keywords; a rule naming a `shared` option is left out.
fn rules(r: &Rules, shared: &[&str]) -> Vec<(String, Py)> {
    let keep = |names: &[&str]| !names.iter().any(|n| shared.contains(n));
    let groups = |sets: &[Vec<&'static str>]| -> Py {
        Py::List(
            sets.iter()
                .filter(|s| keep(s))
                .map(|s| Py::List(s.iter().map(|n| text(n)).collect()))
                .collect(),
        )
    };
    let mut out = Vec::new();
    for (key, sets) in [
        ("mutually_exclusive", &r.mutually_exclusive),
        ("required_together", &r.required_together),
        ("required_one_of", &r.required_one_of),
    ] {
        if let Py::List(l) = groups(sets) {
            if !l.is_empty() {
                out.push((key.to_string(), Py::List(l)));
            }
        }
    }
    let ifs: Vec<Py> = r
        .required_if
        .iter()
        .filter(|RequiredIf { key, requirements, .. }| keep(&[key]) && keep(requirements))
        .map(
            |RequiredIf {
                 key,
                 value,
                 requirements,
                 any,
             }| {
                let mut t = vec![
                    text(key),
                    Py::Atom(python_repr(value)),
                    Py::List(requirements.iter().map(|n| text(n)).collect()),
                ];
                if *any {
                    t.push(Py::Atom("True".into()));
                }
                Py::Tuple(t)
            },
        )
        .collect();
    if !ifs.is_empty() {
        out.push(("required_if".into(), Py::List(ifs)));
    }
    let by: Vec<(String, Py)> = r
        .required_by
        .iter()
        .filter(|(key, reqs)| keep(&[key]) && keep(reqs))
        .map(|(key, reqs)| (key.to_string(), Py::List(reqs.iter().map(|n| text(n)).collect())))
        .collect();
    if !by.is_empty() {
        out.push(("required_by".into(), Py::Dict(by)));
    }
    out
}

fn text(s: &str) -> Py {
    Py::Atom(python_repr(&Value::from(s)))
}

fn py_bool(b: bool) -> String {
    if b { "True" } else { "False" }.into()
}

/// A long message as adjacent string literals in parentheses, each line within [`WIDTH`].
fn wrap_string(s: &str) -> String {
    let mut parts = Vec::new();
    let mut line = String::new();
    for word in s.split_inclusive(' ') {
        if line.len() + word.len() > WIDTH - 10 && !line.is_empty() {
            parts.push(std::mem::take(&mut line));
        }
        line.push_str(word);
    }
    parts.push(line);
    let lits: Vec<String> = parts
        .iter()
        .map(|p| format!("    {}", python_repr(&Value::from(p.as_str()))))
        .collect();
    format!("(\n{}\n)", lits.join("\n"))
}

/// A Python expression, laid out on one line when it fits and one item per line if not.
enum Py {
    Atom(String),
    List(Vec<Py>),
    Tuple(Vec<Py>),
    /// `{'key': value, ...}` (keys may be Python keywords, so never `dict(key=...)`).
    Dict(Vec<(String, Py)>),
    /// `(key=value, ...)`: keyword arguments of a call.
    Call(Vec<(String, Py)>),
}

impl Py {
    fn flat(&self) -> String {
        match self {
            Py::Atom(a) => a.clone(),
            Py::List(items) => format!("[{}]", items.iter().map(Py::flat).collect::<Vec<_>>().join(", ")),
            Py::Tuple(items) => format!(
                "({}{})",
                items.iter().map(Py::flat).collect::<Vec<_>>().join(", "),
                if items.len() == 1 { "," } else { "" }
            ),
            Py::Dict(kv) => format!(
                "{{{}}}",
                kv.iter()
                    .map(|(k, v)| format!("{}: {}", python_repr(&Value::from(k.as_str())), v.flat()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Py::Call(kv) => format!(
                "({})",
                kv.iter()
                    .map(|(k, v)| format!("{k}={}", v.flat()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The expression on a line indented by `indent`, starting at column `col` (the text
    /// before it on its first line is already written).
    fn render_at(&self, indent: usize, col: usize) -> String {
        let flat = self.flat();
        if col + flat.len() < WIDTH {
            return flat;
        }
        let pad = " ".repeat(indent + 4);
        let end = " ".repeat(indent);
        let lines: Vec<String> = match self {
            Py::Atom(a) => return a.clone(),
            Py::List(items) | Py::Tuple(items) => items
                .iter()
                .map(|i| format!("{pad}{},", i.render_at(indent + 4, indent + 4)))
                .collect(),
            Py::Dict(kv) => kv
                .iter()
                .map(|(k, v)| {
                    let key = python_repr(&Value::from(k.as_str()));
                    format!("{pad}{key}: {},", v.render_at(indent + 4, indent + 6 + key.len()))
                })
                .collect(),
            Py::Call(kv) => kv
                .iter()
                .map(|(k, v)| format!("{pad}{k}={},", v.render_at(indent + 4, indent + 5 + k.len())))
                .collect(),
        };
        let (open, close) = match self {
            Py::List(_) => ("[", "]"),
            Py::Tuple(_) | Py::Call(_) => ("(", ")"),
            _ => ("{", "}"),
        };
        format!("{open}\n{}\n{end}{close}", lines.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_expressions_break_one_item_per_line_within_the_width() {
        let long = Py::List((0..40).map(|i| Py::Atom(format!("'choice{i}'"))).collect());
        let d = Py::Dict(vec![
            ("choices".into(), long),
            ("type".into(), Py::Atom("'str'".into())),
        ]);
        let out = d.render_at(4, 4);
        assert!(out.lines().all(|l| l.len() <= WIDTH), "{out}");
        assert!(
            out.starts_with("{\n        'choices': [\n            'choice0',\n"),
            "{out}"
        );
        assert_eq!(Py::Tuple(vec![Py::Atom("1".into())]).flat(), "(1,)");
    }
}
