//! The simulated cluster: everything that `/etc/pve` and the storages would hold, plus
//! runtime facts (power state, tasks). Serialisable so `--state` can persist it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeDef {
    pub name: String,
    #[serde(default = "yes")]
    pub online: bool,
    #[serde(default)]
    pub bridges: Vec<String>,
    #[serde(default = "default_cpus")]
    pub maxcpu: u32,
    #[serde(default = "default_node_mem")]
    pub maxmem: u64,
    /// Addresses configured on the node's interfaces (`/etc/network/interfaces`):
    /// interface name (usually a bridge) -> address.
    #[serde(default)]
    pub addresses: BTreeMap<String, IfaceAddress>,
    /// The pve-manager version this node runs (`GET /nodes/{node}/version`, and `GET
    /// /version` when it answers); default: the scenario's `pve_version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pve_version: Option<String>,
    /// The qemu-server version this node runs, which parses the VM config keys of every
    /// call proxied to it; default: the one its pve-manager came with (pve-manager does
    /// not pin it: a partial upgrade gives a newer one, see `qemu::versions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qemu_server: Option<String>,
}

/// An IPv4 address of a node interface, as `/nodes/{node}/network` reports it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IfaceAddress {
    /// `192.0.2.11/24`.
    pub cidr: String,
    #[serde(default)]
    pub gateway: Option<String>,
}
fn default_cpus() -> u32 {
    16
}
fn default_node_mem() -> u64 {
    64 << 30
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StorageDef {
    pub id: String,
    /// PVE plugin type: dir, nfs, cifs, lvmthin, lvm, zfspool, rbd.
    #[serde(rename = "type")]
    pub kind: String,
    pub content: Vec<String>,
    #[serde(default)]
    pub shared: bool,
    /// Nodes the storage is available on (`None` = all).
    #[serde(default)]
    pub nodes: Option<Vec<String>>,
    /// Allowed image formats; default by type (file storages: qcow2,raw,vmdk; else raw).
    #[serde(default)]
    pub formats: Option<Vec<String>>,
    #[serde(default = "default_storage_size")]
    pub total: u64,
    /// Mount point of a file storage (default: `/var/lib/vz` for `local`, `/mnt/pve/<id>`
    /// for network file systems, else `/srv/<id>`); task logs name files below it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// storage.cfg's `disable 1`: left out of `/cluster/resources`, `enabled: 0` in a
    /// node's storage listing, and every allocation fails `storage '<id>' is disabled`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable: bool,
    /// Nodes where the storage is enabled but not active (an NFS server the node cannot
    /// reach: the plugin's `check_connection` fails): `status: unknown` without sizes in
    /// `/cluster/resources`, `active: 0` in the node's listing, and an allocation there
    /// fails `storage '<id>' is not online`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inactive_on: Vec<String>,
}
fn default_storage_size() -> u64 {
    2 << 40
}

impl StorageDef {
    /// File-based storages name volumes `<vmid>/vm-<vmid>-disk-<n>.<fmt>`.
    pub fn is_file(&self) -> bool {
        matches!(
            self.kind.as_str(),
            "dir" | "nfs" | "cifs" | "glusterfs" | "cephfs" | "btrfs"
        )
    }
    pub fn formats(&self) -> Vec<String> {
        self.formats.clone().unwrap_or_else(|| {
            if self.is_file() {
                vec!["qcow2".into(), "raw".into(), "vmdk".into()]
            } else {
                vec!["raw".into()]
            }
        })
    }
    pub fn default_format(&self) -> String {
        let f = self.formats();
        if f.iter().any(|x| x == "qcow2") {
            "qcow2".into()
        } else {
            f[0].clone()
        }
    }
    pub fn on_node(&self, node: &str) -> bool {
        self.nodes.as_ref().is_none_or(|n| n.iter().any(|x| x == node))
    }
    /// pve-storage's `storage_check_enabled` for `node`: not disabled, and on the node.
    pub fn enabled_on(&self, node: &str) -> bool {
        !self.disable && self.on_node(node)
    }
    /// Enabled on `node` and its connection there works (`activate_storage` succeeds).
    pub fn active_on(&self, node: &str) -> bool {
        self.enabled_on(node) && !self.inactive_on.iter().any(|n| n == node)
    }
    /// pve-storage's `activate_storage` on `node`, as `vdisk_alloc` calls it first: the
    /// error PVE dies with when the storage cannot take a volume there.
    pub fn activate(&self, node: &str) -> Result<(), String> {
        if self.disable {
            return Err(format!("storage '{}' is disabled", self.id));
        }
        if !self.on_node(node) {
            return Err(format!("storage '{}' is not available on node '{node}'", self.id));
        }
        if !self.active_on(node) {
            return Err(format!("storage '{}' is not online", self.id));
        }
        Ok(())
    }
    pub fn has_content(&self, c: &str) -> bool {
        self.content.iter().any(|x| x == c)
    }
    /// The storage's `path` (only file storages have one).
    pub fn mount_path(&self) -> Option<String> {
        if !self.is_file() {
            return None;
        }
        Some(self.path.clone().unwrap_or_else(|| match self.kind.as_str() {
            _ if self.id == "local" => "/var/lib/vz".to_string(),
            "nfs" | "cifs" | "glusterfs" | "cephfs" => format!("/mnt/pve/{}", self.id),
            _ => format!("/srv/{}", self.id),
        }))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Volume {
    pub storage: String,
    /// Owning node for local storages; `None` on shared storages.
    #[serde(default)]
    pub node: Option<String>,
    pub volname: String,
    pub size: u64,
    #[serde(default)]
    pub format: String,
    #[serde(default)]
    pub vmid: Option<u32>,
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub ctime: u64,
    /// For a backup archive (`content: backup`): the VM config it holds, which a
    /// restore (`POST /nodes/{node}/qemu` with `archive`) brings back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup_config: Option<BTreeMap<String, String>>,
    /// Hex digests of the file's bytes by algorithm (`md5` … `sha512`), for files that
    /// came through `download-url` or `upload` (the bytes themselves are not kept).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checksums: BTreeMap<String, String>,
    /// A disk image's virtual size (qcow2 header), when it differs from the file size:
    /// what `import-from` gives the new disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_size: Option<u64>,
}

impl Volume {
    pub fn volid(&self) -> String {
        format!("{}:{}", self.storage, self.volname)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenDef {
    pub id: String,
    pub secret: String,
    #[serde(default = "yes")]
    pub privsep: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserDef {
    pub userid: String,
    #[serde(default)]
    pub password: Option<String>,
    #[serde(default = "yes")]
    pub enable: bool,
    /// Base32 TOTP secret; when set, password login answers `NeedTFA`.
    #[serde(default)]
    pub totp_secret: Option<String>,
    #[serde(default)]
    pub tokens: Vec<TokenDef>,
}

/// An authentication realm of `domains.cfg` beyond the built-in `pam` and `pve` (which are
/// always there, case-sensitive). Only what decides the user name PVE logs in is kept;
/// the password is the user's in the scenario (no LDAP/AD server is asked).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RealmDef {
    /// The realm's id, the part of a user id after `@` (e.g. `ad`).
    pub realm: String,
    /// The plugin type (`ad`, `ldap`, `openid`, …), shown as is.
    #[serde(rename = "type")]
    pub kind: String,
    /// `case-sensitive` (LDAP and AD realms; PVE's default 1): with `false`, a login name
    /// is looked up in `user.cfg` ignoring case and PVE continues with `user.cfg`'s
    /// spelling (pve-access-control `lookup_username`).
    #[serde(rename = "case-sensitive", default = "yes")]
    pub case_sensitive: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AclDef {
    pub path: String,
    /// `user@realm` or a token id `user@realm!token`.
    pub ugid: String,
    pub roles: Vec<String>,
    #[serde(default = "yes")]
    pub propagate: bool,
}

/// A group of `user.cfg` (`group:<id>:<users>:<comment>:`): membership is the group's.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupDef {
    pub groupid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The user ids in the group.
    #[serde(default)]
    pub users: Vec<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GuestKind {
    Qemu,
    Lxc,
}

/// A guest config file: current values, the `[PENDING]` section and pending deletions
/// (value = forced). Values are kept as the strings the file would hold.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Config {
    pub current: BTreeMap<String, String>,
    #[serde(default)]
    pub pending: BTreeMap<String, String>,
    #[serde(default)]
    pub delete: BTreeMap<String, bool>,
    /// Snapshot sections of the config file, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub snapshots: BTreeMap<String, Snapshot>,
    /// The `[special:cloudinit]` section: what the cloud-init drive still holds of the
    /// keys changed since it was generated (see `qemu::cloudinit`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cloudinit: BTreeMap<String, String>,
}

/// A `[snapname]` section: the config as it was, plus the snapshot's own keys.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Snapshot {
    #[serde(default)]
    pub description: String,
    /// Epoch seconds.
    #[serde(default)]
    pub snaptime: u64,
    /// Whether the RAM was saved (`vmstate`).
    #[serde(default)]
    pub vmstate: bool,
    #[serde(default)]
    pub parent: Option<String>,
    /// The config keys at snapshot time.
    #[serde(default)]
    pub conf: BTreeMap<String, String>,
    /// `prepare` while the snapshot is being made, `delete` while it is being removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapstate: Option<String>,
    /// Creation order among the VM's snapshots: ZFS lists a volume's snapshots by
    /// creation, and `snaptime` has seconds only.
    #[serde(default)]
    pub order: u64,
}

/// An appliance template of the node's appliance index (`pveam`'s `aplinfo.dat`): what
/// `GET /nodes/{node}/aplinfo` lists and `POST` downloads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Appliance {
    /// e.g. `debian-13-standard`.
    pub package: String,
    pub version: String,
    /// e.g. `debian`.
    pub os: String,
    /// Where the template is fetched from (absolute URL); its last segment is the
    /// template's name (`debian-13-standard_13.1-2_amd64.tar.zst`).
    pub location: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha512sum: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md5sum: Option<String>,
    /// `lxc` (default) or `openvz`.
    #[serde(default = "lxc", rename = "type")]
    pub kind: String,
    #[serde(default = "system")]
    pub section: String,
    #[serde(default = "amd64")]
    pub architecture: String,
    #[serde(default = "linuxcontainers")]
    pub infopage: String,
    /// The first line of the description.
    #[serde(default)]
    pub headline: String,
}
fn lxc() -> String {
    "lxc".into()
}
fn system() -> String {
    "system".into()
}
fn amd64() -> String {
    "amd64".into()
}
fn linuxcontainers() -> String {
    "https://linuxcontainers.org".into()
}

impl Appliance {
    /// The template's file name: the location's last segment.
    pub fn template(&self) -> String {
        self.location.rsplit('/').next().unwrap_or("").to_string()
    }
}

/// A resource pool (`user.cfg` `pool:` line): its members.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolDef {
    pub poolid: String,
    #[serde(default)]
    pub comment: Option<String>,
    /// Guests in the pool.
    #[serde(default)]
    pub vms: Vec<u32>,
    /// Storages in the pool.
    #[serde(default)]
    pub storage: Vec<String>,
}

/// An HA resource (`/etc/pve/ha/resources.cfg`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HaResource {
    /// `vm:<vmid>` (or `ct:<vmid>`).
    pub sid: String,
    /// Requested state: started, stopped, disabled, ignored.
    #[serde(default = "ha_started")]
    pub state: String,
    #[serde(default)]
    pub comment: Option<String>,
}
fn ha_started() -> String {
    "started".into()
}

impl HaResource {
    pub fn vmid(&self) -> Option<u32> {
        self.sid.split_once(':').and_then(|(_, id)| id.parse().ok())
    }
}

/// The HA stack disarmed cluster-wide (`ha-manager crm-command disarm-ha <mode>`,
/// pve-ha-manager 5.1.3 and later): the manager status' `disarm`, until `arm-ha`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HaDisarm {
    /// `freeze`: the HA stack holds every resource as it is; `ignore`: resources are
    /// not HA-managed while disarmed (power calls go straight to qemu-server).
    pub mode: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Guest {
    pub vmid: u32,
    pub node: String,
    #[serde(rename = "type")]
    pub kind: GuestKind,
    pub conf: Config,
    #[serde(default)]
    pub running: bool,
    #[serde(default)]
    pub paused: bool,
    /// Epoch milliseconds of the last start (for uptime and agent readiness).
    #[serde(default)]
    pub started_ms: Option<u64>,
    /// Epoch milliseconds of creation (for the `/cluster/resources` lag).
    #[serde(default)]
    pub created_ms: u64,
    /// Last power change, for the status-broadcast lag of `/cluster/resources`.
    #[serde(default)]
    pub power_change: Option<PowerChange>,
    /// How the guest's agent behaves (scenario); `None`: the simulator's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<GuestAgentSpec>,
}

/// The guest side of a VM's QEMU guest agent, as a scenario describes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuestAgentSpec {
    /// Milliseconds after a start until the agent answers (default: `--agent-delay-ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// Milliseconds after the agent answers until the guest has its usable addresses;
    /// before, only link-local ones (and APIPA 169.254/16 on Windows guests). Default:
    /// `--address-delay-ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_delay_ms: Option<u64>,
    /// Whether the guest's DHCP gives it an IPv4 address (default true); a static
    /// `ip=` in `ipconfigN` applies either way.
    #[serde(default = "yes")]
    pub ipv4: bool,
    /// Whether the guest gets a global IPv6 address (SLAAC) besides its link-local one
    /// (default false); a static `ip6=` in `ipconfigN` applies either way.
    #[serde(default)]
    pub ipv6: bool,
}

impl Default for GuestAgentSpec {
    fn default() -> Self {
        GuestAgentSpec {
            delay_ms: None,
            address_delay_ms: None,
            ipv4: true,
            ipv6: false,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct PowerChange {
    pub was_running: bool,
    pub at_ms: u64,
}

impl Guest {
    /// Record a start or stop (only real changes count).
    pub fn set_running(&mut self, running: bool, now_ms: u64) {
        if self.running != running {
            self.power_change = Some(PowerChange {
                was_running: self.running,
                at_ms: now_ms,
            });
        }
        self.running = running;
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Task {
    pub upid: String,
    pub node: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    pub user: String,
    pub pid: u32,
    pub pstart: u64,
    pub starttime: u64,
    pub running: bool,
    #[serde(default)]
    pub exitstatus: Option<String>,
    /// When the task stopped (epoch seconds).
    #[serde(default)]
    pub endtime: Option<u64>,
    #[serde(default)]
    pub log: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cluster {
    #[serde(default = "default_cluster_name")]
    pub cluster_name: String,
    pub nodes: Vec<NodeDef>,
    pub storages: Vec<StorageDef>,
    pub users: Vec<UserDef>,
    #[serde(default)]
    pub acls: Vec<AclDef>,
    /// `user.cfg`'s groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupDef>,
    /// ACL entries of groups (`ugid` the group id), beside the users' and tokens' in `acls`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_acls: Vec<AclDef>,
    /// Custom roles (name -> privileges), in addition to PVE's built-in ones.
    #[serde(default)]
    pub roles: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub guests: BTreeMap<u32, Guest>,
    #[serde(default)]
    pub volumes: Vec<Volume>,
    #[serde(default)]
    pub tasks: BTreeMap<String, Task>,
    #[serde(default)]
    pub next_pid: u32,
    /// datacenter.cfg `mac_prefix` (default `BC:24:11`).
    #[serde(default)]
    pub mac_prefix: Option<String>,
    /// datacenter.cfg `tag-style` as set (how tags are de-duplicated and sorted).
    #[serde(default)]
    pub tag_style: Option<String>,
    /// The other datacenter.cfg options set through `PUT /cluster/options`, as given.
    #[serde(default)]
    pub datacenter: BTreeMap<String, String>,
    #[serde(default)]
    pub pools: Vec<PoolDef>,
    #[serde(default)]
    pub ha_resources: Vec<HaResource>,
    /// The HA stack disarmed, and how (`None`: armed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ha_disarm: Option<HaDisarm>,
    /// The pve-manager version the cluster runs (`GET /version`), e.g. `9.1.5`.
    #[serde(default = "default_pve_version")]
    pub pve_version: String,
    /// The nodes' appliance index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub appliances: Vec<Appliance>,
    /// `domains.cfg`'s realms beyond `pam` and `pve`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub realms: Vec<RealmDef>,
    /// The guest migration locks (`/var/lock/pve-manager/pve-migrate-<vmid>`) by vmid:
    /// the UPID of the task that holds it or waits for it last; free once that task ended.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub migration_locks: BTreeMap<u32, String>,
}
pub const DEFAULT_PVE_VERSION: &str = "9.1.5";
fn default_pve_version() -> String {
    DEFAULT_PVE_VERSION.into()
}
fn default_cluster_name() -> String {
    "pvesim".into()
}

impl Cluster {
    pub fn node(&self, name: &str) -> Option<&NodeDef> {
        self.nodes.iter().find(|n| n.name == name)
    }
    pub fn storage(&self, id: &str) -> Option<&StorageDef> {
        self.storages.iter().find(|s| s.id == id)
    }
    pub fn user(&self, userid: &str) -> Option<&UserDef> {
        self.users.iter().find(|u| u.userid == userid)
    }
    /// pve-access-control `lookup_username`: in a realm set `case-sensitive: 0`, the
    /// `user.cfg` spelling of a login name that matches one user ignoring case (several:
    /// PVE's "ambiguous case insensitive match" refusal); otherwise the name as given.
    pub fn lookup_username(&self, username: &str) -> Result<String, String> {
        let realm = username.rsplit_once('@').map(|(_, r)| r).unwrap_or("");
        let insensitive = self.realms.iter().any(|r| r.realm == realm && !r.case_sensitive);
        if !insensitive {
            return Ok(username.to_string());
        }
        let wanted = username.to_lowercase();
        let matches: Vec<&UserDef> = self
            .users
            .iter()
            .filter(|u| u.userid.to_lowercase() == wanted)
            .collect();
        match matches.as_slice() {
            [] => Ok(username.to_string()),
            [one] => Ok(one.userid.clone()),
            _ => Err(format!(
                "ambiguous case insensitive match of username '{username}', cannot safely grant access!"
            )),
        }
    }
    pub fn group(&self, groupid: &str) -> Option<&GroupDef> {
        self.groups.iter().find(|g| g.groupid == groupid)
    }
    /// The groups a user is a member of, sorted.
    pub fn groups_of(&self, userid: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .groups
            .iter()
            .filter(|g| g.users.iter().any(|u| u == userid))
            .map(|g| g.groupid.clone())
            .collect();
        out.sort();
        out
    }
    pub fn pool(&self, poolid: &str) -> Option<&PoolDef> {
        self.pools.iter().find(|p| p.poolid == poolid)
    }
    /// The pool a guest belongs to (a guest is in at most one pool).
    pub fn pool_of(&self, vmid: u32) -> Option<&PoolDef> {
        self.pools.iter().find(|p| p.vms.contains(&vmid))
    }
    /// The HA resource entry of a guest, whatever its state (`service_is_configured`);
    /// whether HA manages the guest is `qemu::ha::managed`.
    pub fn ha_resource(&self, vmid: u32) -> Option<&HaResource> {
        self.ha_resources.iter().find(|r| r.vmid() == Some(vmid))
    }

    /// The node a volume of `storage` lives on when used from `node`.
    pub fn vol_node(&self, storage: &str, node: &str) -> Option<String> {
        match self.storage(storage) {
            Some(s) if s.shared => None,
            _ => Some(node.to_string()),
        }
    }

    pub fn find_volume(&self, volid: &str, node: &str) -> Option<&Volume> {
        let (sid, name) = volid.split_once(':')?;
        let vn = self.vol_node(sid, node);
        self.volumes
            .iter()
            .find(|v| v.storage == sid && v.volname == name && v.node == vn)
    }

    pub fn remove_volume(&mut self, volid: &str, node: &str) -> bool {
        let Some((sid, name)) = volid.split_once(':') else {
            return false;
        };
        let vn = self.vol_node(sid, node);
        let before = self.volumes.len();
        self.volumes
            .retain(|v| !(v.storage == sid && v.volname == name && v.node == vn));
        before != self.volumes.len()
    }

    /// The pve-manager version `node` runs: its own, else the scenario's.
    pub fn node_pve_version(&self, node: &str) -> &str {
        self.node(node)
            .and_then(|n| n.pve_version.as_deref())
            .unwrap_or(&self.pve_version)
    }

    /// Whether the cluster runs at least PVE `major.minor`.
    pub fn pve_at_least(&self, major: u32, minor: u32) -> bool {
        let mut parts = self
            .pve_version
            .split(['.', '-'])
            .map(|p| p.parse::<u32>().unwrap_or(0));
        let (ma, mi) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        (ma, mi) >= (major, minor)
    }

    /// Mark tasks that were running when the state was saved as ended abnormally.
    pub fn settle_tasks(&mut self) {
        for t in self.tasks.values_mut() {
            if t.running {
                t.running = false;
                t.exitstatus = Some("unexpected status".into());
            }
        }
    }
}
