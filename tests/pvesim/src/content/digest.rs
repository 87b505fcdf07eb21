//! The digests a file is known by. A file that comes through `download-url` or `upload`
//! is hashed once, as it streams, with every algorithm PVE's `checksum-algorithm` takes, so
//! a later `download-url` of the same name can be checked as PVE checks the file on disk.

use sha1::Digest;
use std::collections::BTreeMap;

/// PVE's `checksum-algorithm` choices.
pub const ALGORITHMS: [&str; 6] = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512"];

/// All six digests of one byte stream.
#[derive(Default)]
pub struct Digests {
    md5: md5::Md5,
    sha1: sha1::Sha1,
    sha224: sha2::Sha224,
    sha256: sha2::Sha256,
    sha384: sha2::Sha384,
    sha512: sha2::Sha512,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Digests {
    pub fn update(&mut self, data: &[u8]) {
        self.md5.update(data);
        self.sha1.update(data);
        self.sha224.update(data);
        self.sha256.update(data);
        self.sha384.update(data);
        self.sha512.update(data);
    }

    /// Algorithm → lower-case hex digest.
    pub fn finish(self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("md5".to_string(), hex(&self.md5.finalize())),
            ("sha1".to_string(), hex(&self.sha1.finalize())),
            ("sha224".to_string(), hex(&self.sha224.finalize())),
            ("sha256".to_string(), hex(&self.sha256.finalize())),
            ("sha384".to_string(), hex(&self.sha384.finalize())),
            ("sha512".to_string(), hex(&self.sha512.finalize())),
        ])
    }
}

/// The digest of a stored file: the one recorded, else (content nobody knows, e.g. a
/// scenario file without `checksums`) a fixed stand-in of the algorithm's length derived
/// from the volume id, which matches no real checksum.
pub fn of_volume(checksums: &BTreeMap<String, String>, volid: &str, algorithm: &str) -> String {
    if let Some(d) = checksums.get(algorithm) {
        return d.clone();
    }
    let len = match algorithm {
        "md5" => 32,
        "sha1" => 40,
        "sha224" => 56,
        "sha256" => 64,
        "sha384" => 96,
        _ => 128,
    };
    let seed = hex(&sha2::Sha512::digest(
        format!("pvesim unknown content {volid}").as_bytes(),
    ));
    seed[..len].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests_of_abc() {
        let mut d = Digests::default();
        d.update(b"a");
        d.update(b"bc");
        let m = d.finish();
        assert_eq!(m["md5"], "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(m["sha1"], "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            m["sha256"],
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(m["sha224"].len(), 56);
        assert_eq!(m["sha384"].len(), 96);
        assert_eq!(m["sha512"].len(), 128);
    }

    #[test]
    fn unknown_content_has_a_stable_stand_in() {
        let none = BTreeMap::new();
        assert_eq!(of_volume(&none, "local:iso/a.iso", "sha256").len(), 64);
        assert_eq!(
            of_volume(&none, "local:iso/a.iso", "md5"),
            of_volume(&none, "local:iso/a.iso", "md5")
        );
        assert_ne!(
            of_volume(&none, "local:iso/a.iso", "md5"),
            of_volume(&none, "local:iso/b.iso", "md5")
        );
    }
}
