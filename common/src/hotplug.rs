//! Which changes a running VM takes at once and which PVE keeps pending until it
//! restarts (pve-api.md §8), for the rules more than one module needs: the VM's hotplug
//! features and NICs. A dry run uses them to report `pending` as a real run would; a
//! real run reads the truth from `GET .../pending` after writing.

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
pub fn nic_stays_pending(current: Option<&str>, new: Option<&str>, features: &[String]) -> bool {
    if features.iter().any(|f| f == "network") {
        return false;
    }
    let (Some(current), Some(new)) = (current, new) else {
        // Adding or removing a NIC needs the network hotplug feature.
        return true;
    };
    let (Ok(cur), Ok(next)) = (propstring::parse(current, &formats::NET), propstring::parse(new, &formats::NET)) else {
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
pub fn disk_stays_pending(key: &str, current: Option<&str>, new: Option<&str>, features: &[String]) -> bool {
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
    let Some(f) = formats::for_config_key(key) else { return true };
    let (Ok(cur), Ok(next)) = (propstring::parse(current, f), propstring::parse(new, f)) else {
        return true;
    };
    if cur.get("file") != next.get("file") {
        return !features.iter().any(|f| f == "disk");
    }
    !propstring::differing_keys(&cur, &next, f).iter().all(|k| disk_option_is_live(k))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(disk_stays_pending("scsi1", None, Some("local-lvm:8"), &features(Some("network"))));
        assert!(disk_stays_pending("sata1", None, Some("local-lvm:8"), &all));
        assert!(!disk_stays_pending("scsi1", Some(cur), None, &all));
        assert!(disk_stays_pending("ide1", Some(cur), None, &all));
        assert!(disk_stays_pending("scsi1", Some(cur), Some("local-lvm:vm-100-disk-1,cache=none,size=8G"), &all));
        assert!(!disk_stays_pending("scsi1", Some(cur), Some("local-lvm:vm-100-disk-1,mbps_rd=10,size=16G"), &all));
        assert!(!disk_stays_pending("ide2", Some("none,media=cdrom"), Some("isos:iso/x.iso,media=cdrom"), &all));
        assert!(!disk_stays_pending("unused0", Some("local-lvm:vm-100-disk-1"), None, &all));
    }

    #[test]
    fn nics_follow_the_network_feature() {
        let none = features(Some("0"));
        assert!(!nic_stays_pending(Some(CUR), Some("virtio=BC:24:11:00:00:01,bridge=vmbr1,tag=5"), &none));
        assert!(nic_stays_pending(Some(CUR), Some("e1000=BC:24:11:00:00:01,bridge=vmbr0"), &none));
        assert!(nic_stays_pending(None, Some(CUR), &none));
        assert!(nic_stays_pending(Some(CUR), None, &none));
        assert!(!nic_stays_pending(None, Some(CUR), &features(None)));
        assert!(!nic_stays_pending(Some(CUR), Some("e1000=BC:24:11:00:00:01,bridge=vmbr0"), &features(None)));
    }
}
