//! Disks on an existing VM: options change in place, the size only grows, nothing is
//! replaced, moved or shrunk. What cannot be done safely fails with the safe route.
//!
//! Applies to `ideN`, `sataN`, `scsiN`, `virtioN`, `efidisk0` and `tpmstate0`.

use std::collections::BTreeMap;

pub(crate) use ferrox_pve_rules::propstring::is_drive_key as is_disk_key;
use ferrox_pve_rules::propstring::{self, formats, Format, PropString};
use ferrox_pve_rules::size;
use serde_json::{Map, Value};

use super::{text_of, Grow};

const DISK_MODULE: &str = "ferrox.proxmox.proxmox_disk";

/// Keys PVE fills in or that only matter when a volume is allocated: not compared.
const NOT_COMPARED: &[&str] = &["file", "size", "format", "import-from"];

/// One disk key's part of an update.
#[derive(Debug, Default)]
pub(crate) struct Step {
    pub(crate) set: Option<String>,
    pub(crate) grow: Option<Grow>,
    pub(crate) allocates: bool,
}

fn format_of(key: &str) -> Result<&'static Format, String> {
    formats::for_config_key(key).ok_or_else(|| format!("{key} is not a disk key PVE knows"))
}

/// The volume of a drive value (`local-lvm:vm-100-disk-0`, `none`, an ISO).
pub(crate) fn volume_of(key: &str, text: &str) -> Option<String> {
    let f = formats::for_config_key(key)?;
    propstring::parse(text, f).ok()?.get("file").map(str::to_string)
}

/// Volume -> disk key, for every disk of the current config.
pub(crate) fn attached_volumes(current: &Map<String, Value>) -> BTreeMap<String, String> {
    current
        .iter()
        .filter(|(k, _)| is_disk_key(k))
        .filter_map(|(k, v)| {
            let volume = volume_of(k, &text_of(v))?;
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

fn source<'a>(file: &'a str, props: &PropString) -> Source<'a> {
    if props.contains("import-from") {
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

fn is_cdrom(p: &PropString) -> bool {
    p.get("media") == Some("cdrom") || matches!(p.get("file"), Some("none" | "cdrom"))
}

fn storage_of(volume: &str) -> &str {
    volume.split_once(':').map(|(s, _)| s).unwrap_or("")
}

/// The options of `want` that differ from `cur`, volume and size aside.
fn differing_options(cur: &PropString, want: &PropString, f: &Format) -> Vec<String> {
    propstring::differing_keys(cur, want, f)
        .into_iter()
        .filter(|k| !NOT_COMPARED.contains(&k.as_str()))
        .collect()
}

/// `cur` with `want`'s values for `keys`, without `size=` (PVE keeps the real one).
fn with_options(cur: &PropString, want: &PropString, keys: &[String], f: &Format) -> String {
    let mut next = cur.clone();
    next.remove("size");
    for k in keys {
        next.set(k, want.get(k).unwrap_or_default());
    }
    next.to_canonical(f)
}

/// Plans one disk key; `attached` maps the VM's volumes to their keys.
pub(crate) fn converge(
    key: &str,
    current: Option<&str>,
    wanted: &str,
    attached: &BTreeMap<String, String>,
    vmid: u32,
) -> Result<Step, String> {
    let f = format_of(key)?;
    let want = propstring::parse(wanted, f).map_err(|e| format!("{key}: {e}"))?;
    let want_file = want.get("file").unwrap_or_default().to_string();
    let want_source = source(&want_file, &want);
    if let Source::Allocate { storage, gib } = want_source {
        // `f64` parsing takes NaN, inf, negatives and sizes past 16 EiB, which no volume can be.
        if !gib.is_finite() || gib < 0.0 || gib * size::GIB as f64 >= u64::MAX as f64 {
            return Err(format!(
                "{key}: {want_file} does not give a size PVE can allocate; write the size in GiB, like {storage}:32"
            ));
        }
    }
    let Some(current) = current else {
        if let Source::Volume(volume) = want_source {
            if let Some(other) = attached.get(volume) {
                return Err(format!(
                    "{key}: volume {volume} is already attached to VM {vmid} as {other}. Moving a disk to another bus or slot is not done in place: detach it with {DISK_MODULE} (state: detached) and attach it as {key}."
                ));
            }
        }
        let allocates = !matches!(want_source, Source::Volume(_));
        return Ok(Step {
            set: Some(wanted.to_string()),
            allocates,
            grow: None,
        });
    };
    let cur = propstring::parse(current, f).map_err(|e| format!("{key} of VM {vmid} ({current}): {e}"))?;
    let cur_file = cur.get("file").unwrap_or_default().to_string();
    let cur_storage = storage_of(&cur_file);
    if key == "efidisk0" || key == "tpmstate0" {
        return fixed_at_creation(key, &cur, &want, &want_source, f, vmid);
    }
    let mut step = Step::default();
    match want_source {
        Source::Allocate { storage, gib } => {
            if is_cdrom(&cur) {
                return Err(format!(
                    "{key} of VM {vmid} is a CD-ROM drive ({cur_file}); a disk is not put in its place. Use a free key for the new disk, or remove the drive first with {DISK_MODULE} (state: absent)."
                ));
            }
            if storage != cur_storage {
                return Err(format!(
                    "{key} of VM {vmid} is on storage {cur_storage} ({cur_file}), the task asks for {storage}. Changing a disk's storage copies it: use {DISK_MODULE} with state: moved, disk: {key}, target_storage: {storage}."
                ));
            }
            let have = cur.get("size").and_then(|s| size::parse(s).ok());
            let want_bytes = (gib * size::GIB as f64).round() as u64;
            match have {
                Some(h) if want_bytes > h => {
                    step.grow = Some(Grow {
                        key: key.into(),
                        from: cur.get("size").unwrap_or("").into(),
                        to: size::format(want_bytes),
                    });
                }
                Some(h) if want_bytes < h => {
                    return Err(format!(
                        "{key} of VM {vmid} is {} and the task asks for {}: PVE cannot shrink a disk without losing data. Keep the size, or create a smaller disk under a new key and copy the data in the guest.",
                        cur.get("size").unwrap_or(""),
                        size::format(want_bytes)
                    ));
                }
                _ => {}
            }
        }
        Source::CloudInit { storage } => {
            if !cur_file.contains("cloudinit") {
                return Err(format!("{key} of VM {vmid} holds {cur_file}, not a cloud-init drive; put the cloud-init drive under a free key."));
            }
            if storage != cur_storage {
                return Err(format!(
                    "{key}: the cloud-init drive of VM {vmid} is on storage {cur_storage}; use {DISK_MODULE} with state: moved, disk: {key}, target_storage: {storage}."
                ));
            }
            return Ok(step);
        }
        Source::Import => return Ok(step),
        Source::Volume(volume) if volume != cur_file => {
            if !(is_cdrom(&want) && is_cdrom(&cur)) {
                return Err(format!(
                    "{key} of VM {vmid} holds {cur_file}; putting {volume} in its place would detach that disk. Detach it first with {DISK_MODULE} (state: detached), or use a free key."
                ));
            }
            // A CD-ROM drive gets another medium: nothing is lost.
            let mut keys = differing_options(&cur, &want, f);
            keys.push("file".into());
            step.set = Some(with_options(&cur, &want, &keys, f));
            return Ok(step);
        }
        Source::Volume(_) => {}
    }
    let differing = differing_options(&cur, &want, f);
    if !differing.is_empty() {
        step.set = Some(with_options(&cur, &want, &differing, f));
    }
    Ok(step)
}

/// `efidisk0`/`tpmstate0`: created when missing, never re-created. The one setting that
/// changes in place is the EFI disk's `ms-cert`: PVE enrolls the 2023 certificates into
/// the same volume when the marker moves to a 2023 value.
fn fixed_at_creation(
    key: &str,
    cur: &PropString,
    want: &PropString,
    source: &Source,
    f: &Format,
    vmid: u32,
) -> Result<Step, String> {
    let cur_storage = storage_of(cur.get("file").unwrap_or_default());
    if let Source::Allocate { storage, .. } = source {
        if *storage != cur_storage {
            return Err(format!(
                "{key} of VM {vmid} is on storage {cur_storage}, the task asks for {storage}: use {DISK_MODULE} with state: moved, disk: {key}, target_storage: {storage}."
            ));
        }
    }
    let mut differing = differing_options(cur, want, f);
    let cert = differing
        .iter()
        .position(|k| k == "ms-cert")
        .map(|at| differing.remove(at));
    if !differing.is_empty() {
        let show = |p: &PropString| {
            differing
                .iter()
                .map(|k| format!("{k}={}", p.get(k).unwrap_or("(unset)")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(format!(
            "{key} of VM {vmid} has {} but the task asks for {}: these are fixed when the {} is created and changing them means a new one (its content is lost). Remove it explicitly with delete: {key} first if that is intended.",
            show(cur),
            show(want),
            if key == "efidisk0" { "EFI disk" } else { "TPM state" },
        ));
    }
    let Some(_) = cert else { return Ok(Step::default()) };
    ms_cert_change(cur, want, f, vmid)
}

/// A new `ms-cert` on an existing EFI disk: the current value with the marker replaced.
/// PVE enrolls only into a disk with pre-enrolled keys (else it drops the marker and a
/// rerun would change again), and records `2023k` whatever 2023 value it was given, so
/// the deprecated `2023`/`2023w` are already met by any 2023 marker.
fn ms_cert_change(cur: &PropString, want: &PropString, f: &Format, vmid: u32) -> Result<Step, String> {
    let wanted = want.get("ms-cert").unwrap_or_default();
    let have = cur.get("ms-cert").or(f.default_of("ms-cert")).unwrap_or_default();
    if wanted.starts_with("2023") && wanted != "2023k" && have.starts_with("2023") {
        return Ok(Step::default());
    }
    let pre_enrolled = cur
        .get("pre-enrolled-keys")
        .is_some_and(|v| propstring::same_value(f, "pre-enrolled-keys", Some(v), Some("1")));
    if wanted.starts_with("2023") && !pre_enrolled {
        return Err(format!(
            "efidisk0 of VM {vmid} has no pre-enrolled keys (pre-enrolled-keys=0), so PVE does not enroll the Microsoft 2023 certificates into it (ms_cert: {wanted}). Leave ms_cert out for this VM, or remove the EFI disk with delete: efidisk0 and create it again with efidisk0.pre_enrolled_keys: true (its EFI variables are lost)."
        ));
    }
    Ok(Step {
        set: Some(with_options(cur, want, &["ms-cert".to_string()], f)),
        ..Step::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    #[test]
    fn same_disk_is_no_change() {
        let s = converge(
            "scsi0",
            Some("local-lvm:vm-100-disk-0,discard=on,size=32G"),
            "local-lvm:32,discard=on",
            &none(),
            100,
        )
        .unwrap();
        assert!(s.set.is_none() && s.grow.is_none());
        let s = converge(
            "scsi0",
            Some("local-lvm:vm-100-disk-0,size=32G"),
            "local-lvm:32,backup=1",
            &none(),
            100,
        )
        .unwrap();
        assert!(s.set.is_none(), "a default equals its absence");
    }

    #[test]
    fn options_change_in_place_on_the_same_volume() {
        let s = converge(
            "scsi0",
            Some("local-lvm:vm-100-disk-0,size=32G"),
            "local-lvm:32,ssd=1,discard=on",
            &none(),
            100,
        )
        .unwrap();
        assert_eq!(s.set.as_deref(), Some("local-lvm:vm-100-disk-0,discard=on,ssd=1"));
        assert!(!s.allocates);
    }

    #[test]
    fn larger_size_grows() {
        let s = converge(
            "scsi0",
            Some("local-lvm:vm-100-disk-0,size=32G"),
            "local-lvm:40",
            &none(),
            100,
        )
        .unwrap();
        assert_eq!(
            s.grow,
            Some(Grow {
                key: "scsi0".into(),
                from: "32G".into(),
                to: "40G".into()
            })
        );
        assert!(s.set.is_none());
        let s = converge(
            "scsi0",
            Some("local-lvm:vm-100-disk-0,size=32768M"),
            "local-lvm:32",
            &none(),
            100,
        )
        .unwrap();
        assert!(s.grow.is_none(), "32768M is 32G");
    }

    #[test]
    fn unsafe_changes_name_the_safe_route() {
        let e = converge(
            "scsi0",
            Some("local-lvm:vm-100-disk-0,size=32G"),
            "local-lvm:16",
            &none(),
            100,
        )
        .unwrap_err();
        assert!(e.contains("cannot shrink"), "{e}");
        let e = converge(
            "scsi0",
            Some("local-lvm:vm-100-disk-0,size=32G"),
            "vmdata:32",
            &none(),
            100,
        )
        .unwrap_err();
        assert!(e.contains("state: moved, disk: scsi0, target_storage: vmdata"), "{e}");
        let e = converge(
            "scsi0",
            Some("local-lvm:vm-100-disk-0,size=32G"),
            "local-lvm:vm-100-disk-7",
            &none(),
            100,
        )
        .unwrap_err();
        assert!(e.contains("state: detached"), "{e}");
        let attached: BTreeMap<_, _> = [("local-lvm:vm-100-disk-0".to_string(), "scsi0".to_string())].into();
        let e = converge("virtio0", None, "local-lvm:vm-100-disk-0", &attached, 100).unwrap_err();
        assert!(e.contains("already attached to VM 100 as scsi0"), "{e}");
    }

    #[test]
    fn sizes_that_are_no_number_of_gib_are_refused() {
        for bad in ["local-lvm:NaN", "local-lvm:inf", "local-lvm:-5", "local-lvm:1e30"] {
            let e = converge("scsi0", Some("local-lvm:vm-100-disk-0,size=32G"), bad, &none(), 100).unwrap_err();
            assert!(e.contains("does not give a size PVE can allocate"), "{bad}: {e}");
            assert!(
                converge("scsi1", None, bad, &none(), 100).is_err(),
                "{bad} on a new key"
            );
        }
    }

    #[test]
    fn bad_options_are_named() {
        let e = converge("scsi0", None, "local-lvm:8,cache=fast", &none(), 100).unwrap_err();
        assert!(e.starts_with("scsi0: invalid value 'fast' for key 'cache'"), "{e}");
    }

    #[test]
    fn new_disk_allocates_and_cdrom_media_changes() {
        let s = converge("scsi1", None, "local-lvm:8", &none(), 100).unwrap();
        assert!(s.allocates);
        let s = converge(
            "ide2",
            Some("none,media=cdrom"),
            "isos:iso/debian-13-netinst.iso,media=cdrom",
            &none(),
            100,
        )
        .unwrap();
        assert_eq!(s.set.as_deref(), Some("isos:iso/debian-13-netinst.iso,media=cdrom"));
        let s = converge(
            "ide0",
            Some("local-lvm:vm-100-cloudinit,media=cdrom"),
            "local-lvm:cloudinit",
            &none(),
            100,
        )
        .unwrap();
        assert!(s.set.is_none());
    }

    #[test]
    fn efi_and_tpm_are_never_recreated() {
        let s = converge(
            "efidisk0",
            Some("local-lvm:vm-100-disk-1,efitype=4m,pre-enrolled-keys=1,size=4M"),
            "local-lvm:1,efitype=4m,pre-enrolled-keys=1",
            &none(),
            100,
        )
        .unwrap();
        assert!(s.set.is_none());
        let e = converge(
            "tpmstate0",
            Some("local-lvm:vm-100-disk-2,size=4M,version=v1.2"),
            "local-lvm:1,version=v2.0",
            &none(),
            100,
        )
        .unwrap_err();
        assert!(e.contains("version=v1.2"), "{e}");
    }

    #[test]
    fn ms_cert_changes_in_place_on_a_disk_with_pre_enrolled_keys() {
        let cur = "local-lvm:vm-100-disk-1,efitype=4m,pre-enrolled-keys=1,size=4M";
        let s = converge(
            "efidisk0",
            Some(cur),
            "local-lvm:1,efitype=4m,ms-cert=2023k",
            &none(),
            100,
        )
        .unwrap();
        assert_eq!(
            s.set.as_deref(),
            Some("local-lvm:vm-100-disk-1,efitype=4m,ms-cert=2023k,pre-enrolled-keys=1")
        );
        assert!(!s.allocates);
        let enrolled = "local-lvm:vm-100-disk-1,efitype=4m,ms-cert=2023k,pre-enrolled-keys=1,size=4M";
        for met in ["2023k", "2023w", "2023"] {
            let s = converge(
                "efidisk0",
                Some(enrolled),
                &format!("local-lvm:1,ms-cert={met}"),
                &none(),
                100,
            )
            .unwrap();
            assert!(s.set.is_none(), "{met}");
        }
        let e = converge(
            "efidisk0",
            Some("local-lvm:vm-100-disk-1,efitype=4m,size=4M"),
            "local-lvm:1,ms-cert=2023k",
            &none(),
            100,
        )
        .unwrap_err();
        assert!(e.starts_with("efidisk0 of VM 100 has no pre-enrolled keys"), "{e}");
        let e = converge(
            "efidisk0",
            Some(cur),
            "local-lvm:1,efitype=2m,ms-cert=2023k",
            &none(),
            100,
        )
        .unwrap_err();
        assert!(e.contains("efitype=4m") && !e.contains("ms-cert"), "{e}");
    }
}
