//! `pvesh create /nodes/{node}/storage/{storage}/upload`: pvesh has no file parameter.
//! It hands its options to pve-storage's `upload` as they are (pve-manager
//! `PVE/CLI/pvesh.pm` `call_api_method`), and `upload` copies the file named by
//! `tmpfilename` — over HTTPS, the body pve-http-server saved — in its `imgcopy` task,
//! then unlinks it, done or failed (pve-storage `src/PVE/API2/Storage/Status.pm`
//! `upload`). The schema takes only a name of pve-http-server's shape
//! (`/var/tmp/pveupload-[0-9a-f]+`, anchored by `PVE::JSONSchema::check_prop`); without
//! one the handler dies `missing temporary file name`, and for a name that is no file
//! `temporary file '<name>' does not exist`.
//!
//! The stand-in checks those, then sends the file's bytes to pvesim as the multipart
//! body pve-http-server would have received (pvesim then runs `upload` on it), and
//! unlinks the file once the task ran, as PVE's task does.

use std::path::Path;

use crate::pvesh::{Call, Exit};

/// `tmpfilename`'s pattern in pve-storage's schema (`^…$` as `check_prop` applies it).
const TMPFILENAME_PATTERN: &str = "^/var/tmp/pveupload-[0-9a-f]+$";

/// What an upload through pvesh sends: the multipart fields in the order
/// pve-http-server reads them, the file's name and where the file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handed {
    /// `content`, `checksum-algorithm`, `checksum` (those given, in that order).
    pub fields: Vec<(String, String)>,
    /// `filename`: the name to give the file on the storage.
    pub filename: String,
    /// `tmpfilename`: the file on this node.
    pub tmpfilename: String,
}

/// Whether `call` is an upload (`POST …/storage/{storage}/upload`).
pub fn is_upload(call: &Call) -> bool {
    call.method == "POST" && crate::content::upload::upload_storage("POST", &call.path).is_some()
}

/// The upload `call` asks for, or PVE's refusal: a `tmpfilename` of another shape (the
/// schema's, before the handler runs), none at all, or one that is not a file.
pub fn handed(call: &Call) -> Result<Handed, Exit> {
    let param = |name: &str| call.params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let tmpfilename = param("tmpfilename");
    if let Some(tmp) = &tmpfilename {
        let shape = regex::Regex::new(TMPFILENAME_PATTERN).map_err(|e| Exit::die(e.to_string()))?;
        if !shape.is_match(tmp) {
            return Err(Exit::die(
                "400 Parameter verification failed.\ntmpfilename: value does not match the regex pattern",
            ));
        }
    }
    let Some(tmpfilename) = tmpfilename else {
        return Err(Exit::die("missing temporary file name"));
    };
    if !Path::new(&tmpfilename).is_file() {
        return Err(Exit::die(format!("temporary file '{tmpfilename}' does not exist")));
    }
    let fields = ["content", "checksum-algorithm", "checksum"]
        .iter()
        .filter_map(|name| param(name).map(|v| (name.to_string(), v)))
        .collect();
    Ok(Handed {
        fields,
        filename: param("filename").unwrap_or_default(),
        tmpfilename,
    })
}

/// The boundary of the body the stand-in sends.
pub const BOUNDARY: &str = "----pvesim-pvesh-upload-4d1c9b27";

/// The multipart body pve-http-server would have received for `handed` with `bytes`.
pub fn body(handed: &Handed, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 512);
    for (name, value) in &handed.fields {
        out.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    out.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"{}\"\r\nContent-Type: application/octet-stream\r\n\r\n",
            handed.filename
        )
        .as_bytes(),
    );
    out.extend_from_slice(bytes);
    out.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pvesh::parse;
    use crate::schema::Schema;

    fn call(line: &str) -> Call {
        let args: Vec<String> = line.split(' ').map(String::from).collect();
        parse(&args, &Schema::embedded()).unwrap()
    }

    #[test]
    fn a_tmpfilename_of_another_shape_is_refused_by_the_schema() {
        for tmp in [
            "/tmp/tmpab12cd",
            "/var/tmp/pveupload-ABC",
            "/var/tmp/pveupload-",
            "x/var/tmp/pveupload-1a",
        ] {
            let c = call(&format!(
                "create /nodes/pve1/storage/local/upload --content iso --filename a.iso --tmpfilename {tmp}"
            ));
            assert!(is_upload(&c));
            assert_eq!(
                handed(&c).unwrap_err(),
                Exit::die("400 Parameter verification failed.\ntmpfilename: value does not match the regex pattern"),
                "{tmp}"
            );
        }
    }

    #[test]
    fn without_a_file_the_handler_dies_as_pve_does() {
        let c = call("create /nodes/pve1/storage/local/upload --content iso --filename a.iso");
        assert_eq!(handed(&c).unwrap_err(), Exit::die("missing temporary file name"));
        let c = call("create /nodes/pve1/storage/local/upload --content iso --filename a.iso --tmpfilename /var/tmp/pveupload-0badc0de0badc0de");
        assert_eq!(
            handed(&c).unwrap_err(),
            Exit::die("temporary file '/var/tmp/pveupload-0badc0de0badc0de' does not exist")
        );
        assert!(!is_upload(&call("create /nodes/pve1/qemu --vmid 100")));
    }

    #[test]
    fn the_body_is_what_pve_http_server_reads_in_its_order() {
        let h = Handed {
            fields: vec![
                ("content".into(), "iso".into()),
                ("checksum-algorithm".into(), "sha256".into()),
            ],
            filename: "a.iso".into(),
            tmpfilename: "/var/tmp/pveupload-1".into(),
        };
        let text = String::from_utf8(body(&h, b"DATA")).unwrap();
        let content = text.find("name=\"content\"").unwrap();
        let algorithm = text.find("name=\"checksum-algorithm\"").unwrap();
        let file = text.find("name=\"filename\"; filename=\"a.iso\"").unwrap();
        assert!(content < algorithm && algorithm < file, "{text}");
        assert!(text.ends_with(&format!("\r\n\r\nDATA\r\n--{BOUNDARY}--\r\n")), "{text}");
    }
}
