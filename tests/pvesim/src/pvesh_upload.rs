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

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::pvesh::{Call, Exit};
use crate::schema::Schema;

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

/// The upload `call` asks for, or PVE's refusal, in PVE's order: `RESTHandler::handle`
/// validates every parameter (the path's and the options) against the method's schema
/// first — all errors in one `400 Parameter verification failed.`, `tmpfilename`'s
/// pattern among them — and only then does `upload` look at `tmpfilename`: none, or
/// one that is not a file.
pub fn handed(call: &Call) -> Result<Handed, Exit> {
    validate(call, &Schema::embedded())?;
    let param = |name: &str| call.params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let Some(tmpfilename) = param("tmpfilename") else {
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

/// pve-common's `PVE::JSONSchema::validate` of the call's parameters, the path's
/// included (pvesh merges them before `handle`), as pvesim validates a request.
fn validate(call: &Call, schema: &Schema) -> Result<(), Exit> {
    let route = schema
        .route(&call.path)
        .ok_or_else(|| Exit::die(format!("No 'create' handler defined for '{}'", call.path)))?;
    let mut params: BTreeMap<String, Value> = route
        .path_params
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    for (k, v) in &call.params {
        params.insert(k.clone(), Value::String(v.clone()));
    }
    let empty = Value::Object(serde_json::Map::new());
    let pschema = route.endpoint.info.get(call.method).and_then(|i| i.get("parameters"));
    match crate::schema::validate::validate(&params, pschema.unwrap_or(&empty)) {
        Ok(_) => Ok(()),
        Err(errors) => {
            let body = crate::error::ApiError::params(errors).body().unwrap_or_default();
            Err(crate::pvesh::error(400, &body))
        }
    }
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
    fn every_option_is_validated_before_the_temporary_file_is_looked_at() {
        let c = call("create /nodes/pve1/storage/local/upload --content iso");
        assert_eq!(
            handed(&c).unwrap_err(),
            Exit::die("400 Parameter verification failed.\nfilename: property is missing and it is not optional"),
            "no filename and no tmpfilename: the schema speaks first"
        );
        let c = call("create /nodes/pve1/storage/local/upload --content isos --filename a.iso --checksum ab --tmpfilename /tmp/x");
        assert_eq!(
            handed(&c).unwrap_err(),
            Exit::die(
                "400 Parameter verification failed.\nchecksum-algorithm: missing property required by 'checksum'\ncontent: invalid format - invalid content type 'isos'\ntmpfilename: value does not match the regex pattern"
            ),
            "all errors at once"
        );
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
