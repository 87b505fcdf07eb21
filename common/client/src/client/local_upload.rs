//! An upload in local mode. pvesh has no file parameter: it hands its options to the
//! API handler as they are (pve-manager `PVE/CLI/pvesh.pm` `call_api_method`), and
//! pve-storage's `upload` (`src/PVE/API2/Storage/Status.pm`) copies the file named by
//! `tmpfilename` — which pve-http-server fills in over HTTPS — into the storage, in its
//! `imgcopy` task, then unlinks it. Its schema takes only names of the shape
//! pve-http-server makes (`/var/tmp/pveupload-[0-9a-f]+`, since pve-storage 7.4-3), so
//! proxmoxer's `local` backend, which passes a `/tmp/tmp…` name, is refused by PVE 8 and 9.
//!
//! So the client does what pve-http-server does with the request's body: it writes the
//! file to a new `/var/tmp/pveupload-<32 hex>` (mode 0600, never an existing file), runs
//! `pvesh create …/upload` with `filename` (the name to give it) and `tmpfilename`, and
//! removes the copy if PVE left it (PVE unlinks it only once its task ran: a refusal
//! before the task keeps it).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ring::rand::{SecureRandom, SystemRandom};
use serde_json::Value;

use super::upload::{FilePart, Sent};
use super::{Answer, ApiError, ApiErrorKind, Client, Fields, Method};

/// Where pve-http-server puts an upload's body, and the only place PVE's `upload` takes
/// one from (`tmpfilename`'s pattern `/var/tmp/pveupload-[0-9a-f]+`).
pub const UPLOAD_DIR: &str = "/var/tmp";
/// The name's prefix in [`UPLOAD_DIR`].
pub const UPLOAD_PREFIX: &str = "pveupload-";

/// The file handed to PVE, removed when dropped if PVE did not remove it.
struct HandedFile {
    path: PathBuf,
}

impl HandedFile {
    /// A new file in `dir` named as pve-http-server names one, holding `file`'s bytes.
    fn write(dir: &Path, file: &mut FilePart<'_>) -> Result<HandedFile, String> {
        let mut random = [0u8; 16];
        SystemRandom::new()
            .fill(&mut random)
            .map_err(|_| "no random bytes from the operating system".to_string())?;
        let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let path = dir.join(format!("{UPLOAD_PREFIX}{hex}"));
        let mut out: File = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        // From here on the file is removed if anything fails.
        let handed = HandedFile { path };
        let copied = std::io::copy(&mut (&mut *file.reader).take(file.len), &mut out)
            .and_then(|n| out.flush().map(|()| n))
            .map_err(|e| format!("cannot write {}: {e}", handed.path.display()))?;
        if copied != file.len {
            return Err(format!("{} ended after {copied} of its {} bytes", file.name, file.len));
        }
        Ok(handed)
    }
}

impl Drop for HandedFile {
    fn drop(&mut self) {
        // Gone already when PVE's task ran (it unlinks the file, done or failed).
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Client {
    /// The upload of [`Client::post_multipart`] through pvesh: the file handed over in
    /// [`UPLOAD_DIR`], `fields` then `filename` and `tmpfilename` as options. Never repeated.
    pub(super) fn upload_through_pvesh(
        &self,
        path: &str,
        fields: Fields,
        mut file: FilePart<'_>,
    ) -> Result<(Value, Sent), ApiError> {
        self.upload_from(Path::new(UPLOAD_DIR), path, fields, &mut file)
    }

    fn upload_from(
        &self,
        dir: &Path,
        path: &str,
        fields: Fields,
        file: &mut FilePart<'_>,
    ) -> Result<(Value, Sent), ApiError> {
        let started = Instant::now();
        let handed = HandedFile::write(dir, file).map_err(|why| {
            ApiError::other(
                ApiErrorKind::Other,
                format!(
                    "uploading {} to {path} in local mode: {why}. pvesh takes the file from {UPLOAD_DIR}/{UPLOAD_PREFIX}… on this node (as Proxmox VE's API server does): make room there, or give api_host to upload over HTTPS.",
                    file.name
                ),
            )
        })?;
        let mut options: Vec<(&str, String)> = fields.to_vec();
        options.push((file.field, file.name.to_string()));
        options.push(("tmpfilename", handed.path.display().to_string()));
        let data = self.send_value(Method::Post, path, &options, Answer::Data)?;
        self.note_task(&data);
        drop(handed);
        Ok((
            data,
            Sent {
                bytes: file.len,
                seconds: started.elapsed().as_secs_f64(),
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handed_file_is_named_as_pve_takes_it_holds_the_bytes_and_goes_when_dropped() {
        let dir = std::env::temp_dir().join(format!("ferrox-handed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bytes = b"an ISO image's bytes".to_vec();
        let mut reader = bytes.as_slice();
        let mut part = FilePart {
            field: "filename",
            name: "small.iso",
            reader: &mut reader,
            len: bytes.len() as u64,
        };
        let handed = HandedFile::write(&dir, &mut part).unwrap();
        let name = handed.path.file_name().unwrap().to_str().unwrap().to_string();
        let hex = name.strip_prefix(UPLOAD_PREFIX).expect("pveupload- prefix");
        assert_eq!(hex.len(), 32);
        assert!(
            hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{name}"
        );
        assert_eq!(std::fs::read(&handed.path).unwrap(), bytes);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&handed.path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let path = handed.path.clone();
        drop(handed);
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_shorter_than_announced_leaves_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("ferrox-short-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut reader: &[u8] = b"short";
        let mut part = FilePart {
            field: "filename",
            name: "cut.iso",
            reader: &mut reader,
            len: 100,
        };
        let err = HandedFile::write(&dir, &mut part).err().unwrap();
        assert_eq!(err, "cut.iso ended after 5 of its 100 bytes");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
