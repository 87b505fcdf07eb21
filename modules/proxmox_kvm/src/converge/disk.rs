//! Disks on an existing VM: options change in place, the size only grows, nothing is
//! replaced, moved or shrunk. What cannot be done safely fails with the safe route.
//!
//! Applies to `ideN`, `sataN`, `scsiN`, `virtioN`, `efidisk0` and `tpmstate0`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{text_of, Grow};
use crate::props::Props;

const DISK_MODULE: &str = "ferrox.proxmox.proxmox_disk";

/// One disk key's part of an update.
#[derive(Debug, Default)]
pub struct Step {
    pub set: Option<String>,
    pub grow: Option<Grow>,
    pub allocates: bool,
}

pub fn is_disk_key(key: &str) -> bool {
    if key == "efidisk0" || key == "tpmstate0" {
        return true;
    }
    ["ide", "sata", "scsi", "virtio"].iter().any(|bus| {
        key.strip_prefix(bus).is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    })
}

/// Volume -> disk key, for every disk of the current config.
pub fn attached_volumes(current: &Map<String, Value>) -> BTreeMap<String, String> {
    current
        .iter()
        .filter(|(k, _)| is_disk_key(k))
        .filter_map(|(k, v)| {
            let volume = Props::parse(&text_of(v), None).default?;
            (volume != "none" && volume != "cdrom").then(|| (volume, k.clone()))
        })
        .collect()
}

/// What the task's value for a disk key asks for.
#[derive(Debug, PartialEq)]
enum Source<'a> {
    /// `STORAGE:SIZE` (GiB): allocate a new volume.
    Allocate { storage: &'a str, gib: f64 },
    /// `STORAGE:cloudinit`.
    CloudInit { storage: &'a str },
    /// `STORAGE:0,import-from=...`.
    Import,
    /// An existing volume, a path, `none` or `cdrom`.
    Volume(&'a str),
}

fn source<'a>(file: &'a str, props: &Props) -> Source<'a> {
    if props.pairs.contains_key("import-from") {
        return Source::Import;
    }
    if let Some((storage, rest)) = file.split_once(':') {
        if rest == "cloudinit" {
            return Source::CloudInit { storage };
        }
        if let Ok(gib) = rest.parse::<f64>() {
            return Source::Allocate { storage, gib };
        }
    }
    Source::Volume(file)
}

/// Plans one disk key; `attached` maps the VM's volumes to their keys.
pub fn converge(
    key: &str,
    current: Option<&str>,
    wanted: &str,
    attached: &BTreeMap<String, String>,
    vmid: u32,
) -> Result<Step, String> {
    let want = Props::parse(wanted, Some("file"));
    let want_file = want.default.clone().unwrap_or_default();
    let want_source = source(&want_file, &want);
    let Some(current) = current else {
        if let Source::Volume(volume) = want_source {
            if let Some(other) = attached.get(volume) {
                return Err(format!(
                    "{key}: volume {volume} is already attached to VM {vmid} as {other}. Moving a disk to another bus or slot is not done in place: detach it with {DISK_MODULE} (state: detached) and attach it as {key}."
                ));
            }
        }
        let allocates = !matches!(want_source, Source::Volume(_));
        return Ok(Step { set: Some(wanted.to_string()), allocates, grow: None });
    };
    let cur = Props::parse(current, Some("file"));
    let cur_file = cur.default.clone().unwrap_or_default();
    let cur_storage = cur_file.split_once(':').map(|(s, _)| s).unwrap_or("");
    let is_cdrom = |p: &Props, file: &str| p.get("media") == Some("cdrom") || file == "none" || file == "cdrom";
    let mut step = Step::default();

    if key == "efidisk0" || key == "tpmstate0" {
        return special(key, &cur, &cur_file, &want, &want_source, vmid);
    }
    match want_source {
        Source::Allocate { storage, gib } => {
            if is_cdrom(&cur, &cur_file) {
                return Err(format!(
                    "{key} of VM {vmid} is a CD-ROM drive ({cur_file}); a disk is not put in its place. Use another {}N key for the new disk, or remove the drive first with {DISK_MODULE} (state: absent).",
                    key.trim_end_matches(|c: char| c.is_ascii_digit())
                ));
            }
            if storage != cur_storage {
                return Err(format!(
                    "{key} of VM {vmid} is on storage {cur_storage} ({cur_file}), the task asks for {storage}. Changing a disk's storage copies it: use {DISK_MODULE} with state: moved, disk: {key}, target_storage: {storage}."
                ));
            }
            let have = cur.get("size").and_then(size_bytes);
            let want_bytes = (gib * GIB).round() as u64;
            match have {
                Some(h) if want_bytes > h => {
                    step.grow = Some(Grow { key: key.into(), from: cur.get("size").unwrap_or("").into(), to: size_text(gib) });
                }
                Some(h) if want_bytes < h => {
                    return Err(format!(
                        "{key} of VM {vmid} is {} and the task asks for {}: PVE cannot shrink a disk without losing data. Keep the size, or create a smaller disk under a new key and copy the data in the guest.",
                        cur.get("size").unwrap_or(""), size_text(gib)
                    ));
                }
                _ => {}
            }
        }
        Source::CloudInit { storage } => {
            if !cur_file.contains("cloudinit") {
                return Err(format!(
                    "{key} of VM {vmid} holds {cur_file}, not a cloud-init drive; put the cloud-init drive under a free key."
                ));
            }
            if storage != cur_storage {
                return Err(format!(
                    "{key}: the cloud-init drive of VM {vmid} is on storage {cur_storage}; use {DISK_MODULE} with state: moved, disk: {key}, target_storage: {storage}."
                ));
            }
            return Ok(step);
        }
        Source::Import => return Ok(step),
        Source::Volume(volume) => {
            let media_change = is_cdrom(&want, volume) && is_cdrom(&cur, &cur_file);
            if volume != cur_file && !media_change {
                return Err(format!(
                    "{key} of VM {vmid} holds {cur_file}; putting {volume} in its place would detach that disk. Detach it first with {DISK_MODULE} (state: detached), or use a free key."
                ));
            }
            if volume != cur_file {
                // A CD-ROM gets another medium: nothing is lost.
                let mut next = cur.clone();
                next.default = Some(volume.to_string());
                next.pairs.remove("size");
                next.pairs.extend(want.pairs.clone());
                step.set = Some(next.render());
                return Ok(step);
            }
        }
    }
    let differing = cur.differing_named(&want, &["size", "format", "import-from"]);
    if !differing.is_empty() {
        let mut next = cur.clone();
        next.pairs.remove("size");
        for k in differing {
            next.pairs.insert(k.clone(), want.pairs[&k].clone());
        }
        step.set = Some(next.render());
    }
    Ok(step)
}

/// `efidisk0`/`tpmstate0`: created when missing, never re-created.
fn special(key: &str, cur: &Props, cur_file: &str, want: &Props, source: &Source, vmid: u32) -> Result<Step, String> {
    let cur_storage = cur_file.split_once(':').map(|(s, _)| s).unwrap_or("");
    if let Source::Allocate { storage, .. } = source {
        if *storage != cur_storage {
            return Err(format!(
                "{key} of VM {vmid} is on storage {cur_storage}, the task asks for {storage}: use {DISK_MODULE} with state: moved, disk: {key}, target_storage: {storage}."
            ));
        }
    }
    let differing = cur.differing_named(want, &["size", "format"]);
    if differing.is_empty() {
        return Ok(Step::default());
    }
    Err(format!(
        "{key} of VM {vmid} has {} but the task asks for {}: these are fixed when the {} is created and changing them means a new one (its content is lost). Remove it explicitly with delete: {key} first if that is intended.",
        differing.iter().map(|k| format!("{k}={}", cur.get(k).unwrap_or("(unset)"))).collect::<Vec<_>>().join(", "),
        differing.iter().map(|k| format!("{k}={}", want.pairs[k])).collect::<Vec<_>>().join(", "),
        if key == "efidisk0" { "EFI disk" } else { "TPM state" },
    ))
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// PVE's `size=` (`32G`, `528K`, `4M`, bytes; optional `iB`) in bytes.
pub fn size_bytes(text: &str) -> Option<u64> {
    let t = text.trim().trim_end_matches("iB");
    let (num, unit) = match t.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_uppercase()),
        _ => (t, 'B'),
    };
    let factor: f64 = match unit {
        'B' => 1.0,
        'K' => 1024.0,
        'M' => 1024.0 * 1024.0,
        'G' => GIB,
        'T' => GIB * 1024.0,
        _ => return None,
    };
    num.parse::<f64>().ok().map(|n| (n * factor).round() as u64)
}

/// GiB as PVE's resize takes it: `40G`, or `40.5G`.
fn size_text(gib: f64) -> String {
    if gib.fract() == 0.0 {
        format!("{}G", gib as u64)
    } else {
        format!("{gib}G")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    #[test]
    fn same_disk_is_no_change() {
        let s = converge("scsi0", Some("local-lvm:vm-100-disk-0,discard=on,size=32G"), "local-lvm:32,discard=on", &none(), 100).unwrap();
        assert!(s.set.is_none() && s.grow.is_none());
    }

    #[test]
    fn options_change_in_place_on_the_same_volume() {
        let s = converge("scsi0", Some("local-lvm:vm-100-disk-0,size=32G"), "local-lvm:32,ssd=1,discard=on", &none(), 100).unwrap();
        assert_eq!(s.set.as_deref(), Some("local-lvm:vm-100-disk-0,discard=on,ssd=1"));
        assert!(!s.allocates);
    }

    #[test]
    fn larger_size_grows() {
        let s = converge("scsi0", Some("local-lvm:vm-100-disk-0,size=32G"), "local-lvm:40", &none(), 100).unwrap();
        assert_eq!(s.grow, Some(Grow { key: "scsi0".into(), from: "32G".into(), to: "40G".into() }));
        assert!(s.set.is_none());
    }

    #[test]
    fn unsafe_changes_name_the_safe_route() {
        let e = converge("scsi0", Some("local-lvm:vm-100-disk-0,size=32G"), "local-lvm:16", &none(), 100).unwrap_err();
        assert!(e.contains("cannot shrink"), "{e}");
        let e = converge("scsi0", Some("local-lvm:vm-100-disk-0,size=32G"), "vmdata:32", &none(), 100).unwrap_err();
        assert!(e.contains("state: moved, disk: scsi0, target_storage: vmdata"), "{e}");
        let e = converge("scsi0", Some("local-lvm:vm-100-disk-0,size=32G"), "local-lvm:vm-100-disk-7", &none(), 100).unwrap_err();
        assert!(e.contains("state: detached"), "{e}");
        let attached: BTreeMap<_, _> = [("local-lvm:vm-100-disk-0".to_string(), "scsi0".to_string())].into();
        let e = converge("virtio0", None, "local-lvm:vm-100-disk-0", &attached, 100).unwrap_err();
        assert!(e.contains("already attached to VM 100 as scsi0"), "{e}");
    }

    #[test]
    fn new_disk_allocates_and_cdrom_media_changes() {
        let s = converge("scsi1", None, "local-lvm:8", &none(), 100).unwrap();
        assert!(s.allocates);
        let s = converge("ide2", Some("none,media=cdrom"), "isos:iso/debian-13-netinst.iso,media=cdrom", &none(), 100).unwrap();
        assert_eq!(s.set.as_deref(), Some("isos:iso/debian-13-netinst.iso,media=cdrom"));
        let s = converge("ide0", Some("local-lvm:vm-100-cloudinit,media=cdrom"), "local-lvm:cloudinit", &none(), 100).unwrap();
        assert!(s.set.is_none());
    }

    #[test]
    fn efi_and_tpm_are_never_recreated() {
        let s = converge("efidisk0", Some("local-lvm:vm-100-disk-1,efitype=4m,pre-enrolled-keys=1,size=4M"), "local-lvm:1,efitype=4m,pre-enrolled-keys=1", &none(), 100).unwrap();
        assert!(s.set.is_none());
        let e = converge("tpmstate0", Some("local-lvm:vm-100-disk-2,size=4M,version=v1.2"), "local-lvm:1,version=v2.0", &none(), 100).unwrap_err();
        assert!(e.contains("version=v1.2"), "{e}");
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(size_bytes("32G"), Some(32 * 1024 * 1024 * 1024));
        assert_eq!(size_bytes("528K"), Some(528 * 1024));
        assert_eq!(size_bytes("4MiB"), Some(4 * 1024 * 1024));
        assert_eq!(size_bytes("1000"), Some(1000));
    }
}
