//! `GET /nodes/{node}/storage/{storage}/content` and `DELETE …/content/{volume}`, as
//! pve-storage's `volume_list`, `check_volume_access` and `vdisk_free` do them.

use crate::api::Ctx;
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::state::{Cluster, StorageDef, Volume};
use crate::tasks;
use serde_json::{json, Map, Value};

/// `volume_list`'s content types, in its order.
const CONTENT_TYPES: [&str; 7] = ["rootdir", "images", "vztmpl", "iso", "backup", "snippets", "import"];

/// The `format` a listing gives a file (`get_subdir_files`): `iso` for every ISO image,
/// `tar`/`tgz`/`tzst`/… for container templates, the extension for `import` files.
fn listed_format(v: &Volume) -> String {
    match v.content.as_str() {
        "iso" => "iso".into(),
        "vztmpl" => match v.volname.rsplit_once(".tar.") {
            Some((_, comp)) => format!("t{comp}"),
            None => "tar".into(),
        },
        "import" => v.volname.rsplit('.').next().unwrap_or("").into(),
        "snippets" => "snippet".into(),
        _ => v.format.clone(),
    }
}

/// Whether a `vmid` filter keeps a volume: ISOs and templates are left out, `import` and
/// snippets are listed regardless, backups and disks by owner.
fn kept_by_vmid(v: &Volume, vmid: Option<u32>) -> bool {
    let Some(id) = vmid else { return true };
    match v.content.as_str() {
        "iso" | "vztmpl" => false,
        "import" | "snippets" => true,
        _ => v.vmid == Some(id),
    }
}

/// `check_volume_access` without a VM: who may see a volume in a listing.
fn may_access(c: &Cluster, who: &auth::Identity, v: &Volume) -> bool {
    let path = format!("/storage/{}", v.storage);
    if auth::has(c, who, &path, "Datastore.Allocate") {
        return true;
    }
    match (v.content.as_str(), v.vmid) {
        ("iso" | "vztmpl" | "import", _) => {
            auth::has(c, who, &path, "Datastore.AllocateSpace") || auth::has(c, who, &path, "Datastore.Audit")
        }
        ("backup", Some(owner)) => {
            auth::has(c, who, &path, "Datastore.AllocateSpace")
                && auth::has(c, who, &format!("/vms/{owner}"), "VM.Backup")
        }
        ("images" | "rootdir", Some(owner)) => {
            auth::has(c, who, &path, "Datastore.Audit") && auth::has(c, who, &format!("/vms/{owner}"), "VM.Config.Disk")
        }
        _ => false,
    }
}

fn entry(v: &Volume) -> Value {
    let mut m = Map::new();
    m.insert("volid".into(), json!(v.volid()));
    m.insert("format".into(), json!(listed_format(v)));
    m.insert("size".into(), json!(v.size));
    m.insert("content".into(), json!(v.content));
    m.insert("ctime".into(), json!(v.ctime));
    if let Some(id) = v
        .vmid
        .filter(|_| matches!(v.content.as_str(), "images" | "rootdir" | "backup"))
    {
        m.insert("vmid".into(), json!(id));
    }
    if v.content == "backup" {
        let subtype = if v.volname.contains("vzdump-qemu-") {
            "qemu"
        } else if v.volname.contains("vzdump-lxc-") {
            "lxc"
        } else {
            "unknown"
        };
        m.insert("subtype".into(), json!(subtype));
    }
    if v.content == "images" || v.content == "rootdir" {
        m.insert("used".into(), json!(v.size / 4));
    }
    Value::Object(m)
}

/// `GET …/content`: the types the storage is configured for (or the one asked for),
/// sorted by volume id without regard to case.
pub fn index(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let sid = ctx.get("storage").unwrap_or("").to_string();
    let sd = super::storage_on_node(ctx.c, &sid, &node)?;
    // pve-storage `volume_list` activates the storage first.
    sd.activate(&node).map_err(crate::error::ApiError::internal)?;
    let wanted: Vec<&str> = match ctx.get("content") {
        Some(one) => vec![one],
        None => CONTENT_TYPES.to_vec(),
    };
    let types: Vec<&str> = wanted.into_iter().filter(|t| sd.has_content(t)).collect();
    let vmid: Option<u32> = ctx.get("vmid").and_then(|v| v.parse().ok());
    let vn = ctx.c.vol_node(&sid, &node);
    let mut out: Vec<(String, Value)> = ctx
        .c
        .volumes
        .iter()
        .filter(|v| v.storage == sid && v.node == vn && types.contains(&v.content.as_str()))
        .filter(|v| kept_by_vmid(v, vmid) && may_access(ctx.c, ctx.who, v))
        .map(|v| (v.volid().to_lowercase(), entry(v)))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Value::Array(out.into_iter().map(|(_, v)| v).collect()))
}

/// pve-storage's `parse_volume_id`.
fn parse_volume_id(volid: &str) -> Result<(String, String), String> {
    static RE: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"(?s)^([a-zA-Z][a-zA-Z0-9\-_.]*[a-zA-Z0-9]):(.+)$").unwrap());
    match RE.captures(volid) {
        Some(c) => Ok((c[1].to_string(), c[2].to_string())),
        None => Err(format!("unable to parse volume ID '{volid}'\n")),
    }
}

/// The content's `real_volume_id`: a full volume id (whose storage must be the one in
/// the path) or a name on the path's storage.
fn real_volume_id(storage: Option<&str>, volume: &str) -> ApiResult<(String, String, String)> {
    if volume.contains(':') {
        let (sid, name) = parse_volume_id(volume).map_err(|e| ApiError::param("volume", e))?;
        if let Some(s) = storage.filter(|s| *s != sid) {
            return Err(ApiError::param(
                "volume",
                format!("storage ID mismatch ({sid} != {s})\n"),
            ));
        }
        return Ok((volume.to_string(), sid, name));
    }
    let Some(sid) = storage else {
        return Err(ApiError::param("volume", "no storage specified - incomplete volume ID"));
    };
    Ok((format!("{sid}:{volume}"), sid.to_string(), volume.to_string()))
}

/// A directory storage's `parse_volname`: the volume's type and owner.
fn parse_volname(sd: &StorageDef, volname: &str) -> ApiResult<(String, Option<u32>)> {
    static DIR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(?:(\d+)/\S+|(iso)/[^/]+\.(?i:iso|img)|(vztmpl)/[^/]+\.(?i:tar|tar\.(?:gz|xz|zst|bz2))|(dump|backup)/[^/]+|(snippets)/[^/]+|(import)/[ a-zA-Z0-9\-.+=_]+\.(?:ova|ovf|qcow2|raw|vmdk)(?:/.+)?)$").unwrap()
    });
    if !sd.is_file() {
        return Ok((
            crate::storage::content_of(volname).to_string(),
            crate::storage::owner_of(volname),
        ));
    }
    let Some(c) = DIR.captures(volname) else {
        return Err(ApiError::internal(format!(
            "unable to parse directory volume name '{volname}'"
        )));
    };
    let owner = |n: &str| n.parse().ok();
    Ok(
        match (c.get(1), c.get(2).or(c.get(3)).or(c.get(5)).or(c.get(6)), c.get(4)) {
            (Some(id), _, _) => ("images".into(), owner(id.as_str())),
            (_, Some(kind), _) => (kind.as_str().into(), None),
            _ => ("backup".into(), volname.split('-').nth(2).and_then(owner)),
        },
    )
}

/// `GET …/content/{volume}`: a volume's path, size, used space and format as
/// `volume_size_info` reports them (qemu-img: an image's virtual size, its file's size as
/// used; ISOs and templates are `raw`).
pub fn info(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let (volid, sid, volname) = real_volume_id(ctx.get("storage"), ctx.get("volume").unwrap_or(""))?;
    let sd = ctx
        .c
        .storage(&sid)
        .cloned()
        .ok_or_else(|| ApiError::internal(format!("storage '{sid}' does not exist")))?;
    let (vtype, owner) = parse_volname(&sd, &volname)?;
    let probe = Volume {
        storage: sid.clone(),
        volname: volname.clone(),
        content: vtype.clone(),
        vmid: owner,
        node: None,
        size: 0,
        format: String::new(),
        ctime: 0,
        backup_config: None,
        checksums: Default::default(),
        virtual_size: None,
    };
    if !may_access(ctx.c, ctx.who, &probe) {
        let path = format!("/storage/{sid}");
        return Err(match (vtype.as_str(), owner) {
            ("iso" | "vztmpl" | "import", _) => ApiError::forbidden(&path, "Datastore.AllocateSpace|Datastore.Audit"),
            ("images" | "rootdir", Some(id)) if auth::has(ctx.c, ctx.who, &path, "Datastore.Audit") => {
                ApiError::forbidden(&format!("/vms/{id}"), "VM.Config.Disk")
            }
            ("images" | "rootdir", Some(_)) => ApiError::forbidden(&path, "Datastore.Audit"),
            ("backup", Some(id)) if auth::has(ctx.c, ctx.who, &path, "Datastore.AllocateSpace") => {
                ApiError::forbidden(&format!("/vms/{id}"), "VM.Backup")
            }
            ("backup", Some(_)) => ApiError::forbidden(&path, "Datastore.AllocateSpace"),
            _ => ApiError::internal(format!("missing privileges to access {volid}")),
        });
    }
    let Some(v) = ctx.c.find_volume(&volid, &node).cloned() else {
        return Err(ApiError::internal(format!(
            "volume_size_info on '{volid}' failed - no format"
        )));
    };
    let path = match sd.mount_path() {
        Some(_) => super::file_path(&sd, &volname),
        None => format!("/dev/{sid}/{volname}"),
    };
    let format = match v.content.as_str() {
        "iso" | "vztmpl" | "snippets" | "backup" => "raw".to_string(),
        "import" => v.volname.rsplit('.').next().unwrap_or("raw").to_string(),
        _ => v.format.clone(),
    };
    Ok(json!({"path": path, "size": v.virtual_size.unwrap_or(v.size), "used": v.size, "format": format}))
}

/// `DELETE …/content/{volume}`: an `imgdel` task (`delay`: wait for it up to that many
/// seconds, then answer null, its error, or the UPID).
pub fn delete(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let (volid, sid, volname) = real_volume_id(ctx.get("storage"), ctx.get("volume").unwrap_or(""))?;
    let sd = ctx
        .c
        .storage(&sid)
        .cloned()
        .ok_or_else(|| ApiError::internal(format!("storage '{sid}' does not exist")))?;
    let (vtype, owner) = parse_volname(&sd, &volname)?;
    match (vtype.as_str(), owner) {
        ("backup", Some(id)) => {
            ctx.require(&format!("/storage/{sid}"), "Datastore.AllocateSpace")?;
            ctx.require(&format!("/vms/{id}"), "VM.Backup")?;
        }
        _ => ctx.require(&format!("/storage/{sid}"), "Datastore.Allocate")?,
    }
    let id = match owner {
        Some(o) => format!("{o}@{sid}"),
        None => sid.clone(),
    };
    let node2 = node.clone();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "imgdel",
        &id,
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            t.check_fault()?;
            free(c, &sd, &volid, &volname, &node2, t)?;
            t.log.push(format!("Removed volume '{volid}'"));
            Ok(())
        }),
    );
    if let Some(delay) = ctx.get("delay").and_then(|d| d.parse::<u64>().ok()) {
        ctx.wait_task = Some((upid.clone(), delay));
    }
    Ok(Value::String(upid))
}

/// `vdisk_free`: a base image with linked clones stays; a missing file is a warning.
fn free(
    c: &mut Cluster,
    sd: &StorageDef,
    volid: &str,
    volname: &str,
    node: &str,
    t: &mut tasks::TaskCtx,
) -> Result<(), String> {
    let base_in_use = volname.contains("base-")
        && c.guests
            .values()
            .flat_map(|g| g.conf.current.values())
            .any(|v| v.split(',').next().is_some_and(|f| f.contains(&format!("{volname}/"))));
    if base_in_use {
        return Err(format!("base volume '{volname}' is still in use by linked clones"));
    }
    if c.remove_volume(volid, node) {
        return Ok(());
    }
    match sd.kind.as_str() {
        _ if sd.is_file() => {
            t.warn(format!("disk image '{}' does not exist", super::file_path(sd, volname)));
            Ok(())
        }
        "lvm" | "lvmthin" => Err(format!(
            "lvremove 'pve/{volname}' error:   Failed to find logical volume \"pve/{volname}\""
        )),
        "zfspool" => Err(format!(
            "zfs error: cannot open 'rpool/data/{volname}': dataset does not exist"
        )),
        _ => Err(format!("volume '{volid}' does not exist")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_ids() {
        assert_eq!(real_volume_id(Some("local"), "iso/a.iso").unwrap().0, "local:iso/a.iso");
        assert_eq!(real_volume_id(None, "local:iso/a.iso").unwrap().1, "local");
        let e = real_volume_id(Some("isos"), "local:iso/a.iso").unwrap_err();
        assert_eq!(e.errors.unwrap()["volume"], "storage ID mismatch (local != isos)\n");
        let e = real_volume_id(None, "iso/a.iso").unwrap_err();
        assert_eq!(
            e.errors.unwrap()["volume"],
            "no storage specified - incomplete volume ID"
        );
    }

    #[test]
    fn directory_volume_names() {
        let sd = StorageDef {
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
        assert_eq!(parse_volname(&sd, "iso/a.iso").unwrap(), ("iso".into(), None));
        assert_eq!(parse_volname(&sd, "import/c.qcow2").unwrap(), ("import".into(), None));
        assert_eq!(
            parse_volname(&sd, "100/vm-100-disk-0.qcow2").unwrap(),
            ("images".into(), Some(100))
        );
        assert_eq!(
            parse_volname(&sd, "dump/vzdump-qemu-100-2025_01_01-00_00_00.vma.zst").unwrap(),
            ("backup".into(), Some(100))
        );
        let e = parse_volname(&sd, "iso/a.txt").unwrap_err();
        assert_eq!(e.message, "unable to parse directory volume name 'iso/a.txt'");
    }
}
