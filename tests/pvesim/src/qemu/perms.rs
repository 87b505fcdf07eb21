//! The privilege checks of qemu-server's `PVE/API2/Qemu.pm` on config keys and values:
//! `check_vm_modify_config_perm` (a class per key; a key in no class is root-only),
//! the drive, serial, USB and PCI checks whose answer depends on the value, tags, and
//! `check_bridge_access` (`SDN.Use` on the bridge, or on each VLAN it is used with).

use super::disks::{self, Drive};
use crate::auth::{self, Identity};
use crate::error::{ApiError, ApiResult};
use crate::state::Cluster;

const CPU: &[&str] = &[
    "cores",
    "cpu",
    "runningcpu",
    "cpulimit",
    "cpuunits",
    "numa",
    "smp",
    "sockets",
    "vcpus",
];
const MEMORY: &[&str] = &["memory", "balloon", "shares", "allow-ksm"];
const HWTYPE: &[&str] = &[
    "acpi",
    "hotplug",
    "kvm",
    "machine",
    "runningmachine",
    "scsihw",
    "smbios1",
    "tablet",
    "vga",
    "watchdog",
    "audio0",
    "rng0",
];
const GENERAL: &[&str] = &[
    "agent",
    "autostart",
    "bios",
    "description",
    "keyboard",
    "localtime",
    "migrate_downtime",
    "migrate_speed",
    "name",
    "onboot",
    "ostype",
    "protection",
    "reboot",
    "startdate",
    "startup",
    "tdf",
    "template",
];
const DISK_OPTIONS: &[&str] = &["boot", "bootdisk", "vmstatestorage"];
const CLOUDINIT: &[&str] = &[
    "cicustom",
    "cipassword",
    "citype",
    "ciuser",
    "ciupgrade",
    "nameserver",
    "searchdomain",
    "sshkeys",
];

fn numbered(key: &str, base: &str) -> bool {
    key.strip_prefix(base)
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// `check_vm_perm`: the privileges on the pool (when given) or on the VM.
pub fn check_vm_perm(
    c: &Cluster,
    who: &Identity,
    vmid: u32,
    pool: Option<&str>,
    privs: &[&str],
    any: bool,
) -> ApiResult<()> {
    let holds = |path: &str| {
        let have = auth::privs(c, who, path);
        if any {
            privs.iter().any(|p| have.contains(*p))
        } else {
            privs.iter().all(|p| have.contains(*p))
        }
    };
    if who.is_root() || pool.is_some_and(|p| holds(&format!("/pool/{p}"))) || holds(&format!("/vms/{vmid}")) {
        return Ok(());
    }
    let path = format!("/vms/{vmid}");
    if any {
        return Err(ApiError::forbidden(&path, &privs.join("|")));
    }
    let have = auth::privs(c, who, &path);
    Err(ApiError::forbidden(
        &path,
        privs.iter().find(|p| !have.contains(**p)).copied().unwrap_or(""),
    ))
}

/// `check_vm_modify_config_perm` over `keys`; drives, `cdrom`, `unusedN`, serial, USB,
/// PCI, virtiofs and tags are checked by value elsewhere.
pub fn check_modify_config(c: &Cluster, who: &Identity, vmid: u32, pool: Option<&str>, keys: &[&str]) -> ApiResult<()> {
    if who.is_root() {
        return Ok(());
    }
    for &key in keys {
        if disks::is_disk_key(key) || key == "cdrom" || key == "tags" {
            continue;
        }
        if ["unused", "serial", "usb", "hostpci", "virtiofs"]
            .iter()
            .any(|b| numbered(key, b))
        {
            continue;
        }
        let vm = |privs: &[&str], any: bool| check_vm_perm(c, who, vmid, pool, privs, any);
        if CPU.contains(&key) || numbered(key, "numa") {
            vm(&["VM.Config.CPU"], false)?;
        } else if MEMORY.contains(&key) {
            vm(&["VM.Config.Memory"], false)?;
        } else if HWTYPE.contains(&key) {
            vm(&["VM.Config.HWType"], false)?;
        } else if GENERAL.contains(&key) {
            vm(&["VM.Config.Options"], false)?;
            if key == "startup" {
                auth::require(c, who, "/", "Sys.Modify")?;
            }
        } else if key == "freeze" {
            vm(&["VM.PowerMgmt"], false)?;
        } else if DISK_OPTIONS.contains(&key) {
            vm(&["VM.Config.Disk"], false)?;
        } else if numbered(key, "net") || key == "running-nets-host-mtu" {
            vm(&["VM.Config.Network"], false)?;
        } else if CLOUDINIT.contains(&key) || numbered(key, "ipconfig") {
            vm(&["VM.Config.Cloudinit", "VM.Config.Network"], true)?;
        } else if key == "vmstate" {
            vm(&["VM.Config.Disk", "VM.PowerMgmt"], false)?;
        } else {
            // args, hookscript, affinity, lock, vmgenid, and every key PVE adds later.
            return Err(ApiError::internal(format!("only root can set '{key}' config")));
        }
    }
    Ok(())
}

/// The value-dependent checks of create (`check_vm_create_*_perm`): serial ports other
/// than `socket`, USB host devices other than spice and raw PCI devices are root-only.
pub fn check_create_devices(
    c: &Cluster,
    who: &Identity,
    vmid: u32,
    pool: Option<&str>,
    sets: &[(String, String)],
) -> ApiResult<()> {
    for (k, v) in sets {
        check_device(c, who, vmid, pool, k, v, "set")?;
    }
    Ok(())
}

/// One serial/USB/PCI value (`verb`: "set", "modify" or "delete", as PVE words it).
pub fn check_device(
    c: &Cluster,
    who: &Identity,
    vmid: u32,
    pool: Option<&str>,
    key: &str,
    value: &str,
    verb: &str,
) -> ApiResult<()> {
    if who.is_root() {
        return Ok(());
    }
    let opts = Drive::parse_stored(value);
    let get = |name: &str| {
        // `host` is the default key of USB and PCI values: `0000:01:00.0,pcie=1`.
        match opts.file.split_once('=') {
            Some((k, v)) if k == name => return Some(v.to_string()),
            None if name == "host" && !opts.file.is_empty() => return Some(opts.file.clone()),
            _ => {}
        }
        opts.opts.get(name).cloned()
    };
    if numbered(key, "serial") {
        if value == "socket" {
            return check_vm_perm(c, who, vmid, pool, &["VM.Config.HWType"], false);
        }
        return Err(ApiError::internal(format!(
            "only root can {verb} '{key}' config for real devices"
        )));
    }
    if numbered(key, "usb") {
        check_vm_perm(c, who, vmid, pool, &["VM.Config.HWType"], false)?;
        return match (get("host"), get("mapping")) {
            (Some(h), _) if h.eq_ignore_ascii_case("spice") => Ok(()),
            (Some(_), _) => Err(ApiError::internal(format!(
                "only root can set '{key}' config for real devices"
            ))),
            (None, Some(m)) => auth::require(c, who, &format!("/mapping/usb/{m}"), "Mapping.Use"),
            (None, None) => Err(ApiError::internal("either 'host' or 'mapping' must be set.")),
        };
    }
    if numbered(key, "hostpci") {
        match (get("host"), get("mapping")) {
            (Some(_), _) => {
                return Err(ApiError::internal(format!(
                    "only root can set '{key}' config for non-mapped devices"
                )))
            }
            (None, Some(m)) => {
                auth::require(c, who, &format!("/mapping/pci/{m}"), "Mapping.Use")?;
                check_vm_perm(c, who, vmid, pool, &["VM.Config.HWType"], false)?;
            }
            (None, None) => return Err(ApiError::internal("either 'host' or 'mapping' must be set.")),
        }
        if get("romfile").is_some() {
            return Err(ApiError::param(key, "only root@pam can set 'romfile' option"));
        }
    }
    Ok(())
}

/// The privileges a drive value needs on the VM (update's `check_drive_perms`).
pub fn check_drive(c: &Cluster, who: &Identity, vmid: u32, value: &str) -> ApiResult<()> {
    let d = Drive::parse_stored(value);
    let cloudinit = d.file.ends_with("cloudinit");
    let privs: &[&str] = if cloudinit {
        &["VM.Config.Cloudinit", "VM.Config.CDROM"]
    } else if d.is_cdrom() {
        &["VM.Config.CDROM"]
    } else {
        &["VM.Config.Disk"]
    };
    check_vm_perm(c, who, vmid, None, privs, false)
}

/// `assert_tag_permissions` (pve-guest-common `GuestHelpers.pm`): `VM.Config.Options` on
/// the VM, then each tag changed between `old` and `new` as datacenter.cfg allows it.
pub fn check_tags(c: &Cluster, who: &Identity, vmid: u32, old: Option<&str>, new: Option<&str>) -> ApiResult<()> {
    check_vm_perm(c, who, vmid, None, &["VM.Config.Options"], false)?;
    crate::tag_access::assert_changes_allowed(c, who, old, new)
}

/// `check_bridge_access` over the `netN` values: `SDN.Use` on
/// `/sdn/zones/localnetwork/<bridge>`, or with a VLAN tag (and each trunk) on `.../<tag>`.
pub fn check_bridges<'a>(
    c: &Cluster,
    who: &Identity,
    nets: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> ApiResult<()> {
    if who.is_root() {
        return Ok(());
    }
    for (key, value) in nets {
        if !disks::is_net_key(key) {
            continue;
        }
        let d = Drive::parse_stored(value);
        let Some(bridge) = d.opts.get("bridge") else { continue };
        let base = format!("/sdn/zones/localnetwork/{bridge}");
        let tag = d.opts.get("tag").filter(|t| !t.is_empty() && *t != "0");
        let trunks: Vec<String> = d.opts.get("trunks").map(|t| trunk_tags(t)).unwrap_or_default();
        if let Some(t) = tag {
            auth::require(c, who, &format!("{base}/{t}"), "SDN.Use")?;
        }
        for t in &trunks {
            auth::require(c, who, &format!("{base}/{t}"), "SDN.Use")?;
        }
        if tag.is_none() && trunks.is_empty() {
            auth::require(c, who, &base, "SDN.Use")?;
        }
    }
    Ok(())
}

/// `10;20-22` → 10, 20, 21, 22.
fn trunk_tags(trunks: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in trunks.split(';').filter(|p| !p.is_empty()) {
        match part
            .split_once('-')
            .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        {
            Some((a, b)) => out.extend((a..=b).map(|t| t.to_string())),
            None => out.push(part.to_string()),
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{AclDef, UserDef};

    fn setup(roles: &[(&str, &str)]) -> (Cluster, Identity) {
        let mut c = crate::Scenario::default_cluster().to_cluster().unwrap();
        c.users.push(UserDef {
            userid: "ops@pve".into(),
            password: None,
            enable: true,
            totp_secret: None,
            tokens: vec![],
        });
        for (path, role) in roles {
            c.acls.push(AclDef {
                path: path.to_string(),
                ugid: "ops@pve".into(),
                roles: vec![role.to_string()],
                propagate: true,
            });
        }
        (
            c,
            Identity {
                userid: "ops@pve".into(),
                tokenid: None,
            },
        )
    }

    #[test]
    fn each_key_needs_its_class_and_unknown_keys_are_root_only() {
        let (mut c, ops) = setup(&[]);
        c.roles.insert("cpu-only".into(), vec!["VM.Config.CPU".into()]);
        c.acls.push(AclDef {
            path: "/vms".into(),
            ugid: "ops@pve".into(),
            roles: vec!["cpu-only".into()],
            propagate: true,
        });
        assert!(check_modify_config(&c, &ops, 100, None, &["cores", "numa1", "scsi1", "tags", "unused0"]).is_ok());
        assert_eq!(
            check_modify_config(&c, &ops, 100, None, &["memory"])
                .unwrap_err()
                .message,
            "Permission check failed (/vms/100, VM.Config.Memory)"
        );
        assert_eq!(
            check_modify_config(&c, &ops, 100, None, &["ipconfig0"])
                .unwrap_err()
                .message,
            "Permission check failed (/vms/100, VM.Config.Cloudinit|VM.Config.Network)"
        );
        for k in ["args", "hookscript", "affinity", "vmgenid", "some-future-key"] {
            let e = check_modify_config(&c, &ops, 100, None, &[k]).unwrap_err();
            assert_eq!((e.status, e.message), (500, format!("only root can set '{k}' config")));
        }
        let root = Identity {
            userid: "root@pam".into(),
            tokenid: None,
        };
        assert!(check_modify_config(&c, &root, 100, None, &["args"]).is_ok());
        let root_token = Identity {
            userid: "root@pam".into(),
            tokenid: Some("t".into()),
        };
        assert!(
            check_modify_config(&c, &root_token, 100, None, &["hookscript"]).is_err(),
            "a token of root is not root@pam"
        );
    }

    #[test]
    fn devices_by_value() {
        let (c, ops) = setup(&[("/", "PVEVMAdmin")]);
        assert!(check_device(&c, &ops, 100, None, "serial0", "socket", "set").is_ok());
        assert_eq!(
            check_device(&c, &ops, 100, None, "serial0", "/dev/ttyS0", "set")
                .unwrap_err()
                .message,
            "only root can set 'serial0' config for real devices"
        );
        assert!(check_device(&c, &ops, 100, None, "usb0", "host=spice", "set").is_ok());
        assert!(check_device(&c, &ops, 100, None, "usb0", "host=1234:5678", "set").is_err());
        assert_eq!(
            check_device(&c, &ops, 100, None, "hostpci0", "0000:01:00.0,pcie=1", "set")
                .unwrap_err()
                .message,
            "only root can set 'hostpci0' config for non-mapped devices"
        );
        assert_eq!(
            check_device(&c, &ops, 100, None, "hostpci0", "mapping=gpu", "set")
                .unwrap_err()
                .message,
            "Permission check failed (/mapping/pci/gpu, Mapping.Use)"
        );
    }

    #[test]
    fn bridges_and_vlans() {
        let (c, ops) = setup(&[("/sdn/zones/localnetwork/vmbr0", "PVESDNUser")]);
        assert!(check_bridges(&c, &ops, [("net0", "virtio=BC:24:11:00:00:01,bridge=vmbr0")]).is_ok());
        assert!(
            check_bridges(&c, &ops, [("net0", "virtio=BC:24:11:00:00:01,bridge=vmbr0,tag=20")]).is_ok(),
            "the bridge's ACL propagates to its VLANs"
        );
        let e = check_bridges(&c, &ops, [("net1", "virtio=BC:24:11:00:00:02,bridge=vmbr1")]).unwrap_err();
        assert_eq!(
            e.message,
            "Permission check failed (/sdn/zones/localnetwork/vmbr1, SDN.Use)"
        );
        let (c, ops) = setup(&[("/sdn/zones/localnetwork/vmbr1/20", "PVESDNUser")]);
        assert!(check_bridges(&c, &ops, [("net1", "virtio=x,bridge=vmbr1,tag=20")]).is_ok());
        assert!(
            check_bridges(&c, &ops, [("net1", "virtio=x,bridge=vmbr1")]).is_err(),
            "the VLAN does not open the whole bridge"
        );
        assert_eq!(
            check_bridges(&c, &ops, [("net1", "virtio=x,bridge=vmbr1,trunks=20;30")])
                .unwrap_err()
                .message,
            "Permission check failed (/sdn/zones/localnetwork/vmbr1/30, SDN.Use)"
        );
    }
}
