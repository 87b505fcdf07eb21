//! Scenarios: the cluster a simulator starts from. The default one makes the usual
//! playbook examples run as written; others are JSON files (see README).

use crate::state::*;
use crate::storage;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A file volume preloaded on a storage (ISOs, import images).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VolumeSpec {
    pub storage: String,
    pub volname: String,
    /// Bytes, or a size like `628M`.
    pub size: Value,
    /// For local storages: the node (default: every node the storage is on).
    #[serde(default)]
    pub node: Option<String>,
    /// For a backup archive (`dump/vzdump-qemu-<vmid>-….vma.zst`): the VM config it
    /// holds; a restore with `archive` brings it back with new disks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<BTreeMap<String, Value>>,
    /// Creation time (epoch seconds) as the storage lists it; default 1760000000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctime: Option<u64>,
    /// Hex digests of the file by algorithm (`md5`, `sha1`, `sha224`, `sha256`,
    /// `sha384`, `sha512`), which `download-url` compares a `checksum` with; an
    /// algorithm not given stands for content nobody knows (it matches no checksum).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checksums: BTreeMap<String, String>,
    /// A disk image's virtual size (bytes or `2G`) where it differs from `size`: the
    /// size of a disk imported from it with `import-from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_size: Option<Value>,
}

/// A snapshot of a guest: its config at the time (default: the guest's config).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub snaptime: Option<u64>,
    #[serde(default)]
    pub vmstate: bool,
    /// Config keys at snapshot time; absent = what a snapshot takes of the guest's
    /// current config (all but `description` and `unusedN`).
    #[serde(default)]
    pub config: Option<BTreeMap<String, Value>>,
}

/// A VM or container.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuestSpec {
    pub vmid: u32,
    pub node: String,
    #[serde(rename = "type", default = "qemu")]
    pub kind: GuestKind,
    #[serde(default)]
    pub running: bool,
    /// Config keys as PVE stores them (numbers or strings). Disk volumes referenced
    /// here are created on their storages with the given `size=`.
    pub config: BTreeMap<String, Value>,
    /// Snapshots, oldest first: each is the parent of the next; the last is the
    /// current config's `parent`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshots: Vec<SnapshotSpec>,
    /// How the VM's guest agent answers once started (delays, address families);
    /// clones get their source's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<GuestAgentSpec>,
}
fn qemu() -> GuestKind {
    GuestKind::Qemu
}

/// A cluster for pvesim to start from (`pvesim --scenario FILE`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Shown in the ticket response.
    #[serde(default = "default_name")]
    pub cluster_name: String,
    pub nodes: Vec<NodeDef>,
    pub storages: Vec<StorageDef>,
    /// Files preloaded on storages (ISOs, import images, backups); disks named in guest
    /// configs need no entry.
    #[serde(default)]
    pub volumes: Vec<VolumeSpec>,
    pub users: Vec<UserDef>,
    /// Custom roles: name -> privileges (the built-in roles always exist).
    #[serde(default)]
    pub roles: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub acls: Vec<AclDef>,
    /// `user.cfg`'s groups and their members.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupDef>,
    /// ACL entries of groups (`ugid` the group id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_acls: Vec<AclDef>,
    /// VMs and containers.
    #[serde(default)]
    pub guests: Vec<GuestSpec>,
    /// The datacenter's `mac_prefix` (default `BC:24:11`; empty: random MACs).
    #[serde(default)]
    pub mac_prefix: Option<String>,
    /// The datacenter's `tag-style` (e.g. `case-sensitive=1,ordering=config`): whether
    /// tags keep their case and order (default: lower case, sorted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag_style: Option<String>,
    /// Resource pools and their members.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<PoolDef>,
    /// HA resources (`vm:<vmid>`, requested state).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ha_resources: Vec<HaResource>,
    /// The HA stack disarmed cluster-wide (`{"mode": "ignore"}` or `{"mode": "freeze"}`);
    /// absent: armed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ha_disarm: Option<HaDisarm>,
    /// The pve-manager version the nodes run (`GET /version`, `GET /nodes/{node}/version`;
    /// default `9.1.5`) where a node does not give its own (`nodes[].pve_version`, and
    /// `nodes[].qemu_server` for the qemu-server that parses its VM config keys). What a version lacks is refused as that version refuses it
    /// (`import` content by `download-url`/`upload` before 8.3; only `.ova` in 8.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pve_version: Option<String>,
    /// The nodes' appliance index (`pveam available`): templates `POST
    /// /nodes/{node}/aplinfo` downloads from their `location`, checked by `sha512sum`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub appliances: Vec<Appliance>,
    /// Authentication realms beyond `pam` and `pve` (`domains.cfg`), e.g. an AD realm set
    /// `case-sensitive: false`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub realms: Vec<RealmDef>,
}
/// A version must start like `9.1.5` (digits before and after the first dot).
fn check_version(field: &str, version: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        version
            .split('.')
            .take(2)
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())),
        "{field} '{version}' is not like 9.1.5"
    );
    Ok(())
}

fn default_name() -> String {
    "pvesim".into()
}

pub const DEFAULT_TOKEN_SECRET: &str = "5f1c9e0a-7d3b-4c2e-9a61-0b8d4e2f7a13";
pub const DEFAULT_READONLY_SECRET: &str = "0a6b2d4c-3e8f-4a1b-9c7d-5e2f1a0b3c4d";
pub const DEFAULT_ROOT_PASSWORD: &str = "pvesim-root";

impl Scenario {
    pub fn from_file(p: &Path) -> anyhow::Result<Scenario> {
        let text = std::fs::read_to_string(p).map_err(|e| anyhow::anyhow!("reading scenario {}: {e}", p.display()))?;
        Scenario::from_json(&text).map_err(|e| anyhow::anyhow!("scenario {}: {e}", p.display()))
    }

    /// Parses a scenario; a value that does not fit the format (see [`Scenario::json_schema`])
    /// is refused with the path of the bad field, like `guests[2].config.memory: ...`.
    pub fn from_json(text: &str) -> anyhow::Result<Scenario> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let place = if path == "." { "the top level".to_string() } else { path };
            anyhow::anyhow!("{place}: {} (the format: pvesim --print-scenario-schema)", e.inner())
        })
    }

    /// The JSON Schema of the scenario format, derived from these types (published as
    /// `tests/pvesim/scenario.schema.json`; a test keeps that file current).
    pub fn json_schema() -> Value {
        serde_json::to_value(schemars::schema_for!(Scenario)).expect("a schema is JSON")
    }

    /// Two nodes, the usual storages, a Debian 13 template, a stopped VM, a container,
    /// and an automation user with two API tokens.
    pub fn default_cluster() -> Scenario {
        let text = include_str!("../scenarios/default.json");
        Scenario::from_json(text).expect("bundled default scenario is valid")
    }

    /// Replace the credentials the CLI/config may override.
    pub fn with_credentials(mut self, root_password: &str, token_secret: &str) -> Scenario {
        for u in &mut self.users {
            if u.userid == "root@pam" {
                u.password = Some(root_password.to_string());
            }
            if u.userid == "ansible@pve" {
                for t in &mut u.tokens {
                    if t.id == "automation" {
                        t.secret = token_secret.to_string();
                    }
                }
            }
        }
        self
    }

    /// Build the live cluster, creating the volumes guests reference.
    pub fn to_cluster(&self) -> anyhow::Result<Cluster> {
        let mut c = Cluster {
            cluster_name: self.cluster_name.clone(),
            nodes: self.nodes.clone(),
            storages: self.storages.clone(),
            users: self.users.clone(),
            acls: self.acls.clone(),
            groups: self.groups.clone(),
            group_acls: self.group_acls.clone(),
            roles: self.roles.clone(),
            guests: BTreeMap::new(),
            volumes: vec![],
            tasks: BTreeMap::new(),
            next_pid: 0,
            mac_prefix: self.mac_prefix.clone(),
            tag_style: self.tag_style.clone(),
            datacenter: BTreeMap::new(),
            pools: self.pools.clone(),
            ha_resources: self.ha_resources.clone(),
            ha_disarm: self.ha_disarm.clone(),
            pve_version: self
                .pve_version
                .clone()
                .unwrap_or_else(|| crate::state::DEFAULT_PVE_VERSION.into()),
            appliances: self.appliances.clone(),
            realms: self.realms.clone(),
            migration_locks: BTreeMap::new(),
        };
        check_version("pve_version", &c.pve_version)?;
        for n in &c.nodes {
            for (field, v) in [("pve_version", &n.pve_version), ("qemu_server", &n.qemu_server)] {
                if let Some(v) = v {
                    check_version(&format!("nodes[{}].{field}", n.name), v)?;
                }
            }
        }
        if let Some(style) = &self.tag_style {
            crate::datacenter::TagStyle::parse(style).map_err(|e| anyhow::anyhow!("tag_style '{style}': {e}"))?;
        }
        self.check_guest_references()?;
        self.check_storage_contents()?;
        for v in &self.volumes {
            load_volume(&mut c, v)?;
        }
        for g in &self.guests {
            load_guest(&mut c, g)?;
        }
        Ok(c)
    }

    /// Pools and HA resources may only name guests of the scenario; an HA resource's
    /// state and the disarm mode are those pve-ha-manager's schema allows.
    fn check_guest_references(&self) -> anyhow::Result<()> {
        for p in &self.pools {
            for id in &p.vms {
                anyhow::ensure!(
                    self.guests.iter().any(|g| g.vmid == *id),
                    "pool {} names unknown guest {id}",
                    p.poolid
                );
            }
        }
        for r in &self.ha_resources {
            let id = r
                .vmid()
                .ok_or_else(|| anyhow::anyhow!("HA resource '{}' is not vm:<vmid> or ct:<vmid>", r.sid))?;
            anyhow::ensure!(
                self.guests.iter().any(|g| g.vmid == id),
                "HA resource {} names unknown guest",
                r.sid
            );
            anyhow::ensure!(
                crate::ha::STATES.contains(&r.state.as_str()),
                "HA resource {} has state '{}', not one of {}",
                r.sid,
                r.state,
                crate::ha::STATES.join(", ")
            );
        }
        if let Some(d) = &self.ha_disarm {
            anyhow::ensure!(
                matches!(d.mode.as_str(), "freeze" | "ignore"),
                "ha_disarm mode '{}' is not freeze or ignore",
                d.mode
            );
        }
        Ok(())
    }

    /// Storages may only list content types their plugin has.
    fn check_storage_contents(&self) -> anyhow::Result<()> {
        for sd in &self.storages {
            // pve-storage refuses a content type the plugin does not have (block storages
            // hold guest disks only).
            let block = matches!(
                sd.kind.as_str(),
                "lvm" | "lvmthin" | "zfspool" | "rbd" | "zfs" | "iscsidirect"
            );
            if let Some(bad) = sd
                .content
                .iter()
                .find(|t| block && !matches!(t.as_str(), "images" | "rootdir" | "none"))
            {
                anyhow::bail!(
                    "storage '{}': storage type '{}' does not support content type '{bad}'",
                    sd.id,
                    sd.kind
                );
            }
        }
        Ok(())
    }
}

/// A preloaded volume, on its shared storage once or on each node that has it.
fn load_volume(c: &mut Cluster, v: &VolumeSpec) -> anyhow::Result<()> {
    let sd = c
        .storage(&v.storage)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("volume on unknown storage {}", v.storage))?;
    let size = bytes(&v.size);
    for alg in v.checksums.keys() {
        anyhow::ensure!(
            crate::content::digest::ALGORITHMS.contains(&alg.as_str()),
            "volume {}: unknown checksum algorithm '{alg}'",
            v.volname
        );
    }
    let nodes: Vec<Option<String>> = if sd.shared {
        vec![None]
    } else if let Some(n) = &v.node {
        vec![Some(n.clone())]
    } else {
        c.nodes
            .iter()
            .filter(|n| sd.on_node(&n.name))
            .map(|n| Some(n.name.clone()))
            .collect()
    };
    for node in nodes {
        c.volumes.push(Volume {
            storage: v.storage.clone(),
            node,
            volname: v.volname.clone(),
            size,
            format: storage::format_of(&v.volname),
            vmid: storage::owner_of(&v.volname),
            content: storage::content_of(&v.volname).into(),
            ctime: v.ctime.unwrap_or(1_760_000_000),
            backup_config: v.config.as_ref().map(config_strings),
            checksums: v.checksums.iter().map(|(k, d)| (k.clone(), d.to_lowercase())).collect(),
            virtual_size: v.virtual_size.as_ref().map(bytes),
        });
    }
    Ok(())
}

/// A guest with its snapshots, and the volumes its configs reference.
fn load_guest(c: &mut Cluster, g: &GuestSpec) -> anyhow::Result<()> {
    anyhow::ensure!(c.node(&g.node).is_some(), "guest {} on unknown node {}", g.vmid, g.node);
    let conf = guest_config(g);
    let snapshot_values = conf.snapshots.values().flat_map(|s| s.conf.clone());
    for (k, v) in conf.current.clone().into_iter().chain(snapshot_values) {
        if crate::qemu::disks::is_disk_key(&k) || k.starts_with("unused") || k == "rootfs" || k.starts_with("mp") {
            register_volume(c, &g.node, g.vmid, &v);
        }
    }
    c.guests.insert(
        g.vmid,
        Guest {
            vmid: g.vmid,
            node: g.node.clone(),
            kind: g.kind,
            conf,
            running: g.running,
            paused: false,
            started_ms: if g.running {
                Some(crate::util::now_ms().saturating_sub(3_600_000))
            } else {
                None
            },
            created_ms: 0,
            power_change: None,
            agent: g.agent.clone(),
        },
    );
    Ok(())
}

/// A guest's config: its current values, its snapshots chained by `parent` (a snapshot
/// without a config has what a snapshot takes of the current one).
fn guest_config(g: &GuestSpec) -> Config {
    let mut conf = Config {
        current: config_strings(&g.config),
        ..Config::default()
    };
    let mut parent: Option<String> = None;
    for (order, s) in (0u64..).zip(&g.snapshots) {
        let snap = Snapshot {
            description: s.description.clone(),
            snaptime: s.snaptime.unwrap_or(1_760_000_000),
            vmstate: s.vmstate,
            parent: parent.clone(),
            conf: s
                .config
                .as_ref()
                .map(config_strings)
                .unwrap_or_else(|| crate::qemu::snapshot::copy_config(&conf.current)),
            snapstate: None,
            order,
        };
        conf.snapshots.insert(s.name.clone(), snap);
        parent = Some(s.name.clone());
    }
    if let Some(p) = parent {
        conf.current.insert("parent".into(), p);
    }
    conf
}

/// A size given as bytes or as `628M`.
fn bytes(v: &Value) -> u64 {
    match v {
        Value::Number(n) => n.as_u64().unwrap_or(0),
        Value::String(s) => storage::parse_size(s).unwrap_or(0),
        _ => 0,
    }
}

/// Config values as the file holds them (numbers written as they are).
fn config_strings(m: &BTreeMap<String, Value>) -> BTreeMap<String, String> {
    m.iter()
        .map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), s)
        })
        .collect()
}

/// Create the volume a scenario disk value points at (if it is a managed volume).
fn register_volume(c: &mut Cluster, node: &str, vmid: u32, value: &str) {
    let first = value.split(',').next().unwrap_or("");
    let Some((sid, volname)) = first.split_once(':') else {
        return;
    };
    let Some(sd) = c.storage(sid).cloned() else { return };
    if c.find_volume(first, node).is_some() {
        return;
    }
    let size = value
        .split(',')
        .find_map(|p| p.strip_prefix("size="))
        .and_then(storage::parse_size)
        .unwrap_or(4 << 20);
    c.volumes.push(Volume {
        storage: sid.to_string(),
        node: if sd.shared { None } else { Some(node.to_string()) },
        volname: volname.to_string(),
        size,
        format: storage::format_of(volname),
        vmid: storage::owner_of(volname).or(Some(vmid)),
        content: storage::content_of(volname).into(),
        ctime: 1_760_000_000,
        backup_config: None,
        checksums: Default::default(),
        virtual_size: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_storages_hold_guest_disks_only() {
        let mut s = Scenario::default_cluster();
        s.storages[1].content.push("import".into());
        let e = s.to_cluster().unwrap_err().to_string();
        assert_eq!(
            e,
            "storage 'local-lvm': storage type 'lvmthin' does not support content type 'import'"
        );
    }

    #[test]
    fn default_scenario_builds() {
        let s = Scenario::default_cluster();
        let c = s.to_cluster().unwrap();
        assert_eq!(c.nodes.len(), 2);
        assert!(
            c.find_volume("vmdata:9000/base-9000-disk-0.qcow2", "pve2").is_some(),
            "shared volume visible from pve2"
        );
        assert!(c.find_volume("isos:iso/debian-13-netinst.iso", "pve1").is_some());
        assert!(c
            .find_volume("local:import/debian-13-genericcloud-amd64.qcow2", "pve2")
            .is_some());
        assert_eq!(c.guests[&9000].conf.current["template"], "1");
        assert_eq!(c.guests[&200].kind, GuestKind::Lxc);
    }
}

#[cfg(test)]
mod example_tests {
    use super::*;

    /// The example scenario in the README must load and build.
    #[test]
    fn example_scenario_loads() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/example-single-node.json");
        let s = Scenario::from_file(&p).unwrap();
        let c = s.to_cluster().unwrap();
        assert_eq!(c.nodes[0].name, "lab1");
        assert!(c.find_volume("tank:vm-500-disk-0", "lab1").is_some());
        assert!(c.guests[&500].running);
    }
}
