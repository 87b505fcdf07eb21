//! Config sub-keys a PVE release has that another lacks (`schema/newer-keys.json`):
//! qemu-server's additions after, or shortly before, the PVE 9.1 schema pvesim carries.
//!
//! The schema pvesim validates against is extended with their definitions
//! ([`extend_schema`]), so it describes the newest release modelled. Each node parses
//! with its own qemu-server: pveproxy hands a `/nodes/{node}/...` call to that node
//! before the handler validates its parameters (pve-manager `PVE/HTTPServer.pm`
//! `rest_handler`: `proxyto` before `$handler->handle`, which runs pve-common's
//! `PVE::JSONSchema::validate`). A node refuses what its qemu-server lacks, in the words
//! of pve-common's `parse_property_string` (`invalid key in comma-separated list
//! property: <key>`, under `invalid format - `), before the handler does anything
//! ([`refuse_missing`]).
//!
//! Which qemu-server a node runs ([`QemuServer`]): the scenario's `qemu_server` of the
//! node when given; else the one its pve-manager came with, where a key's `pve` is the
//! first pve-manager release after the qemu-server release that added it (both
//! `debian/changelog` dates). pve-manager only sets a floor (`debian/control`: 9.2.x
//! `Depends: qemu-server (>= 9.1.13)`), so a node at pve-manager 9.2.3 may well run
//! qemu-server 9.1.18 and take `host-tunnel`; `GET /version` tells neither.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::state::Cluster;

/// The table, embedded like the schema subset.
pub const NEWER_KEYS: &str = include_str!("../../schema/newer-keys.json");

/// The methods whose parameters (or, for GET config, returns) carry config keys.
const CONFIG_METHODS: &[(&str, &str, &str)] = &[
    ("/nodes/{node}/qemu", "POST", "parameters"),
    ("/nodes/{node}/qemu/{vmid}/config", "POST", "parameters"),
    ("/nodes/{node}/qemu/{vmid}/config", "PUT", "parameters"),
    ("/nodes/{node}/qemu/{vmid}/config", "GET", "returns"),
];

/// One sub-key and the releases that brought it.
#[derive(Debug, Clone, Deserialize)]
pub struct Added {
    /// The config key as the schema names it: `net[n]`, `cpu`, `agent`.
    pub config_key: String,
    /// The sub-key in the property string: `host-tunnel`.
    pub key: String,
    /// The qemu-server release that added it.
    pub qemu_server: String,
    /// The first pve-manager release that runs with it.
    pub pve: String,
    pub source: String,
    /// Its schema; absent when the PVE 9.1 schema already has it.
    #[serde(default)]
    pub definition: Option<Value>,
}

#[derive(Deserialize)]
struct Table {
    keys: Vec<Added>,
}

/// Every entry of `schema/newer-keys.json`.
pub fn added() -> &'static [Added] {
    static TABLE: OnceLock<Vec<Added>> = OnceLock::new();
    TABLE.get_or_init(|| {
        serde_json::from_str::<Table>(NEWER_KEYS)
            .expect("schema/newer-keys.json is valid")
            .keys
    })
}

/// `9.1.5` -> (9, 1, 5); a missing part counts as 0, a suffix (`9.2.6-1`) is ignored.
pub fn version_tuple(version: &str) -> (u32, u32, u32) {
    let mut parts = version.split(['.', '-']).map(|p| p.parse::<u32>().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    (next(), next(), next())
}

/// Adds each definition to the inline formats of the config calls in `schema` (the
/// subset's JSON array); a named format (`cpu`'s `pve-vm-cpu-conf`) has no object to add to.
pub fn extend_schema(schema: &mut Value) {
    let Some(nodes) = schema.as_array_mut() else {
        return;
    };
    for node in nodes {
        let path = node["path"].as_str().unwrap_or_default().to_string();
        for (p, method, part) in CONFIG_METHODS.iter().filter(|(p, ..)| *p == path) {
            debug_assert_eq!(*p, path);
            let props = match *part {
                "returns" => &mut node["info"][*method]["returns"]["properties"],
                _ => &mut node["info"][*method]["parameters"]["properties"],
            };
            for a in added() {
                let (Some(def), Some(format)) = (&a.definition, props[&a.config_key]["format"].as_object_mut()) else {
                    continue;
                };
                format.entry(a.key.clone()).or_insert_with(|| def.clone());
            }
        }
    }
}

/// The schema name of a config key: `net3` -> `net[n]`, `cpu` -> `cpu`.
fn schema_name(key: &str) -> String {
    let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
    if base.len() < key.len() && !base.is_empty() {
        format!("{base}[n]")
    } else {
        key.to_string()
    }
}

/// The sub-keys written in `value` (`key=` parts; a bare value is the default key's).
fn written_keys(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').filter_map(|part| part.split_once('=').map(|(k, _)| k))
}

/// The qemu-server a node parses config keys with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QemuServer<'a> {
    /// This qemu-server version (the scenario's node `qemu_server`).
    Version(&'a str),
    /// The one that came with this pve-manager version.
    CameWith(&'a str),
}

impl<'a> QemuServer<'a> {
    /// The qemu-server `node` of `c` runs.
    pub fn of(c: &'a Cluster, node: &str) -> QemuServer<'a> {
        match c.node(node).and_then(|n| n.qemu_server.as_deref()) {
            Some(v) => QemuServer::Version(v),
            None => QemuServer::CameWith(c.node_pve_version(node)),
        }
    }

    /// Whether it knows the sub-key `a`.
    pub fn has(self, a: &Added) -> bool {
        match self {
            QemuServer::Version(v) => version_tuple(v) >= version_tuple(&a.qemu_server),
            QemuServer::CameWith(pve) => version_tuple(pve) >= version_tuple(&a.pve),
        }
    }
}

/// The errors a node running `qemu` gives for `params`: one per config key whose value
/// names a sub-key that qemu-server lacks, as `parse_property_string` dies on it.
pub fn missing_at(qemu: QemuServer<'_>, params: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut errors = BTreeMap::new();
    for (param, value) in params {
        let name = schema_name(param);
        let lacking = added().iter().filter(|a| a.config_key == name && !qemu.has(a));
        let first = written_keys(value).find(|k| lacking.clone().any(|a| a.key == *k));
        if let Some(k) = first {
            errors.insert(
                param.clone(),
                format!("invalid format - invalid key in comma-separated list property: {k}\n"),
            );
        }
    }
    errors
}

/// A create's or config update's parameters as the node of the call (`{node}` of its
/// path) validates them: a 400 `Parameter verification failed.` naming each key with a
/// sub-key that node's qemu-server lacks.
pub fn refuse_missing(c: &Cluster, node: &str, params: &BTreeMap<String, String>) -> ApiResult<()> {
    let errors = missing_at(QemuServer::of(c, node), params);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::params(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn each_release_refuses_what_its_qemu_server_lacks() {
        let p = params(&[
            ("net0", "virtio,bridge=vmbr0,host-tunnel=0"),
            ("cpu", "x86-64-v2-AES,level=30"),
            ("agent", "1,freeze-fs=0"),
            ("net1", "virtio,bridge=vmbr0"),
        ]);
        let invalid = |k: &str| format!("invalid format - invalid key in comma-separated list property: {k}\n");
        let came_with = QemuServer::CameWith;
        let at_915 = missing_at(came_with("9.1.5"), &p);
        assert_eq!(at_915.len(), 3, "{at_915:?}");
        assert_eq!(at_915["net0"], invalid("host-tunnel"));
        assert_eq!(at_915["cpu"], invalid("level"));
        assert_eq!(at_915["agent"], invalid("freeze-fs"));
        let at_9116 = missing_at(came_with("9.1.16"), &p);
        assert_eq!(at_9116.keys().collect::<Vec<_>>(), ["net0"]);
        assert_eq!(missing_at(came_with("9.2.3"), &p).keys().collect::<Vec<_>>(), ["net0"]);
        assert!(missing_at(came_with("9.2.4"), &p).is_empty() && missing_at(came_with("9.2.11"), &p).is_empty());
        // The old spelling of freeze-fs was there all along.
        assert!(missing_at(came_with("9.1.5"), &params(&[("agent", "1,freeze-fs-on-backup=0")])).is_empty());
    }

    #[test]
    fn a_node_s_own_qemu_server_decides_whatever_its_pve_manager() {
        let p = params(&[("net0", "virtio,bridge=vmbr0,host-tunnel=0"), ("cpu", "host,level=30")]);
        let keys = |q| missing_at(q, &p).into_keys().collect::<Vec<_>>();
        // (qemu-server, the keys it refuses): host-tunnel came with 9.1.18, level with 9.1.14.
        let table: &[(&str, &[&str])] = &[
            ("9.1.13", &["cpu", "net0"]),
            ("9.1.14", &["net0"]),
            ("9.1.17", &["net0"]),
            ("9.1.18", &[]),
            ("9.2.6", &[]),
        ];
        for (qemu_server, refused) in table {
            assert_eq!(
                keys(QemuServer::Version(qemu_server)),
                *refused,
                "qemu-server {qemu_server}"
            );
        }
    }

    #[test]
    fn a_scenario_node_s_versions_default_to_the_cluster_s() {
        let mut c = crate::Scenario::default_cluster().to_cluster().unwrap();
        c.pve_version = "9.2.3".into();
        c.nodes[1].qemu_server = Some("9.1.18".into());
        assert_eq!(QemuServer::of(&c, "pve1"), QemuServer::CameWith("9.2.3"));
        assert_eq!(QemuServer::of(&c, "pve2"), QemuServer::Version("9.1.18"));
        c.nodes[0].pve_version = Some("9.2.6".into());
        assert_eq!(QemuServer::of(&c, "pve1"), QemuServer::CameWith("9.2.6"));
        assert_eq!(c.node_pve_version("pve2"), "9.2.3");
    }

    #[test]
    fn the_schema_gains_the_definitions_of_the_keys_it_lacks() {
        let mut v: Value = serde_json::from_str(crate::schema::EMBEDDED_SUBSET).unwrap();
        extend_schema(&mut v);
        let s = crate::schema::Schema::from_json(&v.to_string()).unwrap();
        for (path, method) in [
            ("/nodes/{node}/qemu", "POST"),
            ("/nodes/{node}/qemu/{vmid}/config", "PUT"),
        ] {
            let net = &s.method(path, method).unwrap()["parameters"]["properties"]["net[n]"]["format"];
            assert_eq!(net["host-tunnel"]["type"], "boolean", "{method} {path}");
        }
        assert_eq!(version_tuple("9.2.6-1"), (9, 2, 6));
        assert_eq!(version_tuple("9.2"), (9, 2, 0));
    }
}
