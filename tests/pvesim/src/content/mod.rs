//! Files on storages that are not guest disks (ISO images, container templates, `import`
//! images), as pve-storage keeps them: the listing and removal (`list.rs`), the file-name
//! rules of uploads and downloads (`names.rs`), `download-url` (`download.rs`, fetching
//! with `fetch.rs`), multipart `upload` (`upload.rs`), `query-url-metadata`
//! (`metadata.rs`), and the digests a stored file is known by (`digest.rs`).

pub mod appliances;
pub mod digest;
pub mod download;
pub mod fetch;
pub mod list;
pub mod metadata;
pub mod multipart;
pub mod names;
pub mod transfer;
pub mod upload;

use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::state::{Cluster, StorageDef};

/// What download-url and upload check first, in pve-storage's order: `import` is a
/// content type of this PVE version, the storage is on the node, and it keeps files
/// (each call words that refusal its own way: `not_files` ends its message).
pub fn file_storage(ctx: &Ctx<'_>, content: &str, sid: &str, node: &str, not_files: &str) -> ApiResult<StorageDef> {
    if content == "import" && !ctx.c.pve_at_least(8, 3) {
        return Err(ApiError::param(
            "content",
            "value 'import' does not have a value in the enumeration 'iso, vztmpl'",
        ));
    }
    let sd = storage_on_node(ctx.c, sid, node)?;
    if sd.mount_path().is_none() {
        return Err(ApiError::internal(format!(
            "can't upload to storage type '{}'{not_files}",
            sd.kind
        )));
    }
    Ok(sd)
}

/// pve-storage's `storage_check_enabled` for a node: the storage exists, is not
/// disabled, and is there.
pub fn storage_on_node(c: &Cluster, sid: &str, node: &str) -> ApiResult<StorageDef> {
    let sd = c
        .storage(sid)
        .cloned()
        .ok_or_else(|| ApiError::internal(format!("storage '{sid}' does not exist")))?;
    if sd.disable {
        return Err(ApiError::internal(format!("storage '{sid}' is disabled")));
    }
    if !sd.on_node(node) {
        return Err(ApiError::internal(format!(
            "storage '{sid}' is not available on node '{node}'"
        )));
    }
    Ok(sd)
}

/// The file system path of a volume on a file storage (pve-storage's `filesystem_path`
/// with its content sub-directories).
pub fn file_path(sd: &StorageDef, volname: &str) -> String {
    let base = sd.mount_path().unwrap_or_default();
    let (dir, rest) = volname.split_once('/').unwrap_or(("", volname));
    let sub = match dir {
        "iso" => "template/iso".to_string(),
        "vztmpl" => "template/cache".to_string(),
        "backup" => "dump".to_string(),
        "snippets" | "import" => dir.to_string(),
        _ => format!("images/{dir}"),
    };
    format!("{base}/{sub}/{rest}")
}
