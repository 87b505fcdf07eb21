//! Refusals before anything is written, each naming the option, the cause and the fix:
//! a storage that does not take the content type, `import` on a cluster older than
//! PVE 8.4, a `src` file that is missing or unreadable. Pure where it can be.

use std::fs::File;
use std::path::Path;

use serde_json::Value;

use ferrox_common::ansible::options::read::Choice;

use crate::task::Content;

/// `import` content (disk images, OVA) came with pve-storage in PVE 8.4.
pub const IMPORT_SINCE: (u64, u64) = (8, 4);

fn words(content: Content) -> &'static str {
    match content {
        Content::Vztmpl => "container templates (vztmpl)",
        Content::Iso => "ISO images (iso)",
        Content::Import => "import images (import)",
    }
}

/// `Ok` when `storage` is on the node, enabled, and its `content` includes the type;
/// from the node's storage listing.
pub fn storage_takes(listing: &Value, node: &str, storage: &str, content: Content) -> Result<(), String> {
    let items: Vec<&Value> = listing.as_array().into_iter().flatten().collect();
    let holds = |s: &Value| {
        s["content"]
            .as_str()
            .unwrap_or("")
            .split(',')
            .any(|c| c.trim() == content.name())
    };
    let fitting: Vec<&str> = items
        .iter()
        .filter(|s| holds(s))
        .filter_map(|s| s["storage"].as_str())
        .collect();
    let others = if fitting.is_empty() {
        "none".to_string()
    } else {
        fitting.join(", ")
    };
    match items.iter().find(|s| s["storage"] == storage) {
        Some(s) if holds(s) => Ok(()),
        Some(s) => Err(format!(
            "storage {storage} on node {node} does not take {} (its content: {}): add {} to the storage's content types (Datacenter > Storage > {storage} > Content), or set storage to one that takes them (on node {node}: {others})",
            words(content),
            s["content"].as_str().unwrap_or(""),
            content.name(),
        )),
        None => Err(format!(
            "storage {storage} does not exist on node {node} (or the caller may not see it: it needs Datastore.Audit or Datastore.AllocateSpace on /storage/{storage}); storages on node {node} that take {}: {others}",
            words(content)
        )),
    }
}

/// The extensions pve-storage accepts per content type (`.iso` and `.img` case-blind,
/// templates as tar archives, import images case-sensitive), so a name PVE would
/// refuse with "wrong file extension" is refused first, in check mode too.
pub fn extension_fits(content: Content, name: &str) -> Result<(), String> {
    let lower = name.to_ascii_lowercase();
    let (fits, takes) = match content {
        Content::Iso => (
            [".iso", ".img"]
                .iter()
                .any(|e| lower.ends_with(e) && lower.len() > e.len()),
            ".iso or .img",
        ),
        Content::Vztmpl => (
            [".tar", ".tar.gz", ".tar.xz", ".tar.zst", ".tar.bz2"]
                .iter()
                .any(|e| lower.ends_with(e) && lower.len() > e.len()),
            ".tar, .tar.gz, .tar.xz, .tar.zst or .tar.bz2",
        ),
        Content::Import => (
            [".ova", ".qcow2", ".raw", ".vmdk"]
                .iter()
                .any(|e| name.ends_with(e) && name.len() > e.len()),
            ".ova, .qcow2, .raw or .vmdk (lower case)",
        ),
    };
    if fits {
        return Ok(());
    }
    Err(format!(
        "the file name {name} does not fit content_type {}: Proxmox VE takes {takes} files there. Set content_type to the file's type (iso, vztmpl, import), or give it a fitting name with template",
        content.name()
    ))
}

/// `Ok` when the node's version takes `import` content.
pub fn import_supported(version: &str, node: &str) -> Result<(), String> {
    let mut parts = version
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u64>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if found >= IMPORT_SINCE {
        return Ok(());
    }
    Err(format!(
        "content_type import needs Proxmox VE {}.{} or later, and node {node} runs pve-manager {version}: upgrade the node, or import the disk image on the node with qm disk import",
        IMPORT_SINCE.0, IMPORT_SINCE.1
    ))
}

/// The file to upload, opened, and its length: a missing file keeps community.proxmox
/// 1.6's message; other failures say what is wrong and what to do.
pub fn open_src(path: &Path) -> Result<(File, u64), String> {
    let shown = path.display();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "template file on path {shown} not exists: src must name an existing file on the host the task runs on"
            ))
        }
        Err(e) => {
            return Err(format!(
                "src {shown} cannot be read ({e}): give a file the task's user may read"
            ))
        }
    };
    if !meta.is_file() {
        return Err(format!(
            "template file on path {shown} not exists: src names a directory or special file, not a regular file"
        ));
    }
    let file = File::open(path).map_err(|e| {
        format!(
            "src {shown} cannot be read ({e}): give a file the task's user may read (check its mode, or use become)"
        )
    })?;
    Ok((file, meta.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_storage_without_the_content_type_names_the_fix_and_the_alternatives() {
        let listing = json!([
            {"storage": "local", "content": "iso,vztmpl,backup"},
            {"storage": "vmdata", "content": "images,import"},
        ]);
        assert_eq!(storage_takes(&listing, "pve1", "vmdata", Content::Import), Ok(()));
        assert_eq!(
            storage_takes(&listing, "pve1", "local", Content::Import).unwrap_err(),
            "storage local on node pve1 does not take import images (import) (its content: iso,vztmpl,backup): add import to the storage's content types (Datacenter > Storage > local > Content), or set storage to one that takes them (on node pve1: vmdata)"
        );
        assert!(storage_takes(&listing, "pve1", "nas", Content::Iso)
            .unwrap_err()
            .starts_with("storage nas does not exist on node pve1"));
    }

    #[test]
    fn names_must_have_the_extension_pve_takes_for_the_content_type() {
        assert!(extension_fits(Content::Iso, "x.ISO").is_ok());
        assert!(extension_fits(Content::Vztmpl, "d.tar.zst").is_ok());
        assert!(extension_fits(Content::Import, "c.qcow2").is_ok());
        assert!(extension_fits(Content::Import, "c.QCOW2").is_err());
        assert!(extension_fits(Content::Iso, ".iso").is_err());
        assert_eq!(
            extension_fits(Content::Iso, "debian.qcow2").unwrap_err(),
            "the file name debian.qcow2 does not fit content_type iso: Proxmox VE takes .iso or .img files there. Set content_type to the file's type (iso, vztmpl, import), or give it a fitting name with template"
        );
    }

    #[test]
    fn import_needs_8_4() {
        assert!(import_supported("8.4.1", "pve1").is_ok());
        assert!(import_supported("9.0.3", "pve1").is_ok());
        assert_eq!(
            import_supported("8.3.5", "pve1").unwrap_err(),
            "content_type import needs Proxmox VE 8.4 or later, and node pve1 runs pve-manager 8.3.5: upgrade the node, or import the disk image on the node with qm disk import"
        );
    }

    #[test]
    fn a_missing_src_keeps_1_6s_words() {
        let e = open_src(Path::new("/nonexistent/x.iso")).unwrap_err();
        assert!(
            e.starts_with("template file on path /nonexistent/x.iso not exists"),
            "{e}"
        );
    }
}
