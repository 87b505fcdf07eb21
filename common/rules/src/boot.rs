//! The boot order (`boot: order=scsi0;ide2;net0`) as qemu-server keeps it when devices
//! go: `update_vm_api` takes each deleted key out of the order ("remove from bootorder if
//! necessary", unless `bootorder` itself is deleted). A legacy order (`boot: cdn`) names
//! no devices and is left as it is.

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
