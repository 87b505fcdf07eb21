//! Values only PVE decides — the MAC of a new NIC, the volume of a new disk, the
//! size of an imported or EFI disk — are never invented by a dry run. Inside config
//! values (and so in diffs) they read `(known after apply)`, as Terraform says; in a
//! result the key is `null` and its path is listed in `known_after_apply`.

use serde_json::{Map, Value};

use crate::propstring::{self, formats};
use crate::size;

pub use crate::unknown_marker::{is_unknown, RESULT_KEY, UNKNOWN};

/// A config value as PVE would store it once written: a NIC gets a MAC, a disk to
/// allocate gets a volume (and the size PVE gives it). Other values are unchanged.
pub fn after_write(key: &str, value: &str) -> String {
    let Some(f) = formats::for_config_key(key) else {
        return value.to_string();
    };
    let Ok(mut props) = propstring::parse(value, f) else {
        return value.to_string();
    };
    if key.starts_with("net") {
        if props.get("macaddr").is_none() {
            props.set("macaddr", UNKNOWN);
        }
        return props.to_canonical(f);
    }
    let Some(file) = props.get("file").map(str::to_string) else {
        return value.to_string();
    };
    let Some((storage, rest)) = file.split_once(':') else {
        return value.to_string();
    };
    let imported = props.remove("import-from").is_some();
    let allocated = rest == "cloudinit" || rest.parse::<f64>().is_ok();
    if !imported && !allocated {
        return value.to_string();
    }
    props.set("file", format!("{storage}:{UNKNOWN}"));
    if rest == "cloudinit" {
        props.set("media", "cdrom");
    }
    let fixed_size = matches!(key, "efidisk0" | "tpmstate0");
    match rest.parse::<f64>() {
        Ok(gib) if !imported && !fixed_size && gib.is_finite() && gib > 0.0 => {
            props.set("size", size::format((gib * size::GIB as f64).round() as u64));
        }
        _ if rest != "cloudinit" => props.set("size", UNKNOWN),
        _ => {}
    }
    props.to_canonical(f)
}

/// Every value of a config as PVE would store it once written ([`after_write`]).
pub fn config_after_write(config: &Map<String, Value>) -> Map<String, Value> {
    config
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => (k.clone(), Value::String(after_write(k, s))),
            other => (k.clone(), other.clone()),
        })
        .collect()
}

/// The paths (`mac.net0`) of the entries of a result map whose value is unknown: each
/// becomes `null`. Returns the paths, prefixed with `prefix.`.
pub fn null_unknowns(map: &mut Map<String, Value>, prefix: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (k, v) in map.iter_mut() {
        if v.as_str().is_some_and(is_unknown) {
            *v = Value::Null;
            paths.push(format!("{prefix}.{k}"));
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_nic_has_an_unknown_mac_and_keeps_a_given_one() {
        assert_eq!(
            after_write("net0", "virtio,bridge=vmbr0,tag=10"),
            "virtio=(known after apply),bridge=vmbr0,tag=10"
        );
        assert_eq!(
            after_write("net1", "model=e1000,bridge=vmbr1"),
            "e1000=(known after apply),bridge=vmbr1"
        );
        assert_eq!(
            after_write("net0", "virtio=BC:24:11:00:00:01,bridge=vmbr0"),
            "virtio=BC:24:11:00:00:01,bridge=vmbr0"
        );
    }

    #[test]
    fn an_allocated_disk_has_an_unknown_volume_and_a_known_size() {
        assert_eq!(
            after_write("scsi0", "local-lvm:32,iothread=1"),
            "local-lvm:(known after apply),iothread=1,size=32G"
        );
        assert_eq!(
            after_write("virtio1", "vmdata:0.5"),
            "vmdata:(known after apply),size=512M"
        );
        assert_eq!(
            after_write("scsi1", "local-lvm:0,import-from=local:import/debian.qcow2"),
            "local-lvm:(known after apply),size=(known after apply)"
        );
        assert_eq!(
            after_write("efidisk0", "local-lvm:1,efitype=4m"),
            "local-lvm:(known after apply),efitype=4m,size=(known after apply)"
        );
        assert_eq!(
            after_write("ide2", "local-lvm:cloudinit"),
            "local-lvm:(known after apply),media=cdrom"
        );
    }

    #[test]
    fn existing_volumes_and_other_keys_are_left_alone() {
        assert_eq!(
            after_write("ide2", "isos:iso/debian.iso,media=cdrom"),
            "isos:iso/debian.iso,media=cdrom"
        );
        assert_eq!(
            after_write("scsi0", "local-lvm:vm-100-disk-0,size=32G"),
            "local-lvm:vm-100-disk-0,size=32G"
        );
        assert_eq!(after_write("memory", "2048"), "2048");
    }

    #[test]
    fn unknown_result_values_become_null_and_are_listed() {
        let mut mac = serde_json::json!({"net0": "(known after apply)", "net1": "BC:24:11:00:00:02"});
        let paths = null_unknowns(mac.as_object_mut().unwrap(), "mac");
        assert_eq!(paths, ["mac.net0"]);
        assert_eq!(mac, serde_json::json!({"net0": null, "net1": "BC:24:11:00:00:02"}));
    }
}
