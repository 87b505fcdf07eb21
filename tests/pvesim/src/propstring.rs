//! Property strings (`virtio,bridge=vmbr0,firewall=1`): the grammar of pve-common's
//! `parse_property_string`, driven by the inline `format` object of the schema, and the
//! canonical printer PVE uses when it writes a value back.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Parsed property string: canonical key -> raw value (not yet type-checked).
pub type Props = BTreeMap<String, String>;

/// The key marked `default_key` in a format, if any.
pub fn default_key(format: &Map<String, Value>) -> Option<&str> {
    format
        .iter()
        .find(|(_, s)| truthy(s.get("default_key")))
        .map(|(k, _)| k.as_str())
}

pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty() && s != "0",
        _ => false,
    }
}

/// Split and resolve keys/aliases. Errors are the bare PVE texts (with trailing `\n`),
/// to be prefixed with `invalid format - ` by the caller.
pub fn parse(format: &Map<String, Value>, input: &str) -> Result<Props, String> {
    let dkey = default_key(format);
    let mut res = Props::new();
    for part in input.split(',') {
        if part.is_empty() {
            continue;
        }
        if let Some((k, v)) = part.split_once('=') {
            if k.is_empty() || v.is_empty() {
                return Err("missing key in comma-separated list property\n".into());
            }
            let Some(schema) = format.get(k).and_then(Value::as_object) else {
                return Err(format!("invalid key in comma-separated list property: {k}\n"));
            };
            let mut key = k.to_string();
            if let Some(alias) = schema.get("alias").and_then(Value::as_str) {
                if let Some(ka) = schema.get("keyAlias").and_then(Value::as_str) {
                    // `virtio=MAC`: the key names the value of another key.
                    if res.contains_key(ka) {
                        return Err(format!("duplicate key in comma-separated list property: {ka}\n"));
                    }
                    res.insert(ka.to_string(), k.to_string());
                }
                key = alias.to_string();
            }
            if res.contains_key(&key) {
                return Err(format!("duplicate key in comma-separated list property: {key}\n"));
            }
            res.insert(key, v.to_string());
        } else {
            let Some(dk) = dkey else {
                return Err("value without key, but schema does not define a default key\n".into());
            };
            if res.contains_key(dk) {
                return Err(format!("duplicate key in comma-separated list property: {dk}\n"));
            }
            res.insert(dk.to_string(), part.to_string());
        }
    }
    Ok(res)
}

/// Canonical form: default key bare first, then the rest sorted by key.
pub fn print(format: Option<&Map<String, Value>>, props: &Props) -> String {
    let dkey = format.and_then(default_key);
    let mut out: Vec<String> = Vec::new();
    if let Some(dk) = dkey {
        if let Some(v) = props.get(dk) {
            out.push(v.clone());
        }
    }
    for (k, v) in props {
        if Some(k.as_str()) == dkey {
            continue;
        }
        out.push(format!("{k}={v}"));
    }
    out.join(",")
}

/// Print with an explicit first part (e.g. `virtio=MAC` for nets, the volid for disks).
pub fn print_with_head(head: &str, props: &Props, skip: &[&str]) -> String {
    let mut out = vec![head.to_string()];
    for (k, v) in props {
        if skip.contains(&k.as_str()) {
            continue;
        }
        out.push(format!("{k}={v}"));
    }
    out.join(",")
}

/// Property-string booleans: `1|0|on|off|yes|no|true|false`, normalised to `1`/`0`.
pub fn parse_bool(v: &str) -> Option<&'static str> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "on" | "yes" | "true" => Some("1"),
        "0" | "off" | "no" | "false" => Some("0"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn net_format() -> Map<String, Value> {
        json!({
            "model": {"default_key": 1, "type": "string", "enum": ["virtio", "e1000"]},
            "macaddr": {"type": "string", "optional": 1},
            "bridge": {"type": "string", "optional": 1},
            "firewall": {"type": "boolean", "optional": 1},
            "virtio": {"alias": "macaddr", "keyAlias": "model"},
        })
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn default_key_and_key_alias() {
        let f = net_format();
        let p = parse(&f, "virtio,bridge=vmbr0").unwrap();
        assert_eq!(p["model"], "virtio");
        let p = parse(&f, "virtio=BC:24:11:00:00:01,bridge=vmbr0").unwrap();
        assert_eq!(p["model"], "virtio");
        assert_eq!(p["macaddr"], "BC:24:11:00:00:01");
        assert_eq!(print(Some(&f), &p), "virtio,bridge=vmbr0,macaddr=BC:24:11:00:00:01");
    }

    #[test]
    fn grammar_errors() {
        let f = net_format();
        assert_eq!(
            parse(&f, "foo=1").unwrap_err(),
            "invalid key in comma-separated list property: foo\n"
        );
        assert_eq!(
            parse(&f, "virtio,bridge=a,bridge=b").unwrap_err(),
            "duplicate key in comma-separated list property: bridge\n"
        );
        assert_eq!(
            parse(&f, "bridge=").unwrap_err(),
            "missing key in comma-separated list property\n"
        );
        assert_eq!(
            parse(&f, "virtio,e1000").unwrap_err(),
            "duplicate key in comma-separated list property: model\n"
        );
        let mut nodefault = f.clone();
        nodefault.remove("model");
        assert_eq!(
            parse(&nodefault, "x").unwrap_err(),
            "value without key, but schema does not define a default key\n"
        );
        assert_eq!(parse(&f, ",,virtio,,").unwrap()["model"], "virtio");
    }

    #[test]
    fn bools() {
        assert_eq!(parse_bool("On"), Some("1"));
        assert_eq!(parse_bool("FALSE"), Some("0"));
        assert_eq!(parse_bool("2"), None);
    }
}
