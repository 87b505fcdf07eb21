//! Turning a client's config value into what PVE writes: nets get `model=MAC` first,
//! disks are allocated/imported/attached and printed canonically, tags sorted.

use super::disks::{self, Drive};
use crate::auth::{self, Identity};
use crate::error::{ApiError, ApiResult};
use crate::propstring;
use crate::schema::Schema;
use crate::state::Cluster;
use crate::storage;

/// `BC:24:11` + 3 random bytes, or a random locally-administered unicast MAC.
pub fn gen_mac(prefix: Option<&str>) -> String {
    let b: [u8; 6] = rand::random();
    match prefix {
        Some(p) if !p.is_empty() => {
            let fixed: Vec<&str> = p.split(':').collect();
            let mut parts: Vec<String> = fixed.iter().map(|s| s.to_uppercase()).collect();
            for byte in b.iter().take(6 - parts.len().min(6)) {
                parts.push(format!("{byte:02X}"));
            }
            parts.join(":")
        }
        _ => {
            let first = (b[0] & 0xfe) | 0x02;
            format!(
                "{first:02X}:{:02X}:{:02X}:{:02X}:{:02X}:{:02X}",
                b[1], b[2], b[3], b[4], b[5]
            )
        }
    }
}

pub fn mac_prefix(c: &Cluster) -> Option<String> {
    Some(c.mac_prefix.clone().unwrap_or_else(|| "BC:24:11".into())).filter(|p| !p.is_empty())
}

/// `virtio,bridge=vmbr0` -> `virtio=BC:24:11:..,bridge=vmbr0` (booleans as 1/0).
pub fn net(schema: &Schema, c: &Cluster, key: &str, value: &str, fresh_mac: bool) -> ApiResult<String> {
    let fmt = disks::key_format(schema, key).ok_or_else(|| ApiError::param(key, "unknown network key"))?;
    let mut p = propstring::parse(&fmt, value).map_err(|e| ApiError::param(key, format!("invalid format - {e}")))?;
    let model = p.remove("model").unwrap_or_else(|| "virtio".into());
    let mac = match p.remove("macaddr") {
        Some(m) if !fresh_mac => m,
        _ => gen_mac(mac_prefix(c).as_deref()),
    };
    for (k, v) in p.iter_mut() {
        if fmt.get(k).and_then(|s| s.get("type")).and_then(|t| t.as_str()) == Some("boolean") {
            if let Some(b) = propstring::parse_bool(v) {
                *v = b.into();
            }
        }
    }
    Ok(propstring::print_with_head(&format!("{model}={mac}"), &p, &[]))
}

/// The tags as PVE stores them, by the datacenter's `tag-style` (default: `B,a;c` ->
/// `a;b;c`).
pub fn tags(c: &Cluster, value: &str) -> String {
    crate::datacenter::TagStyle::of(c).unique(value)
}

/// Everything a disk normalisation needs to know about where it happens.
pub struct DiskCtx<'a> {
    pub schema: &'a Schema,
    pub who: &'a Identity,
    pub node: &'a str,
    pub vmid: u32,
    /// `storage` parameter of create (for bare `SIZE`).
    pub default_storage: Option<&'a str>,
    /// Log lines of the surrounding task (allocation messages).
    pub log: &'a mut Vec<String>,
}

/// What a disk value asks for, decided before anything is allocated.
pub enum DiskPlan {
    /// Store as is (after canonical printing).
    Keep(Drive),
    Alloc {
        drive: Drive,
        storage: String,
        size: u64,
        format: Option<String>,
    },
    Import {
        drive: Drive,
        storage: String,
        source: String,
        format: Option<String>,
    },
    CloudInit {
        drive: Drive,
        storage: String,
    },
}

static ALLOC_RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"^(?:([a-zA-Z][a-zA-Z0-9\-_.]*[a-zA-Z0-9]):)?(\d+(?:\.\d+)?)$").unwrap()
});

/// Synchronous checks of a disk value (errors PVE raises before any task).
pub fn plan_disk(
    c: &Cluster,
    dc: &DiskCtx<'_>,
    key: &str,
    value: &str,
    others: &[(String, String)],
) -> ApiResult<DiskPlan> {
    let drive =
        Drive::parse(dc.schema, key, value).ok_or_else(|| ApiError::param(key, "unable to parse drive options"))?;
    if let Some(src) = drive.opts.get("import-from").cloned() {
        return plan_import(c, dc, key, drive, src);
    }
    if let Some(sid) = drive.file.strip_suffix(":cloudinit") {
        for (k, v) in others {
            if k != key && disks::is_disk_key(k) && v.split(',').next().is_some_and(|f| f.contains("-cloudinit")) {
                return Err(ApiError::param(
                    key,
                    format!("{key} - cloud-init drive is already attached at '{k}'"),
                ));
            }
        }
        check_storage(c, dc, sid)?;
        return Ok(DiskPlan::CloudInit {
            storage: sid.to_string(),
            drive,
        });
    }
    if let Some(caps) = ALLOC_RE.captures(&drive.file) {
        let (sid, gib) = (caps.get(1).map(|s| s.as_str().to_string()), caps[2].to_string());
        return plan_alloc(c, dc, key, drive, sid, &gib);
    }
    check_kept_volume(c, dc, key, &drive)?;
    Ok(DiskPlan::Keep(drive))
}

/// `<storage>:0,import-from=<source>`: the syntax, the options the import needs, the
/// target storage and the source (a volume, or an absolute path for root).
fn plan_import(c: &Cluster, dc: &DiskCtx<'_>, key: &str, drive: Drive, src: String) -> ApiResult<DiskPlan> {
    let caps = ALLOC_RE.captures(&drive.file);
    let Some(caps) = caps.filter(|cp| cp.get(1).is_some() && &cp[2] == "0") else {
        return Err(ApiError::param(
            key,
            "'import-from' requires special syntax - use <storage ID>:0,import-from=<source>",
        ));
    };
    if key == "efidisk0" && !drive.opts.contains_key("efitype") {
        return Err(ApiError::param(
            key,
            "need to specify 'efitype' when using 'import-from'",
        ));
    }
    if key == "tpmstate0" && !drive.opts.contains_key("version") {
        return Err(ApiError::param(
            key,
            "need to specify 'version' when using 'import-from'",
        ));
    }
    let sid = caps[1].to_string();
    check_storage(c, dc, &sid)?;
    if src.starts_with('/') {
        if !dc.who.is_root() {
            return Err(ApiError::with_status(
                403,
                "Permission check failed (only root may import from absolute paths)",
            ));
        }
    } else if c.find_volume(&src, dc.node).is_none() {
        return Err(ApiError::internal(format!("volume '{src}' does not exist")));
    }
    let format = drive.opts.get("format").cloned();
    Ok(DiskPlan::Import {
        drive,
        storage: sid,
        source: src,
        format,
    })
}

/// `[<storage>:]<GiB>`: a new volume on the given (or default) storage, its size (fixed
/// for TPM and EFI disks) and a format the storage has.
fn plan_alloc(
    c: &Cluster,
    dc: &DiskCtx<'_>,
    key: &str,
    drive: Drive,
    sid: Option<String>,
    gib: &str,
) -> ApiResult<DiskPlan> {
    let sid = match sid {
        Some(s) => s,
        None => dc
            .default_storage
            .map(str::to_string)
            .ok_or_else(|| ApiError::param(key, "no storage ID specified (and no default storage)"))?,
    };
    check_storage(c, dc, &sid)?;
    let gib: f64 = gib.parse().unwrap_or(0.0);
    let size = match key {
        "tpmstate0" => 4 << 20,
        "efidisk0" => {
            let is_file = c.storage(&sid).is_some_and(|s| s.is_file());
            let four = drive.opts.get("efitype").is_some_and(|t| t == "4m");
            match (is_file, four) {
                (true, true) => 540_672,
                (true, false) => 131_072,
                (false, _) => 4 << 20,
            }
        }
        _ => (gib * storage::GIB as f64).round() as u64,
    };
    let format = drive.opts.get("format").cloned();
    if let (Some(f), Some(sd)) = (&format, c.storage(&sid)) {
        if !sd.formats().contains(f) {
            return Err(ApiError::param(
                key,
                format!("unsupported format '{f}' for storage '{sid}'"),
            ));
        }
    }
    Ok(DiskPlan::Alloc {
        drive,
        storage: sid,
        size,
        format,
    })
}

/// A drive kept as given: an existing volume (an iso only as a cdrom) the user may use,
/// or a host path for root.
fn check_kept_volume(c: &Cluster, dc: &DiskCtx<'_>, key: &str, drive: &Drive) -> ApiResult<()> {
    if let Some(volid) = drive.volid() {
        let Some(vol) = c.find_volume(volid, dc.node) else {
            return Err(ApiError::internal(format!("volume '{volid}' does not exist")));
        };
        if vol.content == "iso" && !drive.is_cdrom() {
            return Err(ApiError::param(
                key,
                "explicit 'media=cdrom' is required for iso images",
            ));
        }
        let sid = volid.split(':').next().unwrap_or("");
        auth::require(c, dc.who, &format!("/storage/{sid}"), "Datastore.AllocateSpace")
            .or_else(|_| auth::require(c, dc.who, &format!("/storage/{sid}"), "Datastore.Audit"))?;
    } else if drive.file.starts_with('/') && !dc.who.is_root() {
        return Err(ApiError::with_status(
            403,
            format!("Permission check failed ({}, root only)", drive.file),
        ));
    }
    Ok(())
}

fn check_storage(c: &Cluster, dc: &DiskCtx<'_>, sid: &str) -> ApiResult<()> {
    let Some(sd) = c.storage(sid) else {
        return Err(ApiError::internal(format!("storage '{sid}' does not exist")));
    };
    if !sd.on_node(dc.node) {
        return Err(ApiError::internal(format!(
            "storage '{sid}' is not available on node '{}'",
            dc.node
        )));
    }
    if !sd.has_content("images") {
        return Err(ApiError::param(
            "storage",
            format!("storage '{sid}' does not support vm images"),
        ));
    }
    auth::require(c, dc.who, &format!("/storage/{sid}"), "Datastore.AllocateSpace")
}

/// Carry out a plan (allocation happens here) and return the value to store.
pub fn execute_disk(c: &mut Cluster, dc: &mut DiskCtx<'_>, key: &str, plan: DiskPlan) -> Result<String, String> {
    let fmt = disks::key_format(dc.schema, key);
    let (mut drive, volid, size) = match plan {
        DiskPlan::Keep(mut d) => {
            if let Some(volid) = d.volid().map(str::to_string) {
                if let Some(v) = c.find_volume(&volid, dc.node) {
                    // qemu-server create_disks: an explicit format must be the volume's own
                    // (ISO volumes count as raw); checked where the disks are written, so
                    // inside the task for POST config and create.
                    let own = if v.content == "iso" { "raw" } else { v.format.as_str() };
                    if let Some(f) = d.opts.get("format").filter(|f| f.as_str() != own) {
                        return Err(format!(
                            "drive '{key}' - volume '{volid}' - 'format={f}' option different from storage format '{own}'"
                        ));
                    }
                    d.opts.insert("size".into(), storage::format_size(v.size));
                }
            }
            return Ok(d.print(fmt.as_ref()));
        }
        DiskPlan::Alloc {
            drive,
            storage: sid,
            size,
            format,
        } => {
            let volid = storage::alloc(c, &sid, dc.node, dc.vmid, size, format.as_deref())?;
            (drive, volid, size)
        }
        DiskPlan::Import {
            drive,
            storage: sid,
            source,
            format,
        } => {
            // qemu-img's virtual size: an image file (qcow2) holds a larger disk.
            let size = c
                .find_volume(&source, dc.node)
                .map(|v| v.virtual_size.unwrap_or(v.size))
                .unwrap_or(8 << 30);
            let volid = storage::alloc(c, &sid, dc.node, dc.vmid, size, format.as_deref())?;
            dc.log.push(format!("importing disk '{source}' to VM {} ...", dc.vmid));
            dc.log.push(format!(
                "transferred {} of {} (100.00%)",
                storage::format_size(size),
                storage::format_size(size)
            ));
            (drive, volid, size)
        }
        DiskPlan::CloudInit {
            mut drive,
            storage: sid,
        } => {
            let sd = c
                .storage(&sid)
                .cloned()
                .ok_or_else(|| format!("storage '{sid}' does not exist"))?;
            // qemu-server create_disks (create and update alike): a storage with a path holds
            // `vm-<id>-cloudinit.<format>` (qcow2 unless `format` says otherwise), others a
            // raw `vm-<id>-cloudinit`; `format` is dropped from the drive ("no longer needed").
            let volname = match drive.opts.remove("format") {
                _ if !sd.is_file() => format!("vm-{}-cloudinit", dc.vmid),
                Some(f) => format!("{}/vm-{}-cloudinit.{f}", dc.vmid, dc.vmid),
                None => format!("{}/vm-{}-cloudinit.qcow2", dc.vmid, dc.vmid),
            };
            let volid = storage::alloc_named(c, &sid, dc.node, &volname, 4 << 20, dc.vmid);
            drive.opts.insert("media".into(), "cdrom".into());
            drive.file = volid;
            let value = drive.print(fmt.as_ref());
            dc.log.push(format!("{key}: successfully created disk '{value}'"));
            return Ok(value);
        }
    };
    drive.opts.remove("import-from");
    drive.opts.remove("format");
    drive.file = volid.clone();
    drive.opts.insert("size".into(), storage::format_size(size));
    if key == "efidisk0"
        && drive
            .opts
            .get("pre-enrolled-keys")
            .is_some_and(|v| crate::propstring::parse_bool(v) == Some("1"))
    {
        // qemu-server create_efidisk: PVE 9's vars template with pre-enrolled keys holds the
        // Microsoft UEFI CA 2023, so the disk is marked as having it.
        drive.opts.insert("ms-cert".into(), "2023k".into());
    }
    dc.log.push(format!(
        "{key}: successfully created disk '{volid},size={}'",
        storage::format_size(size)
    ));
    Ok(drive.print(fmt.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs() {
        let m = gen_mac(Some("BC:24:11"));
        assert!(m.starts_with("BC:24:11:") && m.len() == 17, "{m}");
        let r = gen_mac(None);
        let first = u8::from_str_radix(&r[..2], 16).unwrap();
        assert_eq!(first & 0x03, 0x02, "locally administered unicast");
    }

    #[test]
    fn net_canonical() {
        let s = Schema::embedded();
        let c = crate::scenario::Scenario::default_cluster().to_cluster().unwrap();
        let v = net(&s, &c, "net0", "model=virtio,firewall=on,bridge=vmbr0,tag=20", false).unwrap();
        assert!(v.starts_with("virtio=BC:24:11:"), "{v}");
        assert!(v.ends_with(",bridge=vmbr0,firewall=1,tag=20"), "{v}");
        let v = net(&s, &c, "net1", "e1000=aa:bb:cc:dd:ee:ff,bridge=vmbr1", false).unwrap();
        assert_eq!(v, "e1000=aa:bb:cc:dd:ee:ff,bridge=vmbr1", "given MACs are kept as sent");
    }

    #[test]
    fn tag_normalisation() {
        assert_eq!(
            tags(&crate::Scenario::default_cluster().to_cluster().unwrap(), "B,a;c;a"),
            "a;b;c"
        );
    }
}
