//! A lookup by `name` alone through the run's name index (`common`'s
//! `run::name_index`): each guest the index holds under the name is read once
//! (`status/current`, which also confirms it is there and still so named), and its record
//! is the one a listing gives, rebuilt from that answer and the index. Any guest that
//! does not confirm, and a name the index does not hold, leave it to the listing.

use ferrox_ansible::protocol::Failure;
use ferrox_pve_client::client::Client;
use ferrox_run::name_index::{ClusterIndex, IndexedGuest};
use serde_json::{Map, Value};

use crate::collect::{normalise, status_only_keys, Filters, Found, GuestKind, NodeReader};

/// The `/cluster/resources` keys of a guest that its `status/current` gives too, in the
/// listing's order: these come before `pool` and `hastate`...
const LISTED_BEFORE_POOL: &[&str] = &["lock", "tags"];
/// ...and these after them (then `maxcpu` and `template`).
const LISTED_AFTER_POOL: &[&str] = &[
    "name",
    "status",
    "uptime",
    "cpu",
    "mem",
    "memhost",
    "maxmem",
    "maxdisk",
    "disk",
    "netin",
    "netout",
    "diskread",
    "diskwrite",
];

/// The guests the task asks for, or `None` when the index cannot tell them all.
pub(crate) fn collect(client: &Client, f: &Filters, index: &ClusterIndex) -> Option<Result<Found, Failure>> {
    let name = f.name.as_deref().filter(|_| f.vmid.is_none())?;
    let kept: Vec<(&IndexedGuest, GuestKind)> = index
        .guests
        .iter()
        .filter_map(|g| Some((g, GuestKind::from_type(&g.kind)?)))
        .filter(|(g, kind)| f.kinds.contains(kind) && f.node.as_deref().is_none_or(|n| n == g.node))
        .collect();
    if kept.is_empty() {
        return None;
    }
    let mut confirmed = Vec::with_capacity(kept.len());
    for (g, kind) in kept {
        confirmed.push((g, kind, index.confirm(client, g, name)?));
    }
    let mut found = Found::default();
    for (g, kind, status) in confirmed {
        let mut guest = record(g, kind, status);
        normalise(&mut guest);
        if let Err(e) = NodeReader::new(client, kind, &g.node, &mut found.warnings).extras(&mut guest, f) {
            return Some(Err(e));
        }
        found.guests.push(Value::Object(guest));
    }
    found.guests.sort_by_key(|g| g["vmid"].as_i64().unwrap_or(i64::MAX));
    Some(Ok(found))
}

/// The guest's listing record merged with its `status/current` (less the keys only
/// that call gives), as the listing path merges them.
fn record(g: &IndexedGuest, kind: GuestKind, mut status: Map<String, Value>) -> Map<String, Value> {
    let mut guest = Map::new();
    guest.insert("id".into(), Value::from(format!("{}/{}", kind.as_str(), g.vmid)));
    guest.insert("type".into(), Value::from(kind.as_str()));
    guest.insert("vmid".into(), Value::from(g.vmid));
    guest.insert("node".into(), Value::from(g.node.clone()));
    let copy = |guest: &mut Map<String, Value>, keys: &[&str]| {
        for key in keys {
            if let Some(v) = status.get(*key) {
                guest.insert((*key).into(), v.clone());
            }
        }
    };
    copy(&mut guest, LISTED_BEFORE_POOL);
    if let Some(pool) = &g.pool {
        guest.insert("pool".into(), Value::from(pool.clone()));
    }
    // PVE lists the HA manager's state of a managed guest, which status/current nests.
    let ha = status.get("ha").filter(|ha| ha["managed"] == 1);
    if let Some(state) = ha.and_then(|ha| ha.get("state")) {
        guest.insert("hastate".into(), state.clone());
    }
    copy(&mut guest, LISTED_AFTER_POOL);
    guest.insert("maxcpu".into(), status.get("cpus").cloned().unwrap_or(Value::from(1)));
    guest.insert("template".into(), Value::from(0));
    for key in status_only_keys(kind) {
        status.remove(*key);
    }
    guest.extend(status);
    guest.insert("vmid".into(), Value::from(g.vmid));
    guest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn status(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn the_record_is_the_listing_entry_with_the_status_merged_in() {
        let vm = IndexedGuest {
            vmid: 100,
            node: "pve1".into(),
            kind: "qemu".into(),
            pool: Some("prod".into()),
        };
        let answer = status(json!({
            "vmid": 100, "name": "web01", "status": "running", "cpus": 4, "maxmem": 1024, "lock": "backup",
            "ha": {"managed": 1, "state": "started", "request_state": "started"}, "qmpstatus": "running", "pid": 7,
        }));
        let got = record(&vm, GuestKind::Qemu, answer);
        let keys: Vec<&str> = got.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "id", "type", "vmid", "node", "lock", "pool", "hastate", "name", "status", "maxmem", "maxcpu",
                "template", "cpus", "pid"
            ]
        );
        assert_eq!(got["id"], "qemu/100");
        assert_eq!(
            (&got["hastate"], &got["maxcpu"], &got["template"]),
            (&json!("started"), &json!(4), &json!(0))
        );
        assert!(
            got.get("ha").is_none() && got.get("qmpstatus").is_none(),
            "status/current's own keys are left out"
        );
    }

    #[test]
    fn an_unmanaged_guest_has_no_hastate_and_a_template_says_so() {
        let ct = IndexedGuest {
            vmid: 200,
            node: "pve2".into(),
            kind: "lxc".into(),
            pool: None,
        };
        let got = record(
            &ct,
            GuestKind::Lxc,
            status(json!({"name": "ct", "status": "stopped", "ha": {"managed": 0}, "template": 1})),
        );
        assert_eq!(got["id"], "lxc/200");
        assert!(got.get("hastate").is_none() && got.get("pool").is_none());
        assert_eq!(got["template"], 1, "status/current's template wins over the default 0");
    }
}
