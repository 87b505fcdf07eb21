//! Refusals before anything is written, each naming the option, the cause and the fix:
//! a storage that does not take the content type, an `import` file the node's PVE does
//! not take yet, a `src` file that is missing or unreadable. Pure where it can be.

use std::fs::File;
use std::path::Path;

use serde_json::Value;

use ferrox_ansible::options::read::Choice;

use crate::task::Content;

/// The PVE version from which `upload` and `download-url` take a file of this name as
/// `import` content: `.ova` from pve-storage 8.2.8 (PVE 8.3, commit 40df25d), the disk
/// images `.qcow2`, `.raw`, `.vmdk` from pve-storage 8.3.6 (PVE 8.4, commit 76f695f).
pub(crate) fn import_since(name: &str) -> (u64, u64) {
    if name.ends_with(".ova") {
        (8, 3)
    } else {
        (8, 4)
    }
}

fn words(content: Content) -> &'static str {
    match content {
        Content::Vztmpl => "container templates (vztmpl)",
        Content::Iso => "ISO images (iso)",
        Content::Import => "import images (import)",
    }
}

/// Whether a flag of the node's storage listing is off (`0`, `false`); absent is on.
fn off(v: &Value) -> bool {
    v.as_u64() == Some(0) || v.as_bool() == Some(false) || v.as_str() == Some("0")
}

/// `Ok` when `storage` is on the node, enabled and active there, and its `content`
/// includes the type; from the node's storage listing (pve-storage `storage_info`:
/// `enabled: 0` for a storage storage.cfg disables or keeps off the node, `active: 0`
/// for one the node cannot activate, such as an NFS server it cannot reach).
pub(crate) fn storage_takes(listing: &Value, node: &str, storage: &str, content: Content) -> Result<(), String> {
    let items: Vec<&Value> = listing.as_array().into_iter().flatten().collect();
    let holds = |s: &Value| {
        s["content"]
            .as_str()
            .unwrap_or("")
            .split(',')
            .any(|c| c.trim() == content.name())
    };
    let usable = |s: &Value| !off(&s["enabled"]) && !off(&s["active"]);
    let fitting: Vec<&str> = items
        .iter()
        .filter(|s| holds(s) && usable(s))
        .filter_map(|s| s["storage"].as_str())
        .collect();
    let others = if fitting.is_empty() {
        "none".to_string()
    } else {
        fitting.join(", ")
    };
    match items.iter().find(|s| s["storage"] == storage) {
        Some(s) if off(&s["enabled"]) => Err(format!(
            "storage {storage} is disabled or not available on node {node} (enabled: 0: storage.cfg disables it or its nodes leave {node} out): enable it for node {node} (Datacenter > Storage > {storage}), or set storage to one that takes {} there (on node {node}: {others})",
            words(content),
        )),
        Some(s) if off(&s["active"]) => Err(format!(
            "storage {storage} is not active on node {node} (the node cannot reach or activate it, for example an NFS server it cannot mount): bring it back online on node {node}, or set storage to one that takes {} there (on node {node}: {others})",
            words(content),
        )),
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
pub(crate) fn extension_fits(content: Content, name: &str) -> Result<(), String> {
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

/// `Ok` when the node's version takes the file `name` as `import` content.
pub(crate) fn import_supported(version: &str, node: &str, name: &str) -> Result<(), String> {
    let mut parts = version
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u64>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    let since = import_since(name);
    if found >= since {
        return Ok(());
    }
    let (what, on_the_node) = if name.ends_with(".ova") {
        ("an OVA", "extract the OVA on the node and import it with qm importovf")
    } else {
        (
            "a disk image (.qcow2, .raw, .vmdk)",
            "import the disk image on the node with qm disk import",
        )
    };
    Err(format!(
        "content_type import of {what} needs Proxmox VE {}.{} or later, and node {node} runs pve-manager {version}: upgrade the node, or {on_the_node}",
        since.0, since.1
    ))
}

/// The file to upload, opened, and its length: a missing file keeps community.proxmox
/// 1.6's message; other failures say what is wrong and what to do.
pub(crate) fn open_src(path: &Path) -> Result<(File, u64), String> {
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
    fn a_storage_disabled_or_not_active_on_the_node_is_refused_naming_why() {
        let listing = json!([
            {"storage": "local", "content": "iso,vztmpl", "enabled": 1, "active": 1},
            {"storage": "nas", "content": "iso", "enabled": 1, "active": 0},
            {"storage": "old", "content": "iso", "enabled": 0, "active": 0},
        ]);
        assert_eq!(storage_takes(&listing, "pve1", "local", Content::Iso), Ok(()));
        assert_eq!(
            storage_takes(&listing, "pve1", "nas", Content::Iso).unwrap_err(),
            "storage nas is not active on node pve1 (the node cannot reach or activate it, for example an NFS server it cannot mount): bring it back online on node pve1, or set storage to one that takes ISO images (iso) there (on node pve1: local)"
        );
        assert_eq!(
            storage_takes(&listing, "pve1", "old", Content::Iso).unwrap_err(),
            "storage old is disabled or not available on node pve1 (enabled: 0: storage.cfg disables it or its nodes leave pve1 out): enable it for node pve1 (Datacenter > Storage > old), or set storage to one that takes ISO images (iso) there (on node pve1: local)"
        );
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
    fn import_takes_ova_from_8_3_and_disk_images_from_8_4() {
        let table = [
            ("8.3.0", "a.ova", true),
            ("8.2.7", "a.ova", false),
            ("8.3.5", "c.qcow2", false),
            ("8.4.1", "c.qcow2", true),
            ("8.4.0", "c.vmdk", true),
            ("9.0.3", "c.raw", true),
            ("9.1.1", "a.ova", true),
        ];
        for (version, name, takes) in table {
            assert_eq!(
                import_supported(version, "pve1", name).is_ok(),
                takes,
                "{version} {name}"
            );
        }
        assert_eq!(
            import_supported("8.3.5", "pve1", "c.qcow2").unwrap_err(),
            "content_type import of a disk image (.qcow2, .raw, .vmdk) needs Proxmox VE 8.4 or later, and node pve1 runs pve-manager 8.3.5: upgrade the node, or import the disk image on the node with qm disk import"
        );
        assert_eq!(
            import_supported("8.2.4", "pve1", "a.ova").unwrap_err(),
            "content_type import of an OVA needs Proxmox VE 8.3 or later, and node pve1 runs pve-manager 8.2.4: upgrade the node, or extract the OVA on the node and import it with qm importovf"
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
