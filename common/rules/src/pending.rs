//! PVE's `GET /nodes/{node}/qemu/{vmid}/pending` listing, read one way.
//!
//! Every module and the dry run read this listing; each used to read its `delete` field
//! its own way (greater than zero, not null and not zero, present at all). PVE's schema
//! says (qemu-server `src/PVE/API2/Qemu.pm`, `vm_pending`): `delete` "indicates a
//! pending delete request if present and not 0. The value 2 indicates a force-delete
//! request." [`is_pending_delete`] is that rule, and [`entries`] the listing parsed with it.

use serde_json::{Map, Value};

/// One key of the listing: its current value, the value it gets at the next start, and
/// whether its deletion waits for that start.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingEntry {
    /// The config key (`memory`, `net0`, …).
    pub key: String,
    /// The value the running VM has (`value`), if the key is set now.
    pub value: Option<Value>,
    /// The value it gets at the next start (`pending`), if that differs.
    pub pending: Option<Value>,
    /// Its deletion waits for the next start (`delete` present and not 0).
    pub delete: bool,
}

impl PendingEntry {
    /// The key's change (a new value or a deletion) waits for a restart.
    pub fn waits(&self) -> bool {
        self.pending.is_some() || self.delete
    }

    /// The key's value at the next start: none when its deletion is pending.
    pub fn at_next_start(&self) -> Option<&Value> {
        if self.delete {
            None
        } else {
            self.pending.as_ref().or(self.value.as_ref())
        }
    }
}

/// PVE's rule for an entry's `delete` field: present and not 0 (1 a deletion, 2 a forced
/// one), whether PVE typed it as a number or, as some proxies and older nodes do, a string.
pub fn is_pending_delete(entry: &Map<String, Value>) -> bool {
    match entry.get("delete") {
        None | Some(Value::Null) => false,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => s.trim().parse::<f64>().map_or(!s.is_empty(), |n| n != 0.0),
        Some(Value::Bool(b)) => *b,
        Some(_) => true,
    }
}

/// The listing's entries in PVE's order; an entry without a `key` is skipped.
pub fn entries(listing: &Value) -> Vec<PendingEntry> {
    listing
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .filter_map(|item| {
            Some(PendingEntry {
                key: item.get("key")?.as_str()?.to_string(),
                value: item.get("value").filter(|v| !v.is_null()).cloned(),
                pending: item.get("pending").filter(|v| !v.is_null()).cloned(),
                delete: is_pending_delete(item),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn delete_counts_when_present_and_not_zero_whatever_its_json_type() {
        let cases = [
            (json!({"key": "a"}), false),
            (json!({"key": "a", "delete": null}), false),
            (json!({"key": "a", "delete": 0}), false),
            (json!({"key": "a", "delete": "0"}), false),
            (json!({"key": "a", "delete": 1}), true),
            (json!({"key": "a", "delete": 2}), true),
            (json!({"key": "a", "delete": "1"}), true),
            (json!({"key": "a", "delete": "2"}), true),
        ];
        for (item, expected) in cases {
            assert_eq!(is_pending_delete(&entry(item.clone())), expected, "{item}");
        }
    }

    #[test]
    fn the_listing_tells_what_waits_and_what_the_next_start_gets() {
        let listing = json!([
            {"key": "cores", "value": 2},
            {"key": "memory", "value": "2048", "pending": "4096"},
            {"key": "ide2", "value": "none,media=cdrom", "delete": 1},
            {"key": "net1", "pending": "virtio=BC:24:11:00:00:01,bridge=vmbr0"},
            {"key": "tags", "value": "a", "delete": 0},
            {"value": "no key"}
        ]);
        let got: Vec<(String, bool, Option<Value>)> = entries(&listing)
            .into_iter()
            .map(|e| (e.key.clone(), e.waits(), e.at_next_start().cloned()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("cores".into(), false, Some(json!(2))),
                ("memory".into(), true, Some(json!("4096"))),
                ("ide2".into(), true, None),
                (
                    "net1".into(),
                    true,
                    Some(json!("virtio=BC:24:11:00:00:01,bridge=vmbr0"))
                ),
                ("tags".into(), false, Some(json!("a"))),
            ]
        );
    }
}
