//! The one mapping from a planned write to what PVE checks for it, written from
//! qemu-server's `PVE/API2/Qemu.pm`: per endpoint, per config key and value, storage
//! space on every storage a volume is allocated on, `SDN.Use` on each bridge (or on the
//! VLAN a tagged NIC uses), `VM.Allocate` on the pool. The pre-write check, the least-privilege guide's
//! least-privilege table and the tests all read it.

use super::keys::{self, KeyNeed};

/// One write a task plans, with what PVE looks at to allow it.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// `POST /nodes/{node}/qemu`: the config given (drive values as sent, `storage:size`
    /// for new volumes), the pool, the `storage` parameter, start after create.
    Create {
        /// The new VM's id.
        vmid: u32,
        /// The pool it is created in, if any.
        pool: Option<String>,
        /// The `storage` parameter (a restore's target storage), if given.
        storage: Option<String>,
        /// Whether it is started after the create.
        start: bool,
        /// Whether it is put under HA (`ha-managed`).
        ha_managed: bool,
        /// The config keys sent, with their values as sent.
        config: Vec<(String, String)>,
    },
    /// `POST .../clone` of `source` (its config: disks and NICs) to `vmid`; `storage` is
    /// the target storage of a full clone.
    Clone {
        /// The VM cloned from.
        source: u32,
        /// The clone's id.
        vmid: u32,
        /// The pool the clone goes into, if any.
        pool: Option<String>,
        /// The target storage of a full clone, if given.
        storage: Option<String>,
        /// The source's config (its disks and NICs are what PVE checks).
        source_config: Vec<(String, String)>,
    },
    /// `POST/PUT .../config`: keys set (new value, value replaced) and deleted (the value
    /// deleted).
    Config {
        /// The VM configured.
        vmid: u32,
        /// Keys set: (key, new value, value replaced if any).
        set: Vec<(String, String, Option<String>)>,
        /// Keys deleted: (key, the value deleted).
        delete: Vec<(String, String)>,
    },
    /// `PUT .../resize` of a volume on `storage`.
    Resize {
        /// The VM whose volume grows.
        vmid: u32,
        /// The storage the volume is on.
        storage: String,
    },
    /// `POST .../move_disk` to `storage`.
    MoveDisk {
        /// The VM whose disk moves.
        vmid: u32,
        /// The storage it moves to.
        storage: String,
    },
    /// `POST .../move_disk` of a volume on `storage` to VM `target`.
    Reassign {
        /// The VM the volume leaves.
        vmid: u32,
        /// The VM the volume goes to.
        target: u32,
        /// The storage the volume is on.
        storage: String,
    },
    /// `PUT .../unlink`.
    Unlink {
        /// The VM whose volume is unlinked.
        vmid: u32,
    },
    /// `POST .../status/<call>` (start, stop, shutdown, reboot, reset, suspend, resume).
    Power {
        /// The VM whose power state changes.
        vmid: u32,
    },
    /// `POST .../template`.
    Template {
        /// The VM made a template.
        vmid: u32,
    },
    /// `POST .../migrate`, its disks onto `targetstorage` when given.
    Migrate {
        /// The VM migrated.
        vmid: u32,
        /// The storage its disks move to, if given.
        targetstorage: Option<String>,
    },
    /// `DELETE /nodes/{node}/qemu/{vmid}`.
    Destroy {
        /// The VM destroyed.
        vmid: u32,
    },
    /// `PUT /pools` adding `vmid` to pool `to` (moving it out of `from`).
    PoolMove {
        /// The VM moved.
        vmid: u32,
        /// The pool it leaves, if any.
        from: Option<String>,
        /// The pool it joins.
        to: String,
    },
    /// `POST /nodes/{node}/storage/{storage}/upload` of an ISO, container template or
    /// import image (pve-storage's Status.pm); a file of the name is overwritten, so a
    /// replacing upload needs nothing more.
    UploadFile {
        /// The storage the file goes to.
        storage: String,
    },
    /// `POST /nodes/{node}/storage/{storage}/download-url`: the node fetches a URL.
    DownloadUrl {
        /// The node that fetches the URL.
        node: String,
        /// The storage the file goes to.
        storage: String,
    },
    /// `POST /nodes/{node}/aplinfo`: an appliance template from PVE's index.
    Appliance {
        /// The storage the template goes to.
        storage: String,
    },
    /// `DELETE /nodes/{node}/storage/{storage}/content/{volume}` of a file that is no
    /// backup (pve-storage's Content.pm).
    RemoveFile {
        /// The storage the file is removed from.
        storage: String,
    },
    /// `POST .../snapshot` or `DELETE .../snapshot/{snapname}` (qemu-server `snapshot`,
    /// `delsnapshot`).
    Snapshot {
        /// The VM.
        vmid: u32,
    },
    /// `POST .../snapshot/{snapname}/rollback`, starting the VM after it with `start`
    /// (qemu-server `rollback`).
    Rollback {
        /// The VM rolled back.
        vmid: u32,
        /// Whether `start` is sent.
        start: bool,
    },
    /// `PUT /access/acl` (pve-access-control's ACL.pm `update_acl`): one role given to or
    /// taken from a user, group or token on `path`.
    Acl {
        /// The ACL path.
        path: String,
        /// The role.
        role: String,
        /// The role's privileges (`GET /access/roles`).
        role_privileges: Vec<String>,
        /// Whether the entry propagates.
        propagate: bool,
        /// Whether the role is taken away.
        delete: bool,
    },
    /// `POST /pools`, `PUT /pools` with `comment`, `DELETE /pools`: `Pool.Allocate` on
    /// the pool (pve-manager's Pool.pm).
    Pool {
        /// The pool.
        poolid: String,
        /// What is done to it, in the task's words: `create`, `comment`, `remove`.
        what: &'static str,
    },
    /// `PUT /pools` adding a storage to or removing it from `poolid`.
    PoolStorage {
        /// The pool.
        poolid: String,
        /// The storage.
        storage: String,
    },
}

/// One thing PVE will check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// What asks for it, in the task's words: `scsi1`, `create`, `start`.
    pub what: String,
    /// The check PVE makes.
    pub check: Check,
}

/// What PVE checks: privileges on an ACL path, or `root@pam`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// All of `privileges` on `path`; with `or_path` (a pool), holding them there is enough.
    All {
        /// The privileges, all of them needed.
        privileges: Vec<&'static str>,
        /// The ACL path they are needed on.
        path: String,
        /// A pool path where holding them is enough too.
        or_path: Option<String>,
    },
    /// One of `privileges` on `path`.
    Any {
        /// The privileges, one of them needed.
        privileges: Vec<&'static str>,
        /// The ACL path it is needed on.
        path: String,
    },
    /// All of `privileges` on `path`, or else all of `or_privileges` on `or_path`
    /// (`download-url`: `Sys.Audit` and `Sys.Modify` on `/`, or `Sys.AccessNetwork` on
    /// the node).
    Either {
        /// The privileges of the first way, all needed.
        privileges: Vec<&'static str>,
        /// The ACL path of the first way.
        path: String,
        /// The privileges of the other way, all needed.
        or_privileges: Vec<&'static str>,
        /// The ACL path of the other way.
        or_path: String,
    },
    /// Adding or removing `tag`: `Sys.Modify` on `/`, unless datacenter.cfg's
    /// `user-tag-access` lets users without it use the tag and `registered-tags` does not
    /// hold it (pve-guest-common `assert_tag_permissions`, on update and, since
    /// qemu-server 9.2.0, on create). The cluster's rules decide, read by the run.
    Tag {
        /// The tag added or removed.
        tag: String,
    },
    /// Handing out `role` on `path` (`update_acl`, pve-access-control 8.0+): with
    /// `Permissions.Modify` on the path anything goes; without it the caller must hold
    /// every privilege of the role there (propagating, for a propagating entry that is
    /// added), and may never hand out `NoAccess`.
    Handout {
        /// The role.
        role: String,
        /// Its privileges.
        privileges: Vec<String>,
        /// The ACL path.
        path: String,
        /// Whether the caller's privileges must propagate (adding a propagating entry).
        propagating: bool,
    },
    /// Only `root@pam` may do it.
    RootOnly,
}

fn all(what: &str, privileges: &[&'static str], path: String) -> Need {
    Need {
        what: what.to_string(),
        check: Check::All {
            privileges: privileges.to_vec(),
            path,
            or_path: None,
        },
    }
}

/// `check_perm_modify`'s privileges for `path`: `Permissions.Modify`, or below `/vms`,
/// `/storage` and `/pool` the object's own allocate privilege.
pub fn perm_modify_privileges(path: &str) -> Vec<&'static str> {
    let below = |prefix: &str| path.strip_prefix(prefix).is_some_and(|rest| !rest.is_empty());
    let mut privileges = vec!["Permissions.Modify"];
    if below("/storage/") {
        privileges.push("Datastore.Allocate");
    } else if below("/vms/") {
        privileges.push("VM.Allocate");
    } else if below("/pool/") {
        privileges.push("Pool.Allocate");
    }
    privileges
}

fn vm_path(vmid: u32) -> String {
    format!("/vms/{vmid}")
}

/// The tags whose count differs between `old` and `new`, each once and sorted: what
/// `assert_tag_permissions` checks (a tag kept as it was is not checked). Split as
/// `PVE::Tools::split_list` splits: at `,`, `;` and white space.
pub fn changed_tags(old: &str, new: &str) -> Vec<String> {
    use std::collections::BTreeMap;
    fn count(v: &str) -> BTreeMap<&str, usize> {
        let mut m: BTreeMap<&str, usize> = BTreeMap::new();
        for t in v
            .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .filter(|t| !t.is_empty())
        {
            *m.entry(t).or_default() += 1;
        }
        m
    }
    let (old, new) = (count(old), count(new));
    let mut out: Vec<String> = old
        .keys()
        .chain(new.keys())
        .filter(|t| old.get(*t) != new.get(*t))
        .map(|t| t.to_string())
        .collect();
    out.sort();
    out.dedup();
    out
}

fn tag_needs(old: &str, new: &str) -> Vec<Need> {
    changed_tags(old, new)
        .into_iter()
        .map(|tag| Need {
            what: "tags".into(),
            check: Check::Tag { tag },
        })
        .collect()
}

/// What pve-access-control and pve-manager's Pool.pm check for the writes of the ACL
/// and pool modules.
fn access_needs(write: &Write) -> Vec<Need> {
    let mut out = Vec::new();
    match write {
        // ACL.pm: `perm-modify` on the path (Permissions.Modify, or the object's own
        // allocate privilege below /vms, /storage, /pool), then the role-subset rule.
        Write::Acl {
            path,
            role,
            role_privileges,
            propagate,
            delete,
        } => {
            let verb = if *delete { "remove" } else { "grant" };
            out.push(Need {
                what: verb.into(),
                check: Check::Any {
                    privileges: perm_modify_privileges(path),
                    path: path.clone(),
                },
            });
            out.push(Need {
                what: verb.into(),
                check: Check::Handout {
                    role: role.clone(),
                    privileges: role_privileges.clone(),
                    path: path.clone(),
                    propagating: *propagate && !*delete,
                },
            });
        }
        Write::Pool { poolid, what } => out.push(all(what, &["Pool.Allocate"], format!("/pool/{poolid}"))),
        // update_pool: Pool.Allocate on the pool, check_perm_modify on the storage.
        Write::PoolStorage { poolid, storage } => {
            out.push(all("pool", &["Pool.Allocate"], format!("/pool/{poolid}")));
            out.push(Need {
                what: "pool".into(),
                check: Check::Any {
                    privileges: vec!["Permissions.Modify", "Datastore.Allocate"],
                    path: format!("/storage/{storage}"),
                },
            });
        }
        _ => {}
    }
    out
}

/// What PVE checks for `write`, in the order it checks.
pub fn needs(write: &Write) -> Vec<Need> {
    let mut out = Vec::new();
    match write {
        Write::Create {
            vmid,
            pool,
            storage,
            start,
            ha_managed,
            config,
        } => out.extend(create_needs(vmid, pool, storage, start, ha_managed, config)),
        Write::Clone {
            source,
            vmid,
            pool,
            storage,
            source_config,
        } => out.extend(clone_needs(source, vmid, pool, storage, source_config)),
        Write::Config { vmid, set, delete } => out.extend(config_needs(vmid, set, delete)),
        Write::Resize { vmid, storage } => {
            out.push(all("resize", &["VM.Config.Disk"], vm_path(*vmid)));
            out.push(all(
                "resize",
                &["Datastore.AllocateSpace"],
                format!("/storage/{storage}"),
            ));
        }
        Write::MoveDisk { vmid, storage } => {
            out.push(all("move", &["VM.Config.Disk"], vm_path(*vmid)));
            out.push(all("move", &["Datastore.AllocateSpace"], format!("/storage/{storage}")));
        }
        Write::Reassign { vmid, target, storage } => {
            out.push(all("move", &["VM.Config.Disk"], vm_path(*vmid)));
            out.push(all("move", &["VM.Config.Disk"], vm_path(*target)));
            out.push(all("move", &["Datastore.AllocateSpace"], format!("/storage/{storage}")));
        }
        Write::Unlink { vmid } => out.push(all("unlink", &["VM.Config.Disk"], vm_path(*vmid))),
        Write::Power { vmid } => out.push(all("power", &["VM.PowerMgmt"], vm_path(*vmid))),
        Write::Template { vmid } => out.push(all("template", &["VM.Allocate"], vm_path(*vmid))),
        Write::Migrate { vmid, targetstorage } => {
            out.push(all("migrate", &["VM.Migrate"], vm_path(*vmid)));
            if let Some(s) = targetstorage {
                out.push(all("migrate", &["VM.Config.Disk"], vm_path(*vmid)));
                out.push(all("migrate", &["Datastore.AllocateSpace"], format!("/storage/{s}")));
            }
        }
        Write::Destroy { vmid } => out.push(all("remove", &["VM.Allocate"], vm_path(*vmid))),
        // pve-manager's update_pool: Pool.Allocate on the pool, check_perm_modify on the
        // guest, Pool.Allocate on the pool it leaves.
        Write::PoolMove { vmid, from, to } => {
            out.push(all("pool", &["Pool.Allocate"], format!("/pool/{to}")));
            out.push(Need {
                what: "pool".into(),
                check: Check::Any {
                    privileges: vec!["Permissions.Modify", "VM.Allocate"],
                    path: vm_path(*vmid),
                },
            });
            if let Some(from) = from {
                out.push(all("pool", &["Pool.Allocate"], format!("/pool/{from}")));
            }
        }
        Write::Acl { .. } | Write::Pool { .. } | Write::PoolStorage { .. } => out.extend(access_needs(write)),
        Write::UploadFile { storage } => out.push(all(
            "upload",
            &["Datastore.AllocateTemplate"],
            format!("/storage/{storage}"),
        )),
        Write::Appliance { storage } => out.push(all(
            "download",
            &["Datastore.AllocateTemplate"],
            format!("/storage/{storage}"),
        )),
        // Probing the node's network: Sys.Modify on / (older rule) or Sys.AccessNetwork.
        Write::DownloadUrl { node, storage } => {
            out.push(all(
                "download",
                &["Datastore.AllocateTemplate"],
                format!("/storage/{storage}"),
            ));
            out.push(Need {
                what: "download".into(),
                check: Check::Either {
                    privileges: vec!["Sys.Audit", "Sys.Modify"],
                    path: "/".into(),
                    or_privileges: vec!["Sys.AccessNetwork"],
                    or_path: format!("/nodes/{node}"),
                },
            });
        }
        Write::RemoveFile { storage } => {
            out.push(all("remove", &["Datastore.Allocate"], format!("/storage/{storage}")))
        }
        Write::Snapshot { vmid } => out.push(all("snapshot", &["VM.Snapshot"], vm_path(*vmid))),
        // The API call's own check is one of the two; `start` is checked up front since
        // qemu-server 9.1.10 (the worker starts the VM without its own check).
        Write::Rollback { vmid, start } => {
            out.push(Need {
                what: "rollback".into(),
                check: Check::Any {
                    privileges: vec!["VM.Snapshot", "VM.Snapshot.Rollback"],
                    path: vm_path(*vmid),
                },
            });
            if *start {
                out.push(all("start", &["VM.PowerMgmt"], vm_path(*vmid)));
            }
        }
    }
    out.dedup();
    out
}

/// A create: the storage, HA and start first, then the VM, its drives, keys and bridges.
fn create_needs(
    vmid: &u32,
    pool: &Option<String>,
    storage: &Option<String>,
    start: &bool,
    ha_managed: &bool,
    config: &[(String, String)],
) -> Vec<Need> {
    let mut out = Vec::new();
    if let Some(s) = storage {
        out.push(all("storage", &["Datastore.AllocateSpace"], format!("/storage/{s}")));
    }
    if *ha_managed {
        out.push(all("ha_managed", &["Sys.Console"], "/".to_string()));
    }
    if *start {
        out.push(on_vm_or_pool("start", &["VM.PowerMgmt"], *vmid, pool.as_deref()));
    }
    out.push(on_vm_or_pool("create", &["VM.Allocate"], *vmid, pool.as_deref()));
    for (k, v) in config {
        out.extend(storage_needs(k, v, storage.as_deref()));
    }
    for (k, v) in config {
        if !keys::is_drive(k) {
            out.extend(key_needs(*vmid, pool.as_deref(), k, v));
        }
    }
    out.extend(bridge_needs(config.iter().map(|(k, v)| (k.as_str(), v.as_str()))));
    // Checked in the worker, after the config is assembled (qemu-server 9.2.0+).
    for (_, v) in config.iter().filter(|(k, _)| k == "tags") {
        out.extend(tag_needs("", v));
    }
    out
}

/// A clone: the source, the new VM, the storages its disks land on, raw devices, bridges.
fn clone_needs(
    source: &u32,
    vmid: &u32,
    pool: &Option<String>,
    storage: &Option<String>,
    source_config: &[(String, String)],
) -> Vec<Need> {
    let mut out = Vec::new();
    out.push(all("clone", &["VM.Clone"], vm_path(*source)));
    out.push(on_vm_or_pool("clone", &["VM.Allocate"], *vmid, pool.as_deref()));
    for (k, v) in source_config
        .iter()
        .filter(|(k, v)| keys::is_drive(k) && !v.split(',').any(|p| p == "media=cdrom"))
    {
        let Some((sid, _)) = v.split(',').next().and_then(|f| f.split_once(':')) else {
            continue;
        };
        let sid = storage.as_deref().unwrap_or(sid);
        out.push(all(k, &["Datastore.AllocateSpace"], format!("/storage/{sid}")));
    }
    for (k, v) in source_config
        .iter()
        .filter(|(k, _)| k.starts_with("hostpci") || k.starts_with("usb"))
    {
        if keys::need(k, v) == KeyNeed::RootOnly {
            out.push(Need {
                what: k.clone(),
                check: Check::RootOnly,
            });
        }
    }
    out.extend(bridge_needs(
        source_config.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    ));
    out
}

/// A config change: any config privilege, then each deleted and each set key (with the
/// value it replaces where PVE checks that too).
fn config_needs(vmid: &u32, set: &[(String, String, Option<String>)], delete: &[(String, String)]) -> Vec<Need> {
    let mut out = Vec::new();
    out.push(Need {
        what: "config".into(),
        check: Check::Any {
            privileges: CONFIG_ANY.to_vec(),
            path: vm_path(*vmid),
        },
    });
    for (k, old) in delete {
        out.extend(key_needs(*vmid, None, k, old));
        if k == "tags" {
            out.extend(tag_needs(old, ""));
        }
        if k.starts_with("net") {
            out.extend(bridge_needs([(k.as_str(), old.as_str())]));
        }
    }
    for (k, new, old) in set {
        if let Some(o) = old
            .as_deref()
            .filter(|_| keys::is_drive(k) || k.starts_with("usb") || k.starts_with("hostpci"))
        {
            out.extend(key_needs(*vmid, None, k, o));
        }
        out.extend(key_needs(*vmid, None, k, new));
        if k == "tags" {
            out.extend(tag_needs(old.as_deref().unwrap_or(""), new));
        }
        out.extend(storage_needs(k, new, None));
        out.extend(bridge_needs([(k.as_str(), new.as_str())]));
        if let Some(o) = old.as_deref().filter(|_| k.starts_with("net")) {
            out.extend(bridge_needs([(k.as_str(), o)]));
        }
    }
    out
}

/// `POST/PUT config` lets in anyone with one of the config privileges on the VM; the
/// keys then decide.
const CONFIG_ANY: &[&str] = &[
    "VM.Config.Disk",
    "VM.Config.CDROM",
    "VM.Config.CPU",
    "VM.Config.Memory",
    "VM.Config.Network",
    "VM.Config.HWType",
    "VM.Config.Options",
    "VM.Config.Cloudinit",
];

fn on_vm_or_pool(what: &str, privileges: &[&'static str], vmid: u32, pool: Option<&str>) -> Need {
    Need {
        what: what.to_string(),
        check: Check::All {
            privileges: privileges.to_vec(),
            path: vm_path(vmid),
            or_path: pool.map(|p| format!("/pool/{p}")),
        },
    }
}

/// The class of one key (and the extra privileges some values need).
fn key_needs(vmid: u32, pool: Option<&str>, key: &str, value: &str) -> Vec<Need> {
    let mut out = Vec::new();
    // Tags are checked on the VM only; the rest on the VM or the pool of a create.
    let pool = pool.filter(|_| key != "tags");
    match keys::need(key, value) {
        KeyNeed::All(p) => out.push(on_vm_or_pool(key, p, vmid, pool)),
        KeyNeed::Any(p) => out.push(Need {
            what: key.into(),
            check: Check::Any {
                privileges: p.to_vec(),
                path: vm_path(vmid),
            },
        }),
        KeyNeed::RootOnly => out.push(Need {
            what: key.into(),
            check: Check::RootOnly,
        }),
        KeyNeed::Unknown => {}
    }
    if key == "startup" {
        out.push(all(key, &["Sys.Modify"], "/".into()));
    }
    if let Some(m) = keys::device_mapping(value) {
        let kind = if key.starts_with("usb") { "usb" } else { "pci" };
        if key.starts_with("usb") || key.starts_with("hostpci") {
            out.push(all(key, &["Mapping.Use"], format!("/mapping/{kind}/{m}")));
        }
    }
    out
}

/// `Datastore.AllocateSpace` on the storage a new volume (or cloud-init drive, or the
/// `storage` default) is allocated on.
fn storage_needs(key: &str, value: &str, default_storage: Option<&str>) -> Vec<Need> {
    if !keys::is_drive(key) {
        return Vec::new();
    }
    let file = value.split(',').next().unwrap_or("");
    let cdrom = value.split(',').any(|p| p == "media=cdrom");
    let storage = match file.split_once(':') {
        Some((sid, vol))
            if !file.starts_with('/') && (vol == "cloudinit" || (!cdrom && vol.parse::<f64>().is_ok())) =>
        {
            Some(sid)
        }
        None if !cdrom && file.parse::<f64>().is_ok() => default_storage,
        _ => None,
    };
    storage
        .map(|s| vec![all(key, &["Datastore.AllocateSpace"], format!("/storage/{s}"))])
        .unwrap_or_default()
}

/// `SDN.Use` on `/sdn/zones/localnetwork/<bridge>`, or with a VLAN tag (or trunks) on
/// `.../<bridge>/<tag>` for each tag.
pub fn bridge_needs<'a>(nets: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<Need> {
    let mut out = Vec::new();
    for (key, value) in nets {
        if !key
            .strip_prefix("net")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        {
            continue;
        }
        let opt = |name: &str| {
            value
                .split(',')
                .find_map(|p| p.strip_prefix(&format!("{name}=")))
                .filter(|v| !v.is_empty())
        };
        let Some(bridge) = opt("bridge") else { continue };
        let base = format!("/sdn/zones/localnetwork/{bridge}");
        let mut tags: Vec<String> = opt("tag")
            .filter(|t| *t != "0")
            .map(|t| vec![t.to_string()])
            .unwrap_or_default();
        for part in opt("trunks")
            .map(|t| t.split(';').collect::<Vec<_>>())
            .unwrap_or_default()
        {
            match part
                .split_once('-')
                .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
            {
                Some((a, b)) => tags.extend((a..=b).map(|t| t.to_string())),
                None if !part.is_empty() => tags.push(part.to_string()),
                None => {}
            }
        }
        if tags.is_empty() {
            out.push(all(key, &["SDN.Use"], base));
        } else {
            for t in tags {
                out.push(all(key, &["SDN.Use"], format!("{base}/{t}")));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(n: &[Need]) -> Vec<String> {
        n.iter()
            .map(|n| match &n.check {
                Check::All { privileges, path, .. } => format!("{} {} {path}", n.what, privileges.join("+")),
                Check::Any { privileges, path } => format!("{} {} {path}", n.what, privileges.join("|")),
                Check::Either {
                    privileges,
                    path,
                    or_privileges,
                    or_path,
                } => {
                    format!(
                        "{} {} {path} or {} {or_path}",
                        n.what,
                        privileges.join("+"),
                        or_privileges.join("+")
                    )
                }
                Check::Tag { tag } => format!("{} Sys.Modify / for tag {tag}", n.what),
                Check::Handout {
                    role,
                    path,
                    propagating,
                    ..
                } => format!("{} hand out {role} {path} propagating={propagating}", n.what),
                Check::RootOnly => format!("{} root", n.what),
            })
            .collect()
    }

    #[test]
    fn each_tag_added_or_removed_is_checked_and_a_kept_one_is_not() {
        assert_eq!(changed_tags("prod;web", "web,db"), ["db", "prod"]);
        assert_eq!(changed_tags("web", "web"), Vec::<String>::new());
        assert_eq!(changed_tags("", "a a"), ["a"], "a count that changes");
        let create = Write::Create {
            vmid: 101,
            pool: None,
            storage: None,
            start: false,
            ha_managed: false,
            config: vec![("tags".into(), "web;prod".into())],
        };
        let p = paths(&needs(&create));
        assert!(
            p.ends_with(&[
                "tags Sys.Modify / for tag prod".to_string(),
                "tags Sys.Modify / for tag web".to_string()
            ]),
            "{p:?}"
        );
        let update = Write::Config {
            vmid: 101,
            set: vec![("tags".into(), "web;db".into(), Some("web".into()))],
            delete: vec![],
        };
        let p = paths(&needs(&update));
        assert!(p.contains(&"tags Sys.Modify / for tag db".to_string()), "{p:?}");
        assert!(!p.iter().any(|l| l.ends_with("for tag web")), "web stays: {p:?}");
        let delete = Write::Config {
            vmid: 101,
            set: vec![],
            delete: vec![("tags".into(), "prod".into())],
        };
        assert!(paths(&needs(&delete)).contains(&"tags Sys.Modify / for tag prod".to_string()));
    }

    #[test]
    fn a_create_needs_allocate_storage_bridges_and_each_keys_class() {
        let w = Write::Create {
            vmid: 101,
            pool: None,
            storage: None,
            start: true,
            ha_managed: false,
            config: vec![
                ("cores".into(), "2".into()),
                ("scsi0".into(), "local-lvm:32".into()),
                ("ide2".into(), "isos:iso/d.iso,media=cdrom".into()),
                ("net0".into(), "virtio,bridge=vmbr0,tag=20".into()),
            ],
        };
        assert_eq!(
            paths(&needs(&w)),
            [
                "start VM.PowerMgmt /vms/101",
                "create VM.Allocate /vms/101",
                "scsi0 Datastore.AllocateSpace /storage/local-lvm",
                "cores VM.Config.CPU /vms/101",
                "net0 VM.Config.Network /vms/101",
                "net0 SDN.Use /sdn/zones/localnetwork/vmbr0/20",
            ]
        );
    }

    #[test]
    fn a_config_change_checks_old_and_new_values() {
        let w = Write::Config {
            vmid: 100,
            set: vec![
                (
                    "net0".into(),
                    "virtio=AA:BB:CC:DD:EE:FF,bridge=vmbr1".into(),
                    Some("virtio=AA:BB:CC:DD:EE:FF,bridge=vmbr0".into()),
                ),
                ("scsi1".into(), "vmdata:8".into(), None),
                ("args".into(), "-no-reboot".into(), None),
            ],
            delete: vec![("unused0".into(), "local-lvm:vm-100-disk-3".into())],
        };
        let p = paths(&needs(&w));
        assert_eq!(p[0], "config VM.Config.Disk|VM.Config.CDROM|VM.Config.CPU|VM.Config.Memory|VM.Config.Network|VM.Config.HWType|VM.Config.Options|VM.Config.Cloudinit /vms/100");
        assert!(p.contains(&"unused0 VM.Config.Disk /vms/100".to_string()));
        assert!(
            p.contains(&"net0 SDN.Use /sdn/zones/localnetwork/vmbr1".to_string())
                && p.contains(&"net0 SDN.Use /sdn/zones/localnetwork/vmbr0".to_string())
        );
        assert!(p.contains(&"scsi1 Datastore.AllocateSpace /storage/vmdata".to_string()));
        assert!(p.contains(&"args root".to_string()));
    }

    #[test]
    fn trunks_need_each_vlan() {
        assert_eq!(
            paths(&bridge_needs([("net0", "virtio,bridge=vmbr0,trunks=10;20-21")])).len(),
            3
        );
        assert!(bridge_needs([("ipconfig0", "ip=dhcp")]).is_empty());
    }

    #[test]
    fn storage_writes_need_what_pve_storage_checks() {
        assert_eq!(
            paths(&needs(&Write::UploadFile { storage: "isos".into() })),
            ["upload Datastore.AllocateTemplate /storage/isos"]
        );
        assert_eq!(
            paths(&needs(&Write::DownloadUrl {
                node: "pve1".into(),
                storage: "local".into()
            })),
            [
                "download Datastore.AllocateTemplate /storage/local",
                "download Sys.Audit+Sys.Modify / or Sys.AccessNetwork /nodes/pve1"
            ]
        );
        assert_eq!(
            paths(&needs(&Write::RemoveFile {
                storage: "local".into()
            })),
            ["remove Datastore.Allocate /storage/local"]
        );
    }

    #[test]
    fn an_acl_write_needs_perm_modify_then_the_role_subset() {
        let grant = Write::Acl {
            path: "/vms/101".into(),
            role: "PVEVMUser".into(),
            role_privileges: vec!["VM.Console".into()],
            propagate: true,
            delete: false,
        };
        assert_eq!(
            paths(&needs(&grant)),
            [
                "grant Permissions.Modify|VM.Allocate /vms/101",
                "grant hand out PVEVMUser /vms/101 propagating=true"
            ]
        );
        let remove = Write::Acl {
            path: "/storage/local".into(),
            role: "PVEAuditor".into(),
            role_privileges: vec![],
            propagate: true,
            delete: true,
        };
        assert_eq!(
            paths(&needs(&remove)),
            [
                "remove Permissions.Modify|Datastore.Allocate /storage/local",
                "remove hand out PVEAuditor /storage/local propagating=false"
            ]
        );
        assert_eq!(perm_modify_privileges("/vms"), ["Permissions.Modify"]);
        assert_eq!(
            perm_modify_privileges("/pool/a/b"),
            ["Permissions.Modify", "Pool.Allocate"]
        );
    }
}
