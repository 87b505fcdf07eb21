//! `pvesim import`: a twin of a real cluster. Reads it with GETs only (a token with the
//! role `PVEAuditor` suffices) and writes a scenario that `pvesim --scenario` serves:
//! nodes with their bridges and addresses, storages and their content, VMs and
//! containers with their configs and power state, templates, pools, HA resources.
//!
//! Never imported: secrets (a cloud-init `cipassword` becomes a placeholder; users and
//! tokens are not read), pending changes, snapshots, the config inside backup archives. Users,
//! roles and ACLs are the default scenario's (see the README), so the twin is driven
//! with the documented test credentials.

pub mod http;

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::scenario::{GuestSpec, Scenario, VolumeSpec};
use crate::state::{GuestKind, HaResource, IfaceAddress, NodeDef, PoolDef, StorageDef};
use http::{GetError, Reader};

/// Config keys never copied into the twin: what only the source can mean.
const DROPPED_KEYS: [&str; 2] = [
    // The config's checksum: the twin computes its own.
    "digest", // The snapshot the current state descends from; snapshots are not imported.
    "parent",
];

/// What a cloud-init password becomes in the twin: a password is set (PVE shows it
/// masked either way), but never the source's, which PVE does not reveal anyway.
pub const CIPASSWORD_PLACEHOLDER: &str = "pvesim-import-placeholder";

/// Reads the cluster behind `api` into a scenario.
pub fn import(api: &Reader, cluster_name: Option<String>) -> anyhow::Result<Scenario> {
    let defaults = Scenario::default_cluster();
    let pve_version = optional(api, "/version").and_then(|v| v["version"].as_str().map(String::from));
    let mut nodes = Vec::new();
    for n in list(api.get("/nodes")?) {
        let name = text(&n["node"]);
        let online = n["status"] == "online";
        let (bridges, addresses) = if online {
            network(api, &name)
        } else {
            Default::default()
        };
        let (node_pve, qemu_server) = if online {
            versions(api, &name)
        } else {
            Default::default()
        };
        nodes.push(NodeDef {
            name,
            online,
            bridges,
            maxcpu: n["maxcpu"].as_u64().unwrap_or(1) as u32,
            maxmem: n["maxmem"].as_u64().unwrap_or(0),
            addresses,
            pve_version: node_pve.filter(|v| Some(v) != pve_version.as_ref()),
            qemu_server,
        });
    }
    nodes.sort_by(|a, b| a.name.cmp(&b.name));
    let online: Vec<String> = nodes.iter().filter(|n| n.online).map(|n| n.name.clone()).collect();

    let (storages, volumes) = storages(api, &online)?;
    let guests = guests(api)?;
    let pools = optional(api, "/pools").map(|l| pools(api, l)).unwrap_or_default();
    let ha_resources = optional(api, "/cluster/ha/resources")
        .map(|l| {
            list(l)
                .iter()
                .map(|r| HaResource {
                    sid: text(&r["sid"]),
                    state: r["state"].as_str().unwrap_or("started").into(),
                    comment: r["comment"].as_str().map(String::from),
                })
                .collect()
        })
        .unwrap_or_default();
    let options = optional(api, "/cluster/options");
    let mac_prefix = options
        .as_ref()
        .and_then(|o| o["mac_prefix"].as_str().map(String::from));
    let tag_style = options.as_ref().and_then(|o| tag_style(&o["tag-style"]));
    let cluster_name = cluster_name
        .or_else(|| {
            optional(api, "/cluster/status").and_then(|s| {
                list(s)
                    .iter()
                    .find(|e| e["type"] == "cluster")
                    .map(|e| text(&e["name"]))
            })
        })
        .unwrap_or_else(|| "imported".into());
    Ok(Scenario {
        cluster_name,
        nodes,
        storages,
        volumes,
        users: defaults.users,
        roles: defaults.roles,
        acls: defaults.acls,
        groups: defaults.groups,
        group_acls: defaults.group_acls,
        guests,
        mac_prefix,
        tag_style,
        pools,
        ha_resources,
        ha_disarm: None,
        pve_version,
        appliances: Vec::new(),
        realms: Vec::new(),
    })
}

/// A node's pve-manager version (`GET /nodes/{node}/version`) and the qemu-server it
/// runs, which parses the VM config keys of calls to it (`GET /nodes/{node}/apt/versions`,
/// `Sys.Audit` on the node, which an auditor has; `None` when it is not answered). There
/// an installed package's version is `OldVersion`; `Version` is apt's candidate
/// (pve-manager `PVE/API2/APT.pm` `$assemble_pkginfo`).
fn versions(api: &Reader, node: &str) -> (Option<String>, Option<String>) {
    let pve = optional(api, &format!("/nodes/{node}/version")).and_then(|v| v["version"].as_str().map(String::from));
    let qemu_server = optional(api, &format!("/nodes/{node}/apt/versions")).and_then(|l| {
        list(l)
            .into_iter()
            .find(|p| p["Package"] == "qemu-server" && p["CurrentState"] == "Installed")
            .and_then(|p| p["OldVersion"].as_str().map(String::from))
    });
    (pve, qemu_server)
}

/// A node's bridges and the addresses configured on them.
fn network(api: &Reader, node: &str) -> (Vec<String>, BTreeMap<String, IfaceAddress>) {
    let mut bridges = Vec::new();
    let mut addresses = BTreeMap::new();
    let Some(ifaces) = optional(api, &format!("/nodes/{node}/network?type=any_bridge")) else {
        return (bridges, addresses);
    };
    for i in list(ifaces) {
        if !matches!(i["type"].as_str(), Some("bridge" | "OVSBridge")) {
            continue;
        }
        let name = text(&i["iface"]);
        if let Some(cidr) = i["cidr"].as_str() {
            addresses.insert(
                name.clone(),
                IfaceAddress {
                    cidr: cidr.into(),
                    gateway: i["gateway"].as_str().map(String::from),
                },
            );
        }
        bridges.push(name);
    }
    (bridges, addresses)
}

/// Storages as the nodes list them, and every volume on them.
fn storages(api: &Reader, online: &[String]) -> anyhow::Result<(Vec<StorageDef>, Vec<VolumeSpec>)> {
    let mut defs: Vec<StorageDef> = Vec::new();
    let mut on: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut inactive: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for node in online {
        for s in list(api.get(&format!("/nodes/{node}/storage"))?) {
            let id = text(&s["storage"]);
            // pve-storage's `storage_info` lists every storage of storage.cfg: `enabled: 0`
            // where it is disabled or not on this node, `active: 0` where it is on the node
            // but cannot be reached.
            if s["enabled"].as_u64() == Some(0) {
                continue;
            }
            if s["active"].as_u64() == Some(0) {
                inactive.entry(id.clone()).or_default().push(node.clone());
            }
            on.entry(id.clone()).or_default().push(node.clone());
            if defs.iter().any(|d| d.id == id) {
                continue;
            }
            defs.push(StorageDef {
                id,
                kind: text(&s["type"]),
                content: s["content"]
                    .as_str()
                    .unwrap_or("")
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(String::from)
                    .collect(),
                shared: s["shared"].as_u64() == Some(1),
                nodes: None,
                formats: None,
                total: s["total"].as_u64().filter(|t| *t > 0).unwrap_or(1 << 41),
                path: s["path"].as_str().map(String::from),
                disable: false,
                inactive_on: Vec::new(),
            });
        }
    }
    let mut volumes = Vec::new();
    for d in &mut defs {
        let nodes = on.get(&d.id).cloned().unwrap_or_default();
        if nodes.len() != online.len() {
            d.nodes = Some(nodes.clone());
        }
        d.inactive_on = inactive.get(&d.id).cloned().unwrap_or_default();
        // An inactive storage's content cannot be listed there.
        let nodes: Vec<String> = nodes.into_iter().filter(|n| !d.inactive_on.contains(n)).collect();
        // A shared storage holds the same volumes everywhere: read it once.
        let readers: Vec<&String> = if d.shared {
            nodes.iter().take(1).collect()
        } else {
            nodes.iter().collect()
        };
        for node in readers {
            for v in list(api.get(&format!("/nodes/{node}/storage/{}/content", d.id))?) {
                let volid = text(&v["volid"]);
                let Some((_, volname)) = volid.split_once(':') else {
                    continue;
                };
                volumes.push(VolumeSpec {
                    storage: d.id.clone(),
                    volname: volname.to_string(),
                    size: json!(v["size"].as_u64().unwrap_or(0)),
                    node: (!d.shared).then(|| node.clone()),
                    config: None,
                    ctime: v["ctime"].as_u64(),
                    checksums: Default::default(),
                    virtual_size: None,
                });
            }
        }
    }
    Ok((defs, volumes))
}

/// Every VM and container, with its current config and power state.
fn guests(api: &Reader) -> anyhow::Result<Vec<GuestSpec>> {
    let mut out = Vec::new();
    for r in list(api.get("/cluster/resources?type=vm")?) {
        let (Some(vmid), Some(node)) = (r["vmid"].as_u64(), r["node"].as_str()) else {
            continue;
        };
        let kind = match r["type"].as_str() {
            Some("qemu") => GuestKind::Qemu,
            Some("lxc") => GuestKind::Lxc,
            _ => continue,
        };
        let base = format!("/nodes/{node}/{}/{vmid}", r["type"].as_str().unwrap_or_default());
        let path = format!("{base}/config");
        let config: BTreeMap<String, Value> = match api.get(&path) {
            Ok(Value::Object(map)) => map
                .into_iter()
                .filter(|(k, _)| !DROPPED_KEYS.contains(&k.as_str()))
                .map(|(k, v)| {
                    if k == "cipassword" {
                        (k, json!(CIPASSWORD_PLACEHOLDER))
                    } else {
                        (k, v)
                    }
                })
                .collect(),
            Ok(other) => anyhow::bail!("GET {path}: not a config: {other}"),
            // A node that is down: its guests cannot be read.
            Err(e) if e.status == Some(595) => continue,
            Err(e) => return Err(e.into()),
        };
        // The guest's own status, not the cluster listing's, which may lag behind it.
        let running = api.get(&format!("{base}/status/current"))?["status"] == "running";
        out.push(GuestSpec {
            vmid: vmid as u32,
            node: node.into(),
            kind,
            running,
            config,
            snapshots: vec![],
            agent: None,
        });
    }
    out.sort_by_key(|g| g.vmid);
    Ok(out)
}

fn pools(api: &Reader, index: Value) -> Vec<PoolDef> {
    let mut out = Vec::new();
    for p in list(index) {
        let poolid = text(&p["poolid"]);
        let detail = optional(api, &format!("/pools/{poolid}")).unwrap_or(Value::Null);
        let members = list(detail["members"].clone());
        out.push(PoolDef {
            comment: p["comment"].as_str().or(detail["comment"].as_str()).map(String::from),
            vms: members
                .iter()
                .filter(|m| m["type"] != "storage")
                .filter_map(|m| m["vmid"].as_u64().map(|v| v as u32))
                .collect(),
            storage: members
                .iter()
                .filter(|m| m["type"] == "storage")
                .map(|m| text(&m["storage"]))
                .collect(),
            poolid,
        });
    }
    out
}

/// A GET whose absence is not fatal: an endpoint the cluster does not have (or the
/// token may not read) leaves that part of the twin at its default, with a warning.
/// `tag-style` as `/cluster/options` answers it (an object) back to its property string,
/// keeping only what changes stored tags.
fn tag_style(v: &Value) -> Option<String> {
    let parts: Vec<String> = ["case-sensitive", "ordering"]
        .iter()
        .filter_map(|k| {
            v.get(*k)
                .map(|x| format!("{k}={}", x.as_str().map(String::from).unwrap_or_else(|| x.to_string())))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(","))
}

fn optional(api: &Reader, path: &str) -> Option<Value> {
    match api.get(path) {
        Ok(v) => Some(v),
        Err(GetError {
            status: Some(501 | 404),
            ..
        }) => None,
        Err(e) => {
            // `pvesim import` is a command: its warnings go to the terminal.
            #[allow(clippy::print_stderr)]
            {
                eprintln!("pvesim import: warning: {e}; the twin has none of it");
            }
            None
        }
    }
}

fn list(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a,
        _ => vec![],
    }
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

impl std::error::Error for GetError {}
