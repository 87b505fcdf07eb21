//! The boot order (`boot: order=scsi0;ide2;net0`) as qemu-server sets it and keeps it:
//! a VM created without one gets its first disk, first CD-ROM drive and first NIC
//! (`create_vm` → `get_default_bootdevices`), and `update_vm_api` takes each deleted key
//! out of the order ("remove from bootorder if necessary", unless `bootorder` itself is
//! deleted). A legacy order (`boot: cdn`) names no devices and is left as it is.

use serde_json::{Map, Value};

/// The drive keys in the order qemu-server searches them for a boot device
/// (`Drive.pm` `valid_drive_names_for_boot`: ide0-3, scsi0-30, virtio0-15, sata0-5).
fn drive_search_order() -> impl Iterator<Item = String> {
    [("ide", 4), ("scsi", 31), ("virtio", 16), ("sata", 6)]
        .into_iter()
        .flat_map(|(bus, n)| (0..n).map(move |i| format!("{bus}{i}")))
}

/// The boot order qemu-server gives a VM created without one: its first disk, its first
/// CD-ROM drive (a cloud-init drive counts: `resolve_first_disk` calls `drive_is_cdrom`
/// without excluding it), its first NIC; `None` when it has none of them.
pub fn default_order(config: &Map<String, Value>) -> Option<String> {
    let text = |k: &str| {
        config
            .get(k)
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
    };
    let is_cdrom = |v: &str| v.split(',').any(|p| p == "media=cdrom") || v == "cdrom" || v.contains("cloudinit");
    let mut disk = None;
    let mut cdrom = None;
    for key in drive_search_order() {
        let Some(value) = text(&key) else { continue };
        match is_cdrom(&value) {
            true if cdrom.is_none() => cdrom = Some(key),
            false if disk.is_none() => disk = Some(key),
            _ => {}
        }
    }
    let net = (0..32).map(|i| format!("net{i}")).find(|k| config.contains_key(k));
    let devices: Vec<String> = [disk, cdrom, net].into_iter().flatten().collect();
    (!devices.is_empty()).then(|| format!("order={}", devices.join(";")))
}

/// `boot` with the devices of `removed` taken out of its `order`; `None` when nothing
/// changes (no `order`, or none of them in it).
pub fn without(boot: &str, removed: &[&str]) -> Option<String> {
    let parts: Vec<&str> = boot.split(',').collect();
    let at = parts.iter().position(|p| p.starts_with("order="))?;
    let devices: Vec<&str> = parts[at]["order=".len()..]
        .split(';')
        .filter(|d| !d.is_empty())
        .collect();
    let kept: Vec<&str> = devices.iter().copied().filter(|d| !removed.contains(d)).collect();
    if kept.len() == devices.len() {
        return None;
    }
    let order = format!("order={}", kept.join(";"));
    let rest: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| if i == at { order.clone() } else { p.to_string() })
        .collect();
    Some(rest.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_new_vm_boots_from_its_first_disk_cdrom_and_nic() {
        let order = |config: Value| default_order(config.as_object().unwrap());
        assert_eq!(
            order(json!({"virtio0": "local-lvm:4", "scsi1": "local-lvm:8", "ide2": "none,media=cdrom", "net1": "virtio,bridge=vmbr0", "net0": "virtio,bridge=vmbr1"})).as_deref(),
            Some("order=scsi1;ide2;net0"),
            "scsi before virtio; net0 before net1"
        );
        assert_eq!(
            order(json!({"ide0": "local-lvm:cloudinit", "scsi0": "local-lvm:4"})).as_deref(),
            Some("order=scsi0;ide0"),
            "a cloud-init drive counts as a CD-ROM"
        );
        assert_eq!(
            order(json!({"net0": "virtio,bridge=vmbr0"})).as_deref(),
            Some("order=net0")
        );
        assert_eq!(order(json!({"memory": "2048"})), None);
    }

    #[test]
    fn a_deleted_device_leaves_the_order() {
        assert_eq!(
            without("order=scsi0;ide2;net0", &["scsi0"]).as_deref(),
            Some("order=ide2;net0")
        );
        assert_eq!(
            without("order=scsi0;ide2;net0", &["net0", "ide2"]).as_deref(),
            Some("order=scsi0")
        );
        assert_eq!(without("order=scsi0", &["scsi0"]).as_deref(), Some("order="));
        assert_eq!(without("order=scsi0;net0", &["scsi1"]), None, "not in the order");
        assert_eq!(without("cdn", &["scsi0"]), None, "a legacy order names no device");
    }
}
