//! The config file view of a VM: digest, pending merge, typed JSON output, and the
//! `/pending` listing.

use crate::schema::Schema;
use crate::state::Config;
use serde_json::{Map, Value};
use sha1::{Digest, Sha1};
use std::collections::BTreeMap;

/// The file text PVE would write (description as comment lines, `[PENDING]` section).
pub fn serialize(conf: &Config) -> String {
    let mut out = String::new();
    write_section(&mut out, &conf.current);
    if !conf.pending.is_empty() || !conf.delete.is_empty() {
        out.push_str("\n[PENDING]\n");
        write_section(&mut out, &conf.pending);
        if !conf.delete.is_empty() {
            let list: Vec<String> = conf
                .delete
                .iter()
                .map(|(k, f)| if *f { format!("!{k}") } else { k.clone() })
                .collect();
            out.push_str(&format!("delete: {}\n", list.join(",")));
        }
    }
    if !conf.cloudinit.is_empty() {
        out.push_str("\n[special:cloudinit]\n");
        write_section(&mut out, &conf.cloudinit);
    }
    for (name, snap) in &conf.snapshots {
        out.push_str(&format!("\n[{name}]\n"));
        let mut section = snap.conf.clone();
        section.insert("snaptime".into(), snap.snaptime.to_string());
        if !snap.description.is_empty() {
            section.insert("description".into(), snap.description.clone());
        }
        if let Some(p) = &snap.parent {
            section.insert("parent".into(), p.clone());
        }
        if snap.vmstate {
            section.insert("vmstate".into(), "1".into());
        }
        write_section(&mut out, &section);
    }
    out
}

fn write_section(out: &mut String, map: &BTreeMap<String, String>) {
    if let Some(d) = map.get("description") {
        for line in d.lines() {
            out.push_str(&format!("#{line}\n"));
        }
    }
    for (k, v) in map {
        if k != "description" {
            out.push_str(&format!("{k}: {v}\n"));
        }
    }
}

/// SHA-1 of the serialised config (changes whenever the file content changes).
pub fn digest(conf: &Config) -> String {
    Sha1::digest(serialize(conf).as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Config with pending values applied and pending deletions removed.
pub fn merged(conf: &Config) -> BTreeMap<String, String> {
    let mut m = conf.current.clone();
    for (k, v) in &conf.pending {
        m.insert(k.clone(), v.clone());
    }
    for k in conf.delete.keys() {
        m.remove(k);
    }
    m
}

/// JSON typing as PVE returns config values: integers and booleans as numbers.
pub fn typed(schema: &Schema, key: &str, value: &str) -> Value {
    if key == "cipassword" {
        return Value::String("**********".into());
    }
    match super::disks::key_type(schema, key).as_str() {
        "integer" | "boolean" => value
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(value.into())),
        _ => Value::String(value.into()),
    }
}

/// `GET config` data: only set keys plus `digest`.
pub fn to_json(schema: &Schema, conf: &Config, current_only: bool) -> Value {
    let view = if current_only {
        conf.current.clone()
    } else {
        merged(conf)
    };
    let mut obj = Map::new();
    for (k, v) in &view {
        obj.insert(k.clone(), typed(schema, k, v));
    }
    obj.insert("digest".into(), Value::String(digest(conf)));
    Value::Object(obj)
}

/// `GET pending` data.
pub fn pending_list(schema: &Schema, conf: &Config) -> Value {
    let mut keys: Vec<&String> = conf
        .current
        .keys()
        .chain(conf.pending.keys())
        .chain(conf.delete.keys())
        .collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for k in keys {
        let mut item = Map::new();
        item.insert("key".into(), Value::String(k.clone()));
        if let Some(v) = conf.current.get(k) {
            item.insert("value".into(), typed(schema, k, v));
        }
        if let Some(v) = conf.pending.get(k) {
            item.insert("pending".into(), typed(schema, k, v));
        }
        if let Some(force) = conf.delete.get(k) {
            item.insert("delete".into(), Value::from(if *force { 2 } else { 1 }));
        }
        out.push(Value::Object(item));
    }
    out.push(serde_json::json!({"key": "digest", "value": digest(conf)}));
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_tracks_pending() {
        let mut c = Config::default();
        c.current.insert("cores".into(), "2".into());
        let d1 = digest(&c);
        assert_eq!(d1.len(), 40);
        c.pending.insert("cores".into(), "4".into());
        let d2 = digest(&c);
        assert_ne!(d1, d2);
        assert_eq!(merged(&c)["cores"], "4");
        c.delete.insert("name".into(), true);
        assert!(serialize(&c).contains("delete: !name\n"));
    }

    #[test]
    fn typing_and_masking() {
        let s = Schema::embedded();
        assert_eq!(typed(&s, "cores", "4"), Value::from(4));
        assert_eq!(typed(&s, "template", "1"), Value::from(1));
        assert_eq!(typed(&s, "memory", "2048"), Value::from("2048"));
        assert_eq!(typed(&s, "cipassword", "secret"), Value::from("**********"));
        assert_eq!(typed(&s, "net0", "virtio=X"), Value::from("virtio=X"));
    }
}
