//! Volumes on storages: PVE's naming (`vm-<vmid>-disk-<n>`, `base-…`, cloud-init),
//! allocation, size formatting, the storage listings, and storage.cfg as `GET /storage`
//! shows it.

use crate::api::Ctx;
use crate::auth;
use crate::error::ApiResult;
use crate::state::{Cluster, StorageDef, Volume};
use crate::util::now_secs;
use serde_json::{json, Map, Value};

pub const GIB: u64 = 1 << 30;

/// `size=` as PVE prints it: the largest unit that divides exactly, else bytes.
pub fn format_size(bytes: u64) -> String {
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        let f = 1u64 << shift;
        if bytes >= f && bytes % f == 0 {
            return format!("{}{unit}", bytes / f);
        }
    }
    bytes.to_string()
}

/// Parse `32G`, `512M`, `1.5G`, `10GiB`, bare bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s.strip_suffix("iB").unwrap_or(s);
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1u64 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        'T' | 't' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    let v: f64 = num.parse().ok()?;
    if v.is_nan() || v < 0.0 {
        return None;
    }
    Some((v * mult as f64).round() as u64)
}

/// Content type of a volume name on a file storage.
pub fn content_of(volname: &str) -> &'static str {
    match volname.split('/').next().unwrap_or("") {
        "iso" => "iso",
        "vztmpl" => "vztmpl",
        "import" => "import",
        "snippets" => "snippets",
        "dump" => "backup",
        _ if volname.contains("subvol-") => "rootdir",
        _ => "images",
    }
}

/// Format of a volume from its name (`.qcow2` etc.; block volumes are raw).
pub fn format_of(volname: &str) -> String {
    for f in [
        "qcow2", "raw", "vmdk", "iso", "img", "ova", "tar.zst", "tar.gz", "vma.zst", "vma.gz", "vma.lzo", "vma",
    ] {
        if volname.ends_with(&format!(".{f}")) {
            return f.to_string();
        }
    }
    if volname.contains("subvol-") {
        "subvol".into()
    } else {
        "raw".into()
    }
}

/// Owner vmid encoded in a volume name (`vm-100-disk-0`, `100/base-100-disk-0.qcow2`).
pub fn owner_of(volname: &str) -> Option<u32> {
    let last = volname.rsplit('/').next()?;
    let mut parts = last.split('-');
    match parts.next()? {
        "vm" | "base" | "subvol" => parts.next()?.parse().ok(),
        _ => None,
    }
}

/// Lowest `n` such that neither `vm-<vmid>-disk-<n>` nor `base-<vmid>-disk-<n>` exists.
pub fn free_disk_index(cluster: &Cluster, sd: &StorageDef, node: &str, vmid: u32) -> u32 {
    let vn = cluster.vol_node(&sd.id, node);
    let used: Vec<&Volume> = cluster
        .volumes
        .iter()
        .filter(|v| v.storage == sd.id && v.node == vn)
        .collect();
    (0..)
        .find(|n| {
            used.iter().all(|v| {
                let last = v.volname.rsplit('/').next().unwrap_or("");
                let stem = last.split('.').next().unwrap_or("");
                stem != format!("vm-{vmid}-disk-{n}") && stem != format!("base-{vmid}-disk-{n}")
            })
        })
        .unwrap_or(0)
}

/// Volume name for a new disk on a storage.
pub fn disk_volname(sd: &StorageDef, vmid: u32, n: u32, fmt: &str, base: bool) -> String {
    let prefix = if base { "base" } else { "vm" };
    if sd.is_file() {
        format!("{vmid}/{prefix}-{vmid}-disk-{n}.{fmt}")
    } else {
        format!("{prefix}-{vmid}-disk-{n}")
    }
}

/// Allocate a new image volume and return its volid.
pub fn alloc(
    cluster: &mut Cluster,
    storage: &str,
    node: &str,
    vmid: u32,
    size: u64,
    fmt: Option<&str>,
) -> Result<String, String> {
    let sd = cluster
        .storage(storage)
        .cloned()
        .ok_or_else(|| format!("storage '{storage}' does not exist"))?;
    let fmt = fmt.map(str::to_string).unwrap_or_else(|| sd.default_format());
    // pve-storage `vdisk_alloc`: the default format, then `activate_storage`.
    sd.activate(node)?;
    if !sd.formats().contains(&fmt) {
        return Err(format!("unsupported format '{fmt}'"));
    }
    let n = free_disk_index(cluster, &sd, node, vmid);
    let volname = disk_volname(&sd, vmid, n, &fmt, false);
    push(cluster, &sd, node, volname.clone(), size, &fmt, Some(vmid), "images");
    Ok(format!("{storage}:{volname}"))
}

/// Allocate with an explicit name (cloud-init drives, renamed template disks, clones).
pub fn alloc_named(cluster: &mut Cluster, storage: &str, node: &str, volname: &str, size: u64, vmid: u32) -> String {
    if let Some(sd) = cluster.storage(storage).cloned() {
        let fmt = format_of(volname);
        push(
            cluster,
            &sd,
            node,
            volname.to_string(),
            size,
            &fmt,
            Some(vmid),
            "images",
        );
    }
    format!("{storage}:{volname}")
}

#[allow(clippy::too_many_arguments)]
fn push(
    cluster: &mut Cluster,
    sd: &StorageDef,
    node: &str,
    volname: String,
    size: u64,
    fmt: &str,
    vmid: Option<u32>,
    content: &str,
) {
    let vn = if sd.shared { None } else { Some(node.to_string()) };
    cluster
        .volumes
        .retain(|v| !(v.storage == sd.id && v.volname == volname && v.node == vn));
    cluster.volumes.push(Volume {
        storage: sd.id.clone(),
        node: vn,
        volname,
        size,
        format: fmt.to_string(),
        vmid,
        content: content.to_string(),
        ctime: now_secs(),
        backup_config: None,
        checksums: Default::default(),
        virtual_size: None,
    });
}

/// Bytes used on a storage (as seen from `node`).
pub fn used(cluster: &Cluster, sd: &StorageDef, node: &str) -> u64 {
    let vn = cluster.vol_node(&sd.id, node);
    cluster
        .volumes
        .iter()
        .filter(|v| v.storage == sd.id && v.node == vn)
        .map(|v| v.size)
        .sum()
}

/// pve-storage's `@SHARED_STORAGE`: `parse_config` sets `shared 1` on these types whatever
/// storage.cfg says; other types are shared only where the config sets it.
const SHARED_TYPES: &[&str] = &[
    "iscsi",
    "nfs",
    "cifs",
    "rbd",
    "cephfs",
    "iscsidirect",
    "zfs",
    "drbd",
    "pbs",
];

fn is_shared(sd: &StorageDef) -> bool {
    sd.shared || SHARED_TYPES.contains(&sd.kind.as_str())
}

/// The storage's section of storage.cfg, as far as the scenario describes it.
fn section(sd: &StorageDef) -> String {
    let mut out = format!("{}: {}\n", sd.kind, sd.id);
    if let Some(path) = sd.mount_path() {
        out.push_str(&format!("\tpath {path}\n"));
    }
    out.push_str(&format!("\tcontent {}\n", sd.content.join(",")));
    if let Some(nodes) = &sd.nodes {
        out.push_str(&format!("\tnodes {}\n", nodes.join(",")));
    }
    if sd.shared && !SHARED_TYPES.contains(&sd.kind.as_str()) {
        out.push_str("\tshared 1\n");
    }
    if sd.disable {
        out.push_str("\tdisable 1\n");
    }
    out
}

/// `$cfg->{digest}`: the SHA-1 of storage.cfg as read (here: as the scenario renders it).
fn config_digest(storages: &[StorageDef]) -> String {
    use sha1::{Digest, Sha1};
    let text: Vec<String> = storages.iter().map(section).collect();
    Sha1::digest(text.join("\n").as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One storage as pve-storage's `$api_storage_config` hands it out: the section's
/// options plus `storage` and the file's `digest`, `content` and `nodes` as comma lists.
fn api_storage_config(sd: &StorageDef, digest: &str) -> Value {
    let mut m = Map::new();
    m.insert("storage".into(), json!(sd.id));
    m.insert("type".into(), json!(sd.kind));
    m.insert("content".into(), json!(sd.content.join(",")));
    m.insert("digest".into(), json!(digest));
    if let Some(path) = sd.mount_path() {
        m.insert("path".into(), json!(path));
    }
    if let Some(nodes) = &sd.nodes {
        m.insert("nodes".into(), json!(nodes.join(",")));
    }
    if is_shared(sd) {
        m.insert("shared".into(), json!(1));
    }
    if sd.disable {
        m.insert("disable".into(), json!(1));
    }
    Value::Object(m)
}

/// `GET /storage` (pve-storage `PVE::API2::Storage::Config`, `index`): every storage.cfg
/// entry the caller has `Datastore.Audit` or `Datastore.AllocateSpace` on (`check_any`
/// on `/storage/<id>`, in the handler: any authenticated user may call it), of the
/// `type` asked for.
pub fn index(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let digest = config_digest(&ctx.c.storages);
    let only = ctx.get("type");
    let out = ctx
        .c
        .storages
        .iter()
        .filter(|sd| {
            let path = format!("/storage/{}", sd.id);
            auth::has(ctx.c, ctx.who, &path, "Datastore.Audit")
                || auth::has(ctx.c, ctx.who, &path, "Datastore.AllocateSpace")
        })
        .filter(|sd| only.is_none_or(|t| t == sd.kind))
        .map(|sd| api_storage_config(sd, &digest))
        .collect();
    Ok(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_units() {
        assert_eq!(format_size(34359738368), "32G");
        assert_eq!(format_size(540672), "528K");
        assert_eq!(format_size(4 << 20), "4M");
        assert_eq!(format_size(1 << 40), "1T");
        assert_eq!(format_size(1000), "1000");
        assert_eq!(format_size(1536 << 20), "1536M");
        assert_eq!(parse_size("32G"), Some(32 << 30));
        assert_eq!(parse_size("0.5G"), Some(512 << 20));
        assert_eq!(parse_size("10GiB"), Some(10 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn naming() {
        let dir = StorageDef {
            id: "local".into(),
            kind: "dir".into(),
            content: vec![],
            shared: false,
            nodes: None,
            formats: None,
            total: 1,
            path: None,
            disable: false,
            inactive_on: Vec::new(),
        };
        let lvm = StorageDef {
            kind: "lvmthin".into(),
            id: "local-lvm".into(),
            ..dir.clone()
        };
        assert_eq!(disk_volname(&dir, 100, 0, "qcow2", false), "100/vm-100-disk-0.qcow2");
        assert_eq!(disk_volname(&lvm, 100, 1, "raw", false), "vm-100-disk-1");
        assert_eq!(
            disk_volname(&dir, 9000, 0, "qcow2", true),
            "9000/base-9000-disk-0.qcow2"
        );
        assert_eq!(owner_of("9000/base-9000-disk-0.qcow2"), Some(9000));
        assert_eq!(owner_of("vm-101-cloudinit"), Some(101));
        assert_eq!(owner_of("iso/x.iso"), None);
        assert_eq!(content_of("iso/debian.iso"), "iso");
        assert_eq!(format_of("100/vm-100-disk-0.qcow2"), "qcow2");
        assert_eq!(lvm.default_format(), "raw");
        assert_eq!(dir.default_format(), "qcow2");
    }
}
