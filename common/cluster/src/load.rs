//! What each node has and what its guests are configured to take, tallied from the same
//! `/cluster/resources` listing a task reads to find its VM
//! ([`crate::vm::ListingQuery::with_load`]):
//! choosing a node for a new VM (proxmox_kvm's `placement`) then costs no read of its own.
//!
//! Per node: `status`, `maxmem` (bytes) and `maxcpu`, as pve-manager's `Cluster.pm`
//! `resources` lists them for a node (from the node's status broadcast: only while it is
//! online). Per guest: its node, configured `maxmem` and `maxcpu` (listed for stopped
//! guests too), and its tags. Every guest entry counts, whether the lookup decodes it or
//! rules it out unread: at thousands of guests this adds one flat read of each entry.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::flat_json::{self, Scalar};

/// A node's capacity as listed (`maxmem`/`maxcpu` absent while it is offline).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeCapacity {
    /// `online`, `offline` or `unknown`, as the listing says.
    pub status: String,
    /// The node's memory in bytes.
    pub maxmem: Option<u64>,
    /// The node's CPUs.
    pub maxcpu: Option<u64>,
}

/// One guest's configured size and tags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuestLoad {
    /// The guest's vmid.
    pub vmid: u32,
    /// The node it is on.
    pub node: String,
    /// Configured memory in bytes; `None` while PVE lists the guest without it (a guest
    /// made moments ago, before its node's next status broadcast, or on an offline node).
    pub maxmem: Option<u64>,
    /// Configured CPUs, as the listing gives them.
    pub maxcpu: Option<u64>,
    /// `tags`, split on PVE's separators.
    pub tags: Vec<String>,
}

/// The listing's nodes and guests, as placement reads them.
#[derive(Debug, Clone, Default)]
pub struct Load {
    /// Every node of the listing, by name.
    pub nodes: BTreeMap<String, NodeCapacity>,
    /// Every guest of the listing, QEMU and LXC alike (both take a node's memory).
    pub guests: Vec<GuestLoad>,
}

/// The fields of one entry placement uses.
#[derive(Default)]
struct Fields {
    kind: Option<String>,
    node: Option<String>,
    status: Option<String>,
    vmid: Option<u64>,
    maxmem: Option<u64>,
    maxcpu: Option<u64>,
    tags: Option<String>,
}

impl Fields {
    fn set(&mut self, key: &[u8], text: Option<String>, number: Option<u64>) {
        match key {
            b"type" => self.kind = text,
            b"node" => self.node = text,
            b"status" => self.status = text,
            b"tags" => self.tags = text,
            b"vmid" => self.vmid = number.or_else(|| text.and_then(|t| t.trim().parse().ok())),
            b"maxmem" => self.maxmem = number,
            b"maxcpu" => self.maxcpu = number,
            _ => {}
        }
    }

    fn of_entry(json: &[u8]) -> Option<Fields> {
        let mut f = Fields::default();
        let flat = flat_json::each_field(json, |key, value| {
            let (text, number) = match value {
                Scalar::Str(s) => (std::str::from_utf8(s).ok().map(str::to_string), None),
                Scalar::Raw(r) => (None, std::str::from_utf8(r).ok().and_then(whole_number)),
            };
            f.set(key, text, number);
        });
        if flat.is_some() {
            return Some(f);
        }
        let Value::Object(m) = serde_json::from_slice::<Value>(json).ok()? else {
            return None;
        };
        let mut f = Fields::default();
        for (k, v) in &m {
            let number = v
                .as_u64()
                .or_else(|| v.as_f64().filter(|n| *n >= 0.0).map(|n| n as u64));
            f.set(k.as_bytes(), v.as_str().map(str::to_string), number);
        }
        Some(f)
    }
}

/// A JSON number as whole units (PVE sends `maxcpu` of a node as an integer, of a guest
/// sometimes as a float).
fn whole_number(raw: &str) -> Option<u64> {
    raw.parse::<u64>()
        .ok()
        .or_else(|| raw.parse::<f64>().ok().filter(|n| *n >= 0.0).map(|n| n as u64))
}

impl Load {
    /// Tallies one listing entry (other types than nodes and guests are skipped).
    pub fn add_json(&mut self, json: &[u8]) {
        let Some(f) = Fields::of_entry(json) else { return };
        let Some(node) = f.node else { return };
        match f.kind.as_deref() {
            Some("node") => {
                self.nodes.insert(
                    node,
                    NodeCapacity {
                        status: f.status.unwrap_or_default(),
                        maxmem: f.maxmem,
                        maxcpu: f.maxcpu,
                    },
                );
            }
            Some("qemu" | "lxc") => {
                let Some(vmid) = f.vmid.and_then(|v| u32::try_from(v).ok()) else {
                    return;
                };
                self.guests.push(GuestLoad {
                    vmid,
                    node,
                    maxmem: f.maxmem,
                    maxcpu: f.maxcpu,
                    tags: split_tags(f.tags.as_deref().unwrap_or_default()),
                });
            }
            _ => {}
        }
    }

    /// The guest with this vmid, if listed.
    pub fn guest(&self, vmid: u32) -> Option<&GuestLoad> {
        self.guests.iter().find(|g| g.vmid == vmid)
    }
}

/// PVE's tag list (`;`, `,` or spaces between tags, as pve-common's `split_list`).
pub fn split_tags(text: &str) -> Vec<String> {
    text.split([';', ',', ' '])
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_and_guests_are_tallied_from_flat_and_nested_entries() {
        let mut load = Load::default();
        for entry in [
            r#"{"type":"node","node":"pve1","status":"online","maxmem":68719476736,"maxcpu":16,"mem":1}"#,
            r#"{"type":"node","node":"pve2","status":"offline"}"#,
            r#"{"type":"qemu","vmid":100,"node":"pve1","maxmem":2147483648,"maxcpu":2,"tags":"web;prod","status":"stopped"}"#,
            r#"{"type":"qemu","vmid":"101","node":"pve1","status":"unknown"}"#,
            r#"{"type":"lxc","vmid":200,"node":"pve1","maxmem":536870912,"maxcpu":1.0,"ha":{"x":1}}"#,
            r#"{"type":"storage","storage":"local","node":"pve1"}"#,
        ] {
            load.add_json(entry.as_bytes());
        }
        assert_eq!(load.nodes["pve1"].maxmem, Some(64 << 30));
        assert_eq!(load.nodes["pve1"].maxcpu, Some(16));
        assert_eq!(load.nodes["pve2"].status, "offline");
        assert_eq!(load.nodes["pve2"].maxmem, None);
        assert_eq!(load.guests.len(), 3);
        assert_eq!(load.guest(100).unwrap().tags, vec!["web", "prod"]);
        assert_eq!(load.guest(101).unwrap().maxmem, None, "listed before its broadcast");
        let ct = load.guest(200).unwrap();
        assert_eq!(
            (ct.maxmem, ct.maxcpu),
            (Some(512 << 20), Some(1)),
            "nested entries decode too"
        );
    }
}
