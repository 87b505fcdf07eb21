//! The privilege a VM config key needs, as qemu-server's `check_vm_modify_config_perm`
//! sorts keys into classes (and checks drives, devices and tags by value). A key in no
//! class — `args`, `hookscript`, `affinity`, `vmgenid`, or one a later PVE adds — may be
//! set by `root@pam` only, so keys in no class need no list here. A key the bundled
//! schema does not know at all (one a newer PVE added) may be in a class of that PVE's
//! qemu-server: its need is [`KeyNeed::Unknown`], left to the cluster to decide.

/// What writing (or deleting) one config key takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyNeed {
    /// All of these on the VM (or the pool a create puts it in).
    All(&'static [&'static str]),
    /// One of these on the VM.
    Any(&'static [&'static str]),
    /// `root@pam` only (a token of root's included in "not root").
    RootOnly,
    /// A key the bundled schema does not know: the cluster's qemu-server decides (a
    /// prediction here could refuse what the cluster allows).
    Unknown,
}

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
const OPTIONS: &[&str] = &[
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
    "tags",
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

/// `base` followed by a number: `net0`, `unused3`.
pub(crate) fn numbered(key: &str, base: &str) -> bool {
    key.strip_prefix(base)
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

pub use crate::propstring::is_drive_key as is_drive;

/// What the value `value` of `key` needs on the VM (`value`: the new value, or for a
/// deletion the one being deleted).
pub fn need(key: &str, value: &str) -> KeyNeed {
    if is_drive(key) || key == "cdrom" {
        return drive(value);
    }
    if numbered(key, "unused") {
        return KeyNeed::All(&["VM.Config.Disk"]);
    }
    if numbered(key, "serial") {
        return if value == "socket" {
            KeyNeed::All(&["VM.Config.HWType"])
        } else {
            KeyNeed::RootOnly
        };
    }
    if numbered(key, "usb") {
        let host = device_host(value);
        return match host {
            Some(h) if !h.eq_ignore_ascii_case("spice") => KeyNeed::RootOnly,
            _ => KeyNeed::All(&["VM.Config.HWType"]),
        };
    }
    if numbered(key, "hostpci") {
        // A mapped device also needs Mapping.Use on /mapping/pci/<name> (see `needs`).
        return if device_host(value).is_some() {
            KeyNeed::RootOnly
        } else {
            KeyNeed::All(&["VM.Config.HWType"])
        };
    }
    if numbered(key, "virtiofs") {
        return KeyNeed::All(&["VM.Config.Disk"]);
    }
    if CPU.contains(&key) || numbered(key, "numa") {
        KeyNeed::All(&["VM.Config.CPU"])
    } else if MEMORY.contains(&key) {
        KeyNeed::All(&["VM.Config.Memory"])
    } else if HWTYPE.contains(&key) {
        KeyNeed::All(&["VM.Config.HWType"])
    } else if OPTIONS.contains(&key) {
        KeyNeed::All(&["VM.Config.Options"])
    } else if key == "freeze" {
        KeyNeed::All(&["VM.PowerMgmt"])
    } else if DISK_OPTIONS.contains(&key) {
        KeyNeed::All(&["VM.Config.Disk"])
    } else if numbered(key, "net") {
        KeyNeed::All(&["VM.Config.Network"])
    } else if CLOUDINIT.contains(&key) || numbered(key, "ipconfig") {
        KeyNeed::Any(&["VM.Config.Cloudinit", "VM.Config.Network"])
    } else if key == "vmstate" {
        KeyNeed::All(&["VM.Config.Disk", "VM.PowerMgmt"])
    } else if crate::propstring::keys::config_key(key).is_none() {
        KeyNeed::Unknown
    } else {
        KeyNeed::RootOnly
    }
}

/// A drive value: a cloud-init drive needs Cloudinit and CDROM, a CD-ROM CDROM, a disk Disk.
fn drive(value: &str) -> KeyNeed {
    let file = value.split(',').next().unwrap_or("");
    let cdrom = value.split(',').any(|p| p == "media=cdrom");
    if file.ends_with("cloudinit") {
        KeyNeed::All(&["VM.Config.Cloudinit", "VM.Config.CDROM"])
    } else if cdrom {
        KeyNeed::All(&["VM.Config.CDROM"])
    } else {
        KeyNeed::All(&["VM.Config.Disk"])
    }
}

/// The `host` of a USB or PCI value (its default key: `0000:01:00.0,pcie=1`).
fn device_host(value: &str) -> Option<String> {
    for (i, part) in value.split(',').enumerate() {
        match part.split_once('=') {
            Some(("host", h)) => return Some(h.to_string()),
            None if i == 0 && !part.is_empty() => return Some(part.to_string()),
            _ => {}
        }
    }
    None
}

/// The `mapping` of a USB or PCI value.
pub fn device_mapping(value: &str) -> Option<&str> {
    value.split(',').find_map(|p| p.strip_prefix("mapping="))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_fall_into_qemu_servers_classes() {
        assert_eq!(need("cores", "4"), KeyNeed::All(&["VM.Config.CPU"]));
        assert_eq!(need("numa0", "cpus=0-1"), KeyNeed::All(&["VM.Config.CPU"]));
        assert_eq!(need("balloon", "0"), KeyNeed::All(&["VM.Config.Memory"]));
        assert_eq!(
            need("scsihw", "virtio-scsi-single"),
            KeyNeed::All(&["VM.Config.HWType"])
        );
        assert_eq!(need("tags", "a;b"), KeyNeed::All(&["VM.Config.Options"]));
        assert_eq!(need("boot", "order=scsi0"), KeyNeed::All(&["VM.Config.Disk"]));
        assert_eq!(
            need("net1", "virtio,bridge=vmbr1"),
            KeyNeed::All(&["VM.Config.Network"])
        );
        assert_eq!(
            need("ipconfig0", "ip=dhcp"),
            KeyNeed::Any(&["VM.Config.Cloudinit", "VM.Config.Network"])
        );
        assert_eq!(need("scsi1", "vmdata:32"), KeyNeed::All(&["VM.Config.Disk"]));
        assert_eq!(
            need("ide2", "isos:iso/x.iso,media=cdrom"),
            KeyNeed::All(&["VM.Config.CDROM"])
        );
        assert_eq!(
            need("ide0", "local-lvm:cloudinit,media=cdrom"),
            KeyNeed::All(&["VM.Config.Cloudinit", "VM.Config.CDROM"])
        );
    }

    #[test]
    fn a_key_the_schema_does_not_know_is_left_to_the_cluster() {
        assert_eq!(need("ivshmem-next", "size=32"), KeyNeed::Unknown);
        assert_eq!(
            need("args", "-foo"),
            KeyNeed::RootOnly,
            "known to the schema, in no class"
        );
        assert_eq!(need("affinity", "0-3"), KeyNeed::RootOnly);
    }

    #[test]
    fn keys_in_no_class_and_raw_devices_are_root_only() {
        for k in ["args", "hookscript", "affinity", "vmgenid", "lock"] {
            assert_eq!(need(k, "x"), KeyNeed::RootOnly, "{k}");
        }
        assert_eq!(need("hostpci0", "0000:01:00.0,pcie=1"), KeyNeed::RootOnly);
        assert_eq!(
            need("hostpci0", "mapping=gpu,pcie=1"),
            KeyNeed::All(&["VM.Config.HWType"])
        );
        assert_eq!(need("usb0", "host=1234:5678"), KeyNeed::RootOnly);
        assert_eq!(need("usb0", "host=spice"), KeyNeed::All(&["VM.Config.HWType"]));
        assert_eq!(need("serial0", "/dev/ttyS0"), KeyNeed::RootOnly);
        assert_eq!(need("serial0", "socket"), KeyNeed::All(&["VM.Config.HWType"]));
    }
}
