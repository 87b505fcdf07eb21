//! Which changes a running VM takes at once and which PVE keeps pending until it
//! restarts (pve-api.md §8; qemu-server `PVE/QemuServer.pm`: `vmconfig_hotplug_pending`,
//! `vmconfig_update_disk`, `vmconfig_update_net`): the one rule of every module and of
//! check-mode planning, [`stays_pending`]. A dry run uses it to report `pending` as a
//! real run would; a real run reads the truth from `GET .../pending` after writing.

use crate::privileges::keys::{is_drive, numbered};
use crate::propstring::{self, formats};

/// Keys PVE only writes to the config, applied at once on a running VM (qemu-server's
/// fast-plug options, the cloud-init keys, and the cgroup limits it changes live).
/// Every key no rule here names waits for a restart, as in PVE, whose hotplug skips
/// any option it has no handler for: `affinity`, `amd-sev`, `intel-tdx`, `ivshmem`,
/// `keephugepages`, `vmgenid`, `arch`, `efidisk0` (its `ms-cert` enrollment too), and
/// keys PVE adds later.
pub const CONFIG_ONLY: &[&str] = &[
    "name",
    "description",
    "tags",
    "onboot",
    "protection",
    "startup",
    "hookscript",
    "lock",
    "migrate_downtime",
    "migrate_speed",
    "shares",
    "vmstatestorage",
    "cpulimit",
    "cpuunits",
    "ciuser",
    "cipassword",
    "nameserver",
    "searchdomain",
    "sshkeys",
    "citype",
    "cicustom",
    "ciupgrade",
];

/// Whether writing `key` (`new: Some`) or deleting it (`new: None`), now `current`, on a
/// running VM stays pending until the VM restarts. Keys without a rule wait for a
/// restart, as PVE's hotplug skips any option it has no handler for.
pub fn stays_pending(key: &str, current: Option<&str>, new: Option<&str>, features: &[String]) -> bool {
    let has = |f: &str| features.iter().any(|x| x == f);
    if CONFIG_ONLY.contains(&key) || key.starts_with("ipconfig") || numbered(key, "unused") {
        return false;
    }
    if numbered(key, "net") {
        return nic_stays_pending(current, new, features);
    }
    if is_drive(key) {
        return disk_stays_pending(key, current, new, features);
    }
    let Some(new) = new else {
        return true;
    };
    match key {
        "vcpus" => !has("cpu"),
        "memory" => !has("memory"),
        // Live through the balloon device, unless it is being added or removed.
        "balloon" => current.is_none_or(|c| (c == "0") != (new == "0")),
        "tablet" => !has("usb"),
        k if numbered(k, "usb") => !has("usb"),
        // Turning cpu or memory hotplug on or off needs a restart.
        "hotplug" => {
            let involved = |v: &str| v.contains("cpu") || v.contains("memory");
            current.is_some_and(involved) || involved(new)
        }
        _ => true,
    }
}

/// NIC settings PVE changes on a running NIC without the `network` hotplug feature.
const NIC_LIVE: &[&str] = &["bridge", "tag", "trunks", "firewall", "rate", "link_down"];

/// The VM's hotplug features from its `hotplug` key (absent or `1`: network, disk, usb).
pub fn features(hotplug: Option<&str>) -> Vec<String> {
    match hotplug.map(str::trim) {
        None | Some("1") => vec!["network".into(), "disk".into(), "usb".into()],
        Some("0") | Some("") => Vec::new(),
        Some(list) => list.split(',').map(|s| s.trim().to_string()).collect(),
    }
}

/// Whether a NIC change on a running VM stays pending: `current`/`new` are the `netN`
/// entries before and after (`None`: absent, i.e. a new NIC or a deletion).
fn nic_stays_pending(current: Option<&str>, new: Option<&str>, features: &[String]) -> bool {
    if features.iter().any(|f| f == "network") {
        return false;
    }
    let (Some(current), Some(new)) = (current, new) else {
        // Adding or removing a NIC needs the network hotplug feature.
        return true;
    };
    let (Ok(cur), Ok(next)) = (
        propstring::parse(current, &formats::NET),
        propstring::parse(new, &formats::NET),
    ) else {
        return true;
    };
    let changed = propstring::differing_keys(&cur, &next, &formats::NET);
    !changed.iter().all(|k| NIC_LIVE.contains(&k.as_str()))
}

/// Disk settings PVE changes on a running disk (I/O throttling; the size grows live).
fn disk_option_is_live(option: &str) -> bool {
    option.starts_with("mbps") || option.starts_with("iops") || option.starts_with("bps") || option == "size"
}

/// Whether a change of drive `key` on a running VM stays pending: `current`/`new` are
/// the entries before and after (`None`: a new drive, or a removal). ide/sata drives,
/// `efidisk0` and `tpmstate0` are never hotplugged (a CD-ROM medium change is live);
/// scsi/virtio drives come and go with the `disk` feature; of a drive's settings only
/// throttling and the size change live.
fn disk_stays_pending(key: &str, current: Option<&str>, new: Option<&str>, features: &[String]) -> bool {
    let hotpluggable_bus = key.starts_with("scsi") || key.starts_with("virtio");
    let (Some(current), Some(new)) = (current, new) else {
        if key.starts_with("unused") {
            return false;
        }
        return !hotpluggable_bus || !features.iter().any(|f| f == "disk");
    };
    if !hotpluggable_bus {
        return !new.contains("media=cdrom");
    }
    let Some(f) = formats::for_config_key(key) else {
        return true;
    };
    let (Ok(cur), Ok(next)) = (propstring::parse(current, f), propstring::parse(new, f)) else {
        return true;
    };
    if cur.get("file") != next.get("file") {
        return !features.iter().any(|f| f == "disk");
    }
    !propstring::differing_keys(&cur, &next, f)
        .iter()
        .all(|k| disk_option_is_live(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row: a change to a running VM, the hotplug setting, whether PVE keeps it
    /// pending, and where qemu-server decides it (PVE/QemuServer.pm).
    struct Row {
        key: &'static str,
        current: Option<&'static str>,
        new: Option<&'static str>,
        hotplug: Option<&'static str>,
        pending: bool,
        pve: &'static str,
    }

    const DISK: &str = "local-lvm:vm-100-disk-0,size=32G";
    const NET: &str = "virtio=BC:24:11:00:00:01,bridge=vmbr0";

    const TABLE: &[Row] = &[
        Row {
            key: "name",
            current: Some("a"),
            new: Some("b"),
            hotplug: Some("0"),
            pending: false,
            pve: "vmconfig_hotplug_pending: fast-plug option, written at once",
        },
        Row {
            key: "ciuser",
            current: None,
            new: Some("admin"),
            hotplug: Some("0"),
            pending: false,
            pve: "cloud-init keys: config only (the drive is rebuilt at start)",
        },
        Row {
            key: "cores",
            current: Some("2"),
            new: Some("4"),
            hotplug: None,
            pending: true,
            pve: "vmconfig_hotplug_pending: no handler for cores, skip",
        },
        Row {
            key: "vcpus",
            current: Some("2"),
            new: Some("4"),
            hotplug: Some("cpu"),
            pending: false,
            pve: "vmconfig_hotplug_pending: vcpus with the cpu feature, qemu_cpu_hotplug",
        },
        Row {
            key: "vcpus",
            current: Some("2"),
            new: Some("4"),
            hotplug: None,
            pending: true,
            pve: "vmconfig_hotplug_pending: vcpus without the cpu feature, skip",
        },
        Row {
            key: "memory",
            current: Some("2048"),
            new: Some("4096"),
            hotplug: Some("memory"),
            pending: false,
            pve: "vmconfig_hotplug_pending: memory with the memory feature, qemu_memory_hotplug",
        },
        Row {
            key: "memory",
            current: Some("2048"),
            new: Some("4096"),
            hotplug: None,
            pending: true,
            pve: "vmconfig_hotplug_pending: memory without the memory feature, skip",
        },
        Row {
            key: "balloon",
            current: Some("1024"),
            new: Some("2048"),
            hotplug: None,
            pending: false,
            pve: "vmconfig_hotplug_pending: balloon, vm_mon_cmd balloon",
        },
        Row {
            key: "balloon",
            current: Some("0"),
            new: Some("2048"),
            hotplug: None,
            pending: true,
            pve: "vmconfig_hotplug_pending: no balloon device while balloon=0, skip",
        },
        Row {
            key: "tablet",
            current: None,
            new: Some("1"),
            hotplug: None,
            pending: false,
            pve: "vmconfig_hotplug_pending: tablet with the usb feature",
        },
        Row {
            key: "hotplug",
            current: Some("network,disk"),
            new: Some("network,disk,cpu"),
            hotplug: None,
            pending: true,
            pve: "vmconfig_hotplug_pending: hotplug, cpu/memory changes skip",
        },
        Row {
            key: "affinity",
            current: None,
            new: Some("0-3"),
            hotplug: None,
            pending: true,
            pve: "vmconfig_hotplug_pending: no handler, skip",
        },
        Row {
            key: "net1",
            current: None,
            new: Some(NET),
            hotplug: None,
            pending: false,
            pve: "vmconfig_hotplug_pending: net with the network feature, vm_deviceplug",
        },
        Row {
            key: "net1",
            current: None,
            new: Some(NET),
            hotplug: Some("disk"),
            pending: true,
            pve: "vmconfig_hotplug_pending: net without the network feature, skip",
        },
        Row {
            key: "net0",
            current: Some(NET),
            new: Some("virtio=BC:24:11:00:00:01,bridge=vmbr1,tag=5"),
            hotplug: Some("0"),
            pending: false,
            pve: "vmconfig_update_net: bridge/tag/firewall/rate/link_down changed live",
        },
        Row {
            key: "net0",
            current: Some(NET),
            new: Some("e1000=BC:24:11:00:00:01,bridge=vmbr0"),
            hotplug: Some("0"),
            pending: true,
            pve: "vmconfig_update_net: model change needs the network feature",
        },
        Row {
            key: "net0",
            current: Some(NET),
            new: None,
            hotplug: Some("disk"),
            pending: true,
            pve: "vmconfig_delete_or_detach_drive/net: unplug needs the network feature",
        },
        Row {
            key: "scsi1",
            current: None,
            new: Some("local-lvm:8"),
            hotplug: None,
            pending: false,
            pve: "vmconfig_update_disk: new scsi disk with the disk feature, vm_deviceplug",
        },
        Row {
            key: "scsi1",
            current: None,
            new: Some("local-lvm:8"),
            hotplug: Some("network"),
            pending: true,
            pve: "vmconfig_update_disk: without the disk feature, skip",
        },
        Row {
            key: "sata1",
            current: None,
            new: Some("local-lvm:8"),
            hotplug: None,
            pending: true,
            pve: "vm_deviceplug: sata is not hotpluggable",
        },
        Row {
            key: "scsi0",
            current: Some(DISK),
            new: Some("local-lvm:vm-100-disk-0,mbps_rd=100,size=32G"),
            hotplug: None,
            pending: false,
            pve: "vmconfig_update_disk: throttling changed live (qemu_block_set_io_throttle)",
        },
        Row {
            key: "scsi0",
            current: Some(DISK),
            new: Some("local-lvm:vm-100-disk-0,cache=writeback,size=32G"),
            hotplug: None,
            pending: true,
            pve: "vmconfig_update_disk: other drive options, skip",
        },
        Row {
            key: "scsi0",
            current: Some(DISK),
            new: Some("local-lvm:vm-100-disk-7,size=32G"),
            hotplug: None,
            pending: false,
            pve: "vmconfig_update_disk: another volume with the disk feature, unplug and plug",
        },
        Row {
            key: "scsi0",
            current: Some(DISK),
            new: Some("local-lvm:vm-100-disk-7,size=32G"),
            hotplug: Some("network"),
            pending: true,
            pve: "vmconfig_update_disk: another volume without the disk feature, skip",
        },
        Row {
            key: "ide2",
            current: Some("none,media=cdrom"),
            new: Some("isos:iso/x.iso,media=cdrom"),
            hotplug: Some("0"),
            pending: false,
            pve: "vmconfig_update_disk: CD-ROM medium change, qemu_change_medium",
        },
        Row {
            key: "efidisk0",
            current: Some("local-lvm:vm-100-disk-1,pre-enrolled-keys=1"),
            new: Some("local-lvm:vm-100-disk-1,ms-cert=2023k,pre-enrolled-keys=1"),
            hotplug: None,
            pending: true,
            pve: "vmconfig_update_disk: efidisk0 is never hotplugged",
        },
        Row {
            key: "scsi1",
            current: Some(DISK),
            new: None,
            hotplug: None,
            pending: false,
            pve: "vmconfig_delete_or_detach_drive: unplug with the disk feature",
        },
        Row {
            key: "ide1",
            current: Some(DISK),
            new: None,
            hotplug: None,
            pending: true,
            pve: "vmconfig_delete_or_detach_drive: ide cannot be unplugged",
        },
        Row {
            key: "unused0",
            current: Some("local-lvm:vm-100-disk-3"),
            new: None,
            hotplug: Some("0"),
            pending: false,
            pve: "vmconfig_hotplug_pending: unused entries are config only",
        },
        Row {
            key: "cpu",
            current: Some("host"),
            new: None,
            hotplug: None,
            pending: true,
            pve: "vmconfig_hotplug_pending: deleting a key without a handler, skip",
        },
        Row {
            key: "tags",
            current: Some("a"),
            new: None,
            hotplug: Some("0"),
            pending: false,
            pve: "vmconfig_hotplug_pending: fast-plug option",
        },
    ];

    #[test]
    fn keys_without_a_hotplug_rule_wait_for_a_restart() {
        for key in [
            "affinity",
            "amd-sev",
            "intel-tdx",
            "ivshmem",
            "keephugepages",
            "vmgenid",
            "arch",
            "a-key-pve-adds-later",
        ] {
            assert!(stays_pending(key, None, Some("1"), &features(None)), "{key}");
        }
        assert!(!stays_pending(
            "vmstatestorage",
            None,
            Some("local-lvm"),
            &features(None)
        ));
    }

    #[test]
    fn every_change_follows_qemu_servers_hotplug_rules() {
        for row in TABLE {
            assert_eq!(
                stays_pending(row.key, row.current, row.new, &features(row.hotplug)),
                row.pending,
                "{} {:?} -> {:?} with hotplug {:?}: {}",
                row.key,
                row.current,
                row.new,
                row.hotplug,
                row.pve
            );
        }
    }

    const CUR: &str = "virtio=BC:24:11:00:00:01,bridge=vmbr0";

    #[test]
    fn features_default_to_network_disk_usb() {
        assert_eq!(features(None), ["network", "disk", "usb"]);
        assert_eq!(features(Some("1")), ["network", "disk", "usb"]);
        assert!(features(Some("0")).is_empty());
        assert_eq!(features(Some("disk,cpu")), ["disk", "cpu"]);
    }

    #[test]
    fn disks_follow_the_bus_and_the_disk_feature() {
        let all = features(None);
        let cur = "local-lvm:vm-100-disk-1,size=8G";
        assert!(!disk_stays_pending("scsi1", None, Some("local-lvm:8"), &all));
        assert!(disk_stays_pending(
            "scsi1",
            None,
            Some("local-lvm:8"),
            &features(Some("network"))
        ));
        assert!(disk_stays_pending("sata1", None, Some("local-lvm:8"), &all));
        assert!(!disk_stays_pending("scsi1", Some(cur), None, &all));
        assert!(disk_stays_pending("ide1", Some(cur), None, &all));
        assert!(disk_stays_pending(
            "scsi1",
            Some(cur),
            Some("local-lvm:vm-100-disk-1,cache=none,size=8G"),
            &all
        ));
        assert!(!disk_stays_pending(
            "scsi1",
            Some(cur),
            Some("local-lvm:vm-100-disk-1,mbps_rd=10,size=16G"),
            &all
        ));
        assert!(!disk_stays_pending(
            "ide2",
            Some("none,media=cdrom"),
            Some("isos:iso/x.iso,media=cdrom"),
            &all
        ));
        assert!(!disk_stays_pending(
            "unused0",
            Some("local-lvm:vm-100-disk-1"),
            None,
            &all
        ));
    }

    #[test]
    fn nics_follow_the_network_feature() {
        let none = features(Some("0"));
        assert!(!nic_stays_pending(
            Some(CUR),
            Some("virtio=BC:24:11:00:00:01,bridge=vmbr1,tag=5"),
            &none
        ));
        assert!(nic_stays_pending(
            Some(CUR),
            Some("e1000=BC:24:11:00:00:01,bridge=vmbr0"),
            &none
        ));
        assert!(nic_stays_pending(None, Some(CUR), &none));
        assert!(nic_stays_pending(Some(CUR), None, &none));
        assert!(!nic_stays_pending(None, Some(CUR), &features(None)));
        assert!(!nic_stays_pending(
            Some(CUR),
            Some("e1000=BC:24:11:00:00:01,bridge=vmbr0"),
            &features(None)
        ));
    }
}
