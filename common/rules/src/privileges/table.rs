//! The least privileges of a token, per module and operation: one representative
//! planned write per operation, its privileges read from [`needs`] — the mapping the
//! pre-write check uses — so the least-privilege guide's table and the matrix test cannot drift from it.

use std::collections::BTreeSet;

use super::needs::{needs, Check, Write};

/// One operation a module plans, as a write with placeholder names.
pub struct Operation {
    /// The module that plans it (`proxmox_kvm`, `proxmox_disk`, ...).
    pub module: &'static str,
    /// In the task's words: `create`, `a new disk`, `state: started`.
    pub what: &'static str,
    /// The write, with the placeholder VMs and names.
    pub write: Write,
}

/// Placeholders: VM `1` is the task's VM (`{vmid}`), VM `2` the other one (a clone's
/// source, a disk's target VM: `{other}`); storages, bridges, tags and pools by name.
const VM: u32 = 1;
const OTHER: u32 = 2;

fn config(set: &[(&str, &str)]) -> Write {
    Write::Config {
        vmid: VM,
        set: set.iter().map(|(k, v)| (k.to_string(), v.to_string(), None)).collect(),
        delete: vec![],
    }
}

/// Every operation of the modules that writes (`proxmox_vm_info` only reads).
pub fn operations() -> Vec<Operation> {
    [
        kvm_operations(),
        kvm_lifecycle_operations(),
        disk_operations(),
        nic_operations(),
        template_operations(),
        snapshot_operations(),
        access_operations(),
        pool_operations(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// One row of the table.
fn op(module: &'static str, what: &'static str, write: Write) -> Operation {
    Operation { module, what, write }
}

/// proxmox_kvm's creates, clones and config keys by qemu-server's classes.
fn kvm_operations() -> Vec<Operation> {
    let create = |pool: Option<&str>| Write::Create {
        vmid: VM,
        pool: pool.map(str::to_string),
        storage: None,
        start: false,
        ha_managed: false,
        config: vec![],
    };
    vec![
        op("proxmox_kvm", "create", create(None)),
        op("proxmox_kvm", "create with `pool`", create(Some("{pool}"))),
        op(
            "proxmox_kvm",
            "create with `ha_managed`",
            Write::Create {
                vmid: VM,
                pool: None,
                storage: None,
                start: false,
                ha_managed: true,
                config: vec![],
            },
        ),
        op(
            "proxmox_kvm",
            "`clone` (full, or `storage`)",
            Write::Clone {
                source: OTHER,
                vmid: VM,
                pool: None,
                storage: Some("{storage}".into()),
                source_config: vec![
                    ("scsi0".into(), "{storage}:base-2-disk-0".into()),
                    ("net0".into(), "virtio,bridge={bridge}".into()),
                ],
            },
        ),
        op(
            "proxmox_kvm",
            "`cores`, `sockets`, `cpu`, `vcpus`, `numa`, `cpulimit`, `cpuunits`",
            config(&[("cores", "2")]),
        ),
        op(
            "proxmox_kvm",
            "`memory`, `balloon`, `shares`",
            config(&[("memory", "2048")]),
        ),
        op(
            "proxmox_kvm",
            "`scsihw`, `vga`, `machine`, `hotplug`, `tablet`, `watchdog`, `smbios`, `audio0`, `rng0`",
            config(&[("vga", "std")]),
        ),
        op(
            "proxmox_kvm",
            "`name`, `description`, `onboot`, `agent`, `bios`, `ostype`, `protection`, `tags`, …",
            config(&[("name", "web1")]),
        ),
        op(
            "proxmox_kvm",
            "`tags`: adding or removing one datacenter.cfg keeps from users (`user-tag-access`, `registered-tags`)",
            config(&[("tags", "{tag}")]),
        ),
        op("proxmox_kvm", "`startup`", config(&[("startup", "order=1")])),
        op("proxmox_kvm", "`boot`, `bootdisk`", config(&[("boot", "order=scsi0")])),
        op(
            "proxmox_kvm",
            "a new disk (`scsi`, `virtio`, `sata`, `ide`, `efidisk0`, `tpmstate0`)",
            config(&[("scsi0", "{storage}:32")]),
        ),
        op(
            "proxmox_kvm",
            "an ISO (`ide2: …,media=cdrom`)",
            config(&[("ide2", "{storage}:iso/{image},media=cdrom")]),
        ),
        op(
            "proxmox_kvm",
            "a cloud-init drive",
            config(&[("ide0", "{storage}:cloudinit")]),
        ),
        op(
            "proxmox_kvm",
            "`ciuser`, `cipassword`, `sshkeys`, `ipconfig`, `nameservers`, …",
            config(&[("ciuser", "admin")]),
        ),
        op("proxmox_kvm", "`net`", config(&[("net0", "virtio,bridge={bridge}")])),
        op(
            "proxmox_kvm",
            "`net` with `tag={tag}`",
            config(&[("net0", "virtio,bridge={bridge},tag={tag}")]),
        ),
        op(
            "proxmox_kvm",
            "`hostpci`/`usb` with `mapping=`",
            config(&[("hostpci0", "mapping={mapping}")]),
        ),
        op(
            "proxmox_kvm",
            "raw `hostpci`/`usb`/`serial` devices, `args`, `hookscript`",
            config(&[("hookscript", "local:snippets/h.sh")]),
        ),
    ]
}

/// proxmox_kvm's writes past the config: power, template, migration, removal, pools.
fn kvm_lifecycle_operations() -> Vec<Operation> {
    vec![
        op(
            "proxmox_kvm",
            "`state: started`, `stopped`, `restarted`, `reset`, `apply_pending: reboot`",
            Write::Power { vmid: VM },
        ),
        op("proxmox_kvm", "`template: true`", Write::Template { vmid: VM }),
        op(
            "proxmox_kvm",
            "`migrate: true`",
            Write::Migrate {
                vmid: VM,
                targetstorage: None,
            },
        ),
        op(
            "proxmox_kvm",
            "`clone` to another node's local storage",
            Write::Migrate {
                vmid: VM,
                targetstorage: Some("{storage}".into()),
            },
        ),
        op("proxmox_kvm", "`state: absent`", Write::Destroy { vmid: VM }),
        op(
            "proxmox_kvm",
            "`pool` of an existing VM (`update: true`)",
            Write::PoolMove {
                vmid: VM,
                from: None,
                to: "{pool}".into(),
            },
        ),
    ]
}

/// proxmox_disk's writes.
fn disk_operations() -> Vec<Operation> {
    vec![
        op(
            "proxmox_disk",
            "`state: present` (a new disk)",
            config(&[("scsi1", "{storage}:32")]),
        ),
        op(
            "proxmox_disk",
            "`state: present` (a CD-ROM)",
            config(&[("ide2", "{storage}:iso/{image},media=cdrom")]),
        ),
        op(
            "proxmox_disk",
            "`state: resized`",
            Write::Resize {
                vmid: VM,
                storage: "{storage}".into(),
            },
        ),
        op(
            "proxmox_disk",
            "`state: moved` with `target_storage`",
            Write::MoveDisk {
                vmid: VM,
                storage: "{storage}".into(),
            },
        ),
        op(
            "proxmox_disk",
            "`state: moved` with `target_vmid`",
            Write::Reassign {
                vmid: VM,
                target: OTHER,
                storage: "{storage}".into(),
            },
        ),
        op(
            "proxmox_disk",
            "`state: detached`, `absent`",
            Write::Config {
                vmid: VM,
                set: vec![],
                delete: vec![("scsi1".into(), "{storage}:vm-1-disk-1".into())],
            },
        ),
    ]
}

/// proxmox_nic's writes.
fn nic_operations() -> Vec<Operation> {
    vec![
        op(
            "proxmox_nic",
            "`state: present`",
            config(&[("net1", "virtio,bridge={bridge}")]),
        ),
        op(
            "proxmox_nic",
            "`state: present` with `tag`",
            config(&[("net1", "virtio,bridge={bridge},tag={tag}")]),
        ),
        op(
            "proxmox_nic",
            "`state: absent`",
            Write::Config {
                vmid: VM,
                set: vec![],
                delete: vec![("net1".into(), "virtio,bridge={bridge}".into())],
            },
        ),
    ]
}

/// proxmox_template's writes: upload, download-url, appliances, removal.
fn template_operations() -> Vec<Operation> {
    vec![
        op(
            "proxmox_template",
            "`src` (upload; with `force: true` it overwrites an existing file), `template` alone (appliance)",
            Write::UploadFile {
                storage: "{storage}".into(),
            },
        ),
        op(
            "proxmox_template",
            "`url` (the node downloads it)",
            Write::DownloadUrl {
                node: "{node}".into(),
                storage: "{storage}".into(),
            },
        ),
        op(
            "proxmox_template",
            "`state: absent`; `force: true` on an existing file with `url` or `template` alone (removed first)",
            Write::RemoveFile {
                storage: "{storage}".into(),
            },
        ),
    ]
}

/// proxmox_snap's writes: take or remove a snapshot, roll back (and start).
fn snapshot_operations() -> Vec<Operation> {
    vec![
        op(
            "proxmox_snap",
            "`state: present` (a new snapshot; `retention` removes old ones), `state: absent`",
            Write::Snapshot { vmid: VM },
        ),
        op(
            "proxmox_snap",
            "`state: rollback`",
            Write::Rollback { vmid: VM, start: false },
        ),
        op(
            "proxmox_snap",
            "`state: rollback` with `start: true`",
            Write::Rollback { vmid: VM, start: true },
        ),
    ]
}

/// proxmox_access_acl's writes: a role granted or removed on a VM's, a storage's or a
/// pool's path (the path decides which allocate privilege stands in for
/// `Permissions.Modify`).
fn access_operations() -> Vec<Operation> {
    let acl = |path: &str, delete: bool| Write::Acl {
        path: path.into(),
        role: "{role}".into(),
        role_privileges: vec![],
        propagate: !delete,
        delete,
    };
    vec![
        op(
            "proxmox_access_acl",
            "`state: present` on `/vms/{vmid}`",
            acl("/vms/1", false),
        ),
        op(
            "proxmox_access_acl",
            "`state: present` on `/storage/{storage}`",
            acl("/storage/{storage}", false),
        ),
        op(
            "proxmox_access_acl",
            "`state: present` on `/pool/{pool}`",
            acl("/pool/{pool}", false),
        ),
        op(
            "proxmox_access_acl",
            "`state: absent` on `/vms/{vmid}`",
            acl("/vms/1", true),
        ),
    ]
}

/// proxmox_pool's and proxmox_pool_member's writes.
fn pool_operations() -> Vec<Operation> {
    let pool = |what: &'static str| Write::Pool {
        poolid: "{pool}".into(),
        what,
    };
    vec![
        op("proxmox_pool", "`state: present` (a new pool)", pool("create")),
        op("proxmox_pool", "`comment` of an existing pool", pool("comment")),
        op("proxmox_pool", "`state: absent`", pool("remove")),
        op(
            "proxmox_pool_member",
            "a VM added or removed",
            Write::PoolMove {
                vmid: VM,
                from: None,
                to: "{pool}".into(),
            },
        ),
        op(
            "proxmox_pool_member",
            "a VM moved from another pool (`allow_move`)",
            Write::PoolMove {
                vmid: VM,
                from: Some("{from}".into()),
                to: "{pool}".into(),
            },
        ),
        op(
            "proxmox_pool_member",
            "a storage added or removed",
            Write::PoolStorage {
                poolid: "{pool}".into(),
                storage: "{storage}".into(),
            },
        ),
    ]
}

/// The modules of the access-and-pools guide's table.
pub const ACCESS_AND_POOL_MODULES: &[&str] = &["proxmox_access_acl", "proxmox_pool", "proxmox_pool_member"];

/// `/vms/1` → `/vms/{vmid}`, `/vms/2` → `/vms/{other}`.
fn placeholder(path: &str) -> String {
    match path {
        "/vms/1" => "/vms/{vmid}".into(),
        "/vms/2" => "/vms/{other}".into(),
        p => p.into(),
    }
}

/// What an operation needs, one line each: `VM.Allocate` on `/vms/{vmid}` (or
/// `/pool/{pool}`). The gate of every config write (one of the `VM.Config.*`
/// privileges) is left out where the keys already demand one of them.
pub fn requirements(write: &Write) -> Vec<String> {
    let all = needs(write);
    // Any one of these meets a wider any-of check (root@pam meets every check).
    let narrower = |wide: &[&str]| {
        all.iter().any(|n| match &n.check {
            Check::All { privileges, .. } => privileges.iter().any(|p| wide.contains(p)),
            Check::Any { privileges, .. } => {
                privileges.len() < wide.len() && privileges.iter().all(|p| wide.contains(p))
            }
            Check::Either { .. } | Check::Tag { .. } | Check::Handout { .. } => false,
            Check::RootOnly => true,
        })
    };
    let mut out: Vec<String> = Vec::new();
    for n in &all {
        let line = match &n.check {
            Check::RootOnly => "only `root@pam` with a password (no token, not even root's)".to_string(),
            Check::Tag { .. } => "`Sys.Modify` on `/` for such a tag".to_string(),
            Check::Handout { path, .. } => format!(
                "`Permissions.Modify` on `{}`, or every privilege of the role there (propagating, for a propagating entry), never `NoAccess`",
                placeholder(path)
            ),
            Check::All {
                privileges,
                path,
                or_path,
            } => {
                let or = or_path.as_ref().map(|p| format!(" (or `{p}`)")).unwrap_or_default();
                format!("`{}` on `{}`{or}", privileges.join("`, `"), placeholder(path))
            }
            Check::Either {
                privileges,
                path,
                or_privileges,
                or_path,
            } => format!(
                "`{}` on `{}` (or `{}` on `{}`)",
                privileges.join("`, `"),
                placeholder(path),
                or_privileges.join("`, `"),
                placeholder(or_path)
            ),
            Check::Any { privileges, path } => {
                if narrower(privileges) {
                    continue;
                }
                format!("one of `{}` on `{}`", privileges.join("`, `"), placeholder(path))
            }
        };
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

/// Every privilege some operation cannot do without (a single privilege PVE checks on
/// its own, not one of several that would each do).
pub fn privileges() -> BTreeSet<&'static str> {
    operations()
        .iter()
        .flat_map(|o| needs(&o.write))
        .filter_map(|n| {
            if let Check::All { privileges, .. } = n.check {
                Some(privileges)
            } else {
                None
            }
        })
        .flatten()
        .collect()
}

/// The least-privilege table (Markdown; `cargo collection docs` writes it into the guide as reStructuredText).
pub fn markdown() -> String {
    markdown_of(|_| true)
}

/// The rows of the modules `module` accepts, as [`markdown`] renders them (the access
/// and pools guide holds those of [`ACCESS_AND_POOL_MODULES`]).
pub fn markdown_of(module: impl Fn(&str) -> bool) -> String {
    let mut t = String::from("| module | operation | the token needs |\n|---|---|---|\n");
    for o in operations().into_iter().filter(|o| module(o.module)) {
        t.push_str(&format!(
            "| {} | {} | {} |\n",
            o.module,
            o.what,
            requirements(&o.write).join("; ")
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_reads_the_checks_mapping() {
        let ops = operations();
        let disk = ops
            .iter()
            .find(|o| o.what.starts_with("`state: present` (a new"))
            .unwrap();
        assert_eq!(
            requirements(&disk.write),
            [
                "`VM.Config.Disk` on `/vms/{vmid}`",
                "`Datastore.AllocateSpace` on `/storage/{storage}`"
            ]
        );
        let pool = ops.iter().find(|o| o.what == "create with `pool`").unwrap();
        assert_eq!(
            requirements(&pool.write),
            ["`VM.Allocate` on `/vms/{vmid}` (or `/pool/{pool}`)"]
        );
        let ci = ops.iter().find(|o| o.what.starts_with("`ciuser`")).unwrap();
        assert_eq!(
            requirements(&ci.write),
            ["one of `VM.Config.Cloudinit`, `VM.Config.Network` on `/vms/{vmid}`"]
        );
        let rollback = ops
            .iter()
            .find(|o| o.what == "`state: rollback` with `start: true`")
            .unwrap();
        assert_eq!(
            requirements(&rollback.write),
            [
                "one of `VM.Snapshot`, `VM.Snapshot.Rollback` on `/vms/{vmid}`",
                "`VM.PowerMgmt` on `/vms/{vmid}`"
            ]
        );
        let move_from = ops.iter().find(|o| o.what.starts_with("a VM moved")).unwrap();
        assert_eq!(
            requirements(&move_from.write),
            [
                "`Pool.Allocate` on `/pool/{pool}`",
                "one of `Permissions.Modify`, `VM.Allocate` on `/vms/{vmid}`",
                "`Pool.Allocate` on `/pool/{from}`"
            ]
        );
        let grant = ops
            .iter()
            .find(|o| o.what == "`state: present` on `/storage/{storage}`")
            .unwrap();
        assert_eq!(
            requirements(&grant.write),
            [
                "one of `Permissions.Modify`, `Datastore.Allocate` on `/storage/{storage}`",
                "`Permissions.Modify` on `/storage/{storage}`, or every privilege of the role there (propagating, for a propagating entry), never `NoAccess`"
            ]
        );
        let access = markdown_of(|m| ACCESS_AND_POOL_MODULES.contains(&m));
        assert!(
            access.contains("| proxmox_pool | `state: absent` | `Pool.Allocate` on `/pool/{pool}` |"),
            "{access}"
        );
        assert!(!access.contains("proxmox_kvm"), "{access}");
        assert!(markdown().contains("| proxmox_nic | `state: present` with `tag` | `VM.Config.Network` on `/vms/{vmid}`; `SDN.Use` on `/sdn/zones/localnetwork/{bridge}/{tag}` |"), "{}", markdown());
    }

    #[test]
    fn the_privileges_are_those_the_mapping_demands() {
        let p: Vec<&str> = privileges().into_iter().collect();
        for x in [
            "VM.Allocate",
            "VM.Clone",
            "VM.PowerMgmt",
            "VM.Migrate",
            "Datastore.AllocateSpace",
            "SDN.Use",
            "VM.Config.Disk",
            "VM.Config.CDROM",
            "Mapping.Use",
        ] {
            assert!(p.contains(&x), "{x} in {p:?}");
        }
        assert!(
            !p.contains(&"VM.Monitor"),
            "PVE 9 has no VM.Monitor and nothing here needs it"
        );
    }
}
