//! Which changes to a running VM PVE applies live and which stay pending until the VM
//! restarts (pve-api.md §8), so check mode can report `pending` like a real run does.
//! A real run reads the truth from `GET .../pending` after writing.

use ferrox_common::propstring::{self, formats};

use super::disk::is_disk_key;
use super::nic::is_net_key;

use ferrox_common::hotplug::CONFIG_ONLY;

/// Disk settings PVE changes on a running disk (I/O throttling).
fn disk_option_is_live(option: &str) -> bool {
    option.starts_with("mbps") || option.starts_with("iops") || option.starts_with("bps")
}

pub use ferrox_common::hotplug::features;

/// Whether writing `key` (from `current` to `new`) on a running VM stays pending.
pub fn stays_pending(key: &str, current: Option<&str>, new: &str, features: &[String]) -> bool {
    let has = |f: &str| features.iter().any(|x| x == f);
    if CONFIG_ONLY.contains(&key) || key.starts_with("ipconfig") {
        return false;
    }
    if is_net_key(key) {
        return ferrox_common::hotplug::nic_stays_pending(current, Some(new), features);
    }
    if is_disk_key(key) {
        if key == "efidisk0"
            || key == "tpmstate0"
            || key.starts_with("ide")
            || key.starts_with("sata")
        {
            // Never hotplugged; a CD-ROM medium change is the exception.
            return !(current.is_some() && new.contains("media=cdrom"));
        }
        let Some(current) = current else {
            return !has("disk");
        };
        let Some(f) = formats::for_config_key(key) else {
            return true;
        };
        let (Ok(cur), Ok(next)) = (propstring::parse(current, f), propstring::parse(new, f)) else {
            return true;
        };
        let changed = propstring::differing_keys(&cur, &next, f);
        return !changed
            .iter()
            .all(|k| disk_option_is_live(k) || k == "size");
    }
    match key {
        "vcpus" => !has("cpu"),
        "memory" => !has("memory"),
        "balloon" => current.is_none_or(|c| (c == "0") != (new == "0")),
        "tablet" => !has("usb"),
        k if k.starts_with("usb") => !has("usb"),
        "hotplug" => {
            let involved = |v: &str| v.contains("cpu") || v.contains("memory");
            current.is_some_and(involved) || involved(new)
        }
        _ => true,
    }
}

/// Whether deleting `key` (now `current`) from a running VM stays pending.
pub fn deletion_stays_pending(key: &str, current: &str, features: &[String]) -> bool {
    if CONFIG_ONLY.contains(&key) || key.starts_with("ipconfig") || key.starts_with("unused") {
        return false;
    }
    if is_net_key(key) {
        return ferrox_common::hotplug::nic_stays_pending(Some(current), None, features);
    }
    if is_disk_key(key) {
        return ferrox_common::hotplug::disk_stays_pending(key, Some(current), None, features);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default() -> Vec<String> {
        features(None)
    }

    #[test]
    fn cpu_layout_waits_for_a_restart_config_only_keys_do_not() {
        assert!(stays_pending("cores", Some("2"), "4", &default()));
        assert!(!stays_pending("onboot", None, "1", &default()));
        assert!(!stays_pending("ipconfig0", None, "ip=dhcp", &default()));
        assert!(stays_pending("memory", Some("2048"), "4096", &default()));
        assert!(!stays_pending(
            "memory",
            Some("2048"),
            "4096",
            &features(Some("memory,cpu"))
        ));
    }

    #[test]
    fn keys_without_a_hotplug_rule_wait_for_a_restart() {
        for key in ["affinity", "amd-sev", "intel-tdx", "ivshmem", "keephugepages", "vmgenid", "arch", "a-key-pve-adds-later"] {
            assert!(stays_pending(key, None, "1", &default()), "{key}");
        }
        assert!(!stays_pending("vmstatestorage", None, "local-lvm", &default()));
        assert!(stays_pending("efidisk0", Some("local-lvm:vm-1-disk-0,pre-enrolled-keys=1"), "local-lvm:vm-1-disk-0,ms-cert=2023k,pre-enrolled-keys=1", &default()));
    }

    #[test]
    fn deletions_follow_the_same_rules() {
        assert!(!deletion_stays_pending("tags", "a", &default()));
        assert!(!deletion_stays_pending("net1", "virtio=BC:24:11:00:00:01,bridge=vmbr0", &default()));
        assert!(deletion_stays_pending("net1", "virtio=BC:24:11:00:00:01,bridge=vmbr0", &features(Some("disk"))));
        assert!(deletion_stays_pending("ide2", "none,media=cdrom", &default()));
        assert!(deletion_stays_pending("cpu", "host", &default()));
    }

    #[test]
    fn nics_follow_the_network_feature() {
        let cur = "virtio=BC:24:11:00:00:01,bridge=vmbr0";
        assert!(!stays_pending(
            "net0",
            Some(cur),
            "virtio=BC:24:11:00:00:01,bridge=vmbr1",
            &features(Some("0"))
        ));
        assert!(stays_pending(
            "net0",
            Some(cur),
            "e1000=BC:24:11:00:00:01,bridge=vmbr0",
            &features(Some("0"))
        ));
        assert!(!stays_pending(
            "net1",
            None,
            "virtio,bridge=vmbr0",
            &default()
        ));
        assert!(stays_pending(
            "net1",
            None,
            "virtio,bridge=vmbr0",
            &features(Some("disk"))
        ));
    }

    #[test]
    fn disks_follow_the_disk_feature_and_the_bus() {
        assert!(!stays_pending("scsi1", None, "local-lvm:8", &default()));
        assert!(stays_pending("sata1", None, "local-lvm:8", &default()));
        let cur = "local-lvm:vm-100-disk-0,size=32G";
        assert!(stays_pending(
            "scsi0",
            Some(cur),
            "local-lvm:vm-100-disk-0,cache=writeback",
            &default()
        ));
        assert!(!stays_pending(
            "scsi0",
            Some(cur),
            "local-lvm:vm-100-disk-0,mbps_rd=100",
            &default()
        ));
        assert!(!stays_pending(
            "ide2",
            Some("none,media=cdrom"),
            "isos:iso/x.iso,media=cdrom",
            &default()
        ));
    }
}
