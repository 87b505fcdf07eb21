//! Python's `repr()` of JSON values: how AnsibleModule and community.proxmox 1.6 printed
//! values inside messages (`{'vmid': 'duplicate parameter ...'}`, `['a', 1, True]`), so ours
//! read the same.
//!
//! A crate of its own, below everything, because both the Ansible side (validation
//! messages) and the API client (a 400's `errors`) quote values this way, and neither may
//! depend on the other. It knows nothing but `serde_json`; [`python_repr`] is its entry
//! point.

#![deny(missing_docs)]

use serde_json::Value;

/// A JSON value as Python's `repr()` prints the equivalent Python value: how 1.6 showed
/// the `errors` object of a 400 (`{'vmid': 'duplicate parameter (already defined in URI)'}`).
pub fn python_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => match n.as_f64() {
            // Python prints a float that happens to be whole as `2.0`.
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e16 => format!("{f:.1}"),
            _ => n.to_string(),
        },
        Value::String(s) => python_str_repr(s),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(python_repr).collect();
            format!("[{}]", inner.join(", "))
        }
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", python_str_repr(k), python_repr(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}

/// Python's string repr: single quotes unless the text holds `'` and no `"`.
fn python_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}
