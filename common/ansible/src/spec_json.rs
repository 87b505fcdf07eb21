//! A module's declaration as AnsibleModule's `argument_spec` plus its constraint lists,
//! in JSON: what ansible-core's own `ArgumentSpecValidator` takes. The validation-parity
//! test feeds it to every supported ansible-core and compares the messages with ours;
//! `cargo collection spec <module>` prints it.
//!
//! Environment fallbacks are given as `"env_fallback": [VARS]`; the consumer turns
//! them into `fallback: (env_fallback, VARS)`.

use serde_json::{json, Map, Value};

use crate::options::{ModuleSpec, Opt, Rules};

/// `{"argument_spec": {...}, "mutually_exclusive": [...], ...}` of `spec`.
pub fn argument_spec(spec: &ModuleSpec) -> Value {
    let mut out = Map::new();
    out.insert("argument_spec".into(), options(&spec.options));
    add_rules(&mut out, &spec.rules);
    Value::Object(out)
}

fn options(opts: &[Opt]) -> Value {
    let mut map = Map::new();
    for o in opts {
        map.insert(o.name.to_string(), option(o));
    }
    Value::Object(map)
}

fn option(o: &Opt) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!(o.kind.ansible_name()));
    if o.required {
        m.insert("required".into(), json!(true));
    }
    if let Some(d) = &o.default {
        m.insert("default".into(), d.clone());
    }
    if !o.choices.is_empty() {
        m.insert("choices".into(), json!(o.choices));
    }
    if !o.aliases.is_empty() {
        m.insert("aliases".into(), json!(o.aliases));
    }
    if o.no_log {
        m.insert("no_log".into(), json!(true));
    }
    if let Some(el) = o.elements {
        m.insert("elements".into(), json!(el.ansible_name()));
    }
    if !o.env.is_empty() {
        m.insert("env_fallback".into(), json!(o.env));
    }
    if let Some(sub) = &o.suboptions {
        m.insert("options".into(), options(sub));
        add_rules(&mut m, &o.sub_rules);
    }
    Value::Object(m)
}

fn add_rules(m: &mut Map<String, Value>, r: &Rules) {
    if !r.mutually_exclusive.is_empty() {
        m.insert("mutually_exclusive".into(), json!(r.mutually_exclusive));
    }
    if !r.required_together.is_empty() {
        m.insert("required_together".into(), json!(r.required_together));
    }
    if !r.required_one_of.is_empty() {
        m.insert("required_one_of".into(), json!(r.required_one_of));
    }
    if !r.required_if.is_empty() {
        let rows: Vec<Value> = r
            .required_if
            .iter()
            .map(|ri| json!([ri.key, ri.value, ri.requirements, ri.any]))
            .collect();
        m.insert("required_if".into(), Value::Array(rows));
    }
    if !r.required_by.is_empty() {
        let by: Map<String, Value> = r.required_by.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        m.insert("required_by".into(), Value::Object(by));
    }
}
