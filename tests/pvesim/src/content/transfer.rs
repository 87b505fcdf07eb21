//! What `download-url` and `upload` share: a file's bytes counted and hashed as they
//! stream by (never kept), the checksum check, the image checks PVE runs on a new file
//! (`assert_file_validity`), and the file put on its storage.

use super::digest::{self, Digests};
use crate::state::{Cluster, StorageDef, Volume};
use crate::util::now_secs;
use std::collections::BTreeMap;

/// Bytes of a file's start kept to read its image header.
const HEAD_BYTES: usize = 64;

/// A file as it arrives.
#[derive(Default)]
pub struct Sink {
    digests: Digests,
    size: u64,
    head: Vec<u8>,
}

/// A file that arrived: its size, digests and first bytes.
#[derive(Debug, Clone, Default)]
pub struct Received {
    pub size: u64,
    pub checksums: BTreeMap<String, String>,
    pub head: Vec<u8>,
}

impl Sink {
    pub fn write(&mut self, data: &[u8]) {
        if self.head.len() < HEAD_BYTES {
            let take = (HEAD_BYTES - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..take]);
        }
        self.digests.update(data);
        self.size += data.len() as u64;
    }
    pub fn size(&self) -> u64 {
        self.size
    }
    pub fn finish(self) -> Received {
        Received {
            size: self.size,
            checksums: self.digests.finish(),
            head: self.head,
        }
    }
}

/// `checksum mismatch: got '…' != expect '…'` unless the digest matches (case ignored).
pub fn check_checksum(got: &str, expected: &str) -> Result<(), String> {
    if got.eq_ignore_ascii_case(expected) {
        Ok(())
    } else {
        Err(format!("checksum mismatch: got '{got}' != expect '{expected}'"))
    }
}

/// The digest of a file already on a storage.
pub fn existing_digest(v: &Volume, algorithm: &str) -> String {
    digest::of_volume(&v.checksums, &v.volid(), algorithm)
}

/// A qcow2 header: (virtual size, has a backing file).
fn qcow2(head: &[u8]) -> Option<(u64, bool)> {
    if head.len() < 32 || &head[..4] != b"QFI\xfb" {
        return None;
    }
    let be = |at: usize| u64::from_be_bytes(head[at..at + 8].try_into().unwrap_or_default());
    Some((be(24), be(8) != 0))
}

/// pve-storage's checks of an untrusted new file at `path` (`file_size_info` with the
/// expected format; `assert_iso_content`): an image of another format or with a backing
/// file is refused. Returns the image's virtual size where it differs from the file's.
pub fn check_image(format: Option<&str>, received: &Received, path: &str) -> Result<Option<u64>, String> {
    let header = qcow2(&received.head);
    if let Some((_, true)) = header {
        return Err(format!("backing file not allowed for untrusted image '{path}'!"));
    }
    match format {
        Some("qcow2") => match header {
            Some((virtual_size, false)) => Ok(Some(virtual_size)),
            _ => Err(format!(
                "qemu-img: Could not open '{path}': Image is not in qcow2 format"
            )),
        },
        _ => Ok(None),
    }
}

/// Put a file on a storage (as seen from `node`), replacing one of the same name.
pub fn place(
    c: &mut Cluster,
    sd: &StorageDef,
    node: &str,
    volname: &str,
    received: &Received,
    virtual_size: Option<u64>,
) {
    let vn = c.vol_node(&sd.id, node);
    c.volumes
        .retain(|v| !(v.storage == sd.id && v.volname == volname && v.node == vn));
    c.volumes.push(Volume {
        storage: sd.id.clone(),
        node: vn,
        volname: volname.to_string(),
        size: received.size,
        format: crate::storage::format_of(volname),
        vmid: None,
        content: crate::storage::content_of(volname).to_string(),
        ctime: now_secs(),
        backup_config: None,
        checksums: received.checksums.clone(),
        virtual_size,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qcow2_head(size: u64, backing: u64) -> Vec<u8> {
        let mut h = b"QFI\xfb\0\0\0\x03".to_vec();
        h.extend(backing.to_be_bytes());
        h.extend([0u8; 8]);
        h.extend(size.to_be_bytes());
        h
    }

    #[test]
    fn images_are_checked_like_pve() {
        let r = |head: Vec<u8>| Received {
            head,
            ..Received::default()
        };
        assert_eq!(
            check_image(Some("qcow2"), &r(qcow2_head(2 << 30, 0)), "/p"),
            Ok(Some(2 << 30))
        );
        assert_eq!(
            check_image(Some("qcow2"), &r(b"plain bytes".to_vec()), "/p").unwrap_err(),
            "qemu-img: Could not open '/p': Image is not in qcow2 format"
        );
        assert_eq!(
            check_image(Some("qcow2"), &r(qcow2_head(1, 512)), "/p").unwrap_err(),
            "backing file not allowed for untrusted image '/p'!"
        );
        assert_eq!(check_image(Some("raw"), &r(b"x".to_vec()), "/p"), Ok(None));
        assert_eq!(
            check_image(None, &r(qcow2_head(1, 512)), "/p").unwrap_err(),
            "backing file not allowed for untrusted image '/p'!"
        );
    }

    #[test]
    fn sink_keeps_size_digests_and_head_only() {
        let mut s = Sink::default();
        for _ in 0..100 {
            s.write(&[7u8; 1000]);
        }
        let r = s.finish();
        assert_eq!((r.size, r.head.len()), (100_000, HEAD_BYTES));
        assert_eq!(
            check_checksum(&r.checksums["sha256"].to_uppercase(), &r.checksums["sha256"]),
            Ok(())
        );
        assert!(check_checksum("ab", "cd")
            .unwrap_err()
            .starts_with("checksum mismatch: got 'ab' != expect 'cd'"));
    }
}
