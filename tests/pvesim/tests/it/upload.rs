//! Multipart `upload` as pve-http-server receives it and pve-storage stores it: the
//! body streamed (never held), the checks and errors in PVE's order, an `imgcopy` task.

use crate::common::*;
use pvesim::fileserver::Served;
use pvesim::{Scenario, SimConfig};
use serde_json::json;
use std::io::Read;

fn start() -> Api {
    let mut s = Scenario::default_cluster();
    with_template_user(&mut s);
    let mut api = Api::start(SimConfig { scenario: s, ..quick() });
    api.with_auth(vec![("Authorization", TEMPLATE_TOKEN)]);
    api
}

const B: &str = "----pvesimBoundary7MA4YWxk";

/// A multipart body: the fields, then the file part (`filename` field), as a reader
/// that generates the file's bytes as it goes.
fn multipart(fields: &[(&str, &str)], filename: &str, file: &Served) -> (u64, Box<dyn Read + Send>) {
    let mut head = String::new();
    for (k, v) in fields {
        head.push_str(&format!(
            "--{B}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
        ));
    }
    head.push_str(&format!("--{B}\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"{filename}\"\r\nContent-Type: application/octet-stream\r\n\r\n"));
    let tail = format!("\r\n--{B}--\r\n");
    let len = head.len() as u64 + file.size + tail.len() as u64;
    let body = std::io::Cursor::new(head.into_bytes())
        .chain(file.reader())
        .chain(std::io::Cursor::new(tail.into_bytes()));
    (len, Box::new(body))
}

fn upload_to(api: &Api, storage: &str, fields: &[(&str, &str)], filename: &str, file: &Served) -> Resp {
    let (len, body) = multipart(fields, filename, file);
    let mut rb = api
        .agent
        .post(api.url(&format!("/api2/json/nodes/pve1/storage/{storage}/upload")))
        .header("content-type", format!("multipart/form-data; boundary={B}"))
        .header("content-length", len.to_string());
    for (k, v) in &api.auth {
        rb = rb.header(k, v);
    }
    let mut r = rb.send(ureq::SendBody::from_owned_reader(body)).expect("HTTP exchange");
    let status = r.status().as_u16();
    let raw = r.body_mut().read_to_string().unwrap_or_default();
    Resp {
        status,
        body: serde_json::from_str(&raw).unwrap_or_default(),
        raw,
    }
}

/// An upload's headers with no body: what an upload refused before its body is read
/// gets answered with, free of the race between the answer and the body's writes.
fn refused_before_the_body(api: &Api, storage: &str) -> Resp {
    let mut rb = api
        .agent
        .post(api.url(&format!("/api2/json/nodes/pve1/storage/{storage}/upload")))
        .header("content-type", format!("multipart/form-data; boundary={B}"));
    for (k, v) in &api.auth {
        rb = rb.header(k, v);
    }
    let mut r = rb.send_empty().expect("HTTP exchange");
    let status = r.status().as_u16();
    let raw = r.body_mut().read_to_string().unwrap_or_default();
    Resp {
        status,
        body: serde_json::from_str(&raw).unwrap_or_default(),
        raw,
    }
}

fn task(api: &Api, r: &Resp) -> (String, Vec<String>) {
    assert_eq!(r.status, 200, "{}", r.raw);
    let upid = r.data().as_str().unwrap();
    assert!(upid.contains(":imgcopy::"), "{upid}");
    (
        api.wait_task(upid)["exitstatus"].as_str().unwrap().to_string(),
        api.task_log(upid),
    )
}

fn listed(api: &Api, storage: &str, content: &str) -> Vec<serde_json::Value> {
    api.get(&format!("/nodes/pve1/storage/{storage}/content?content={content}"))
        .data()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn an_iso_upload_streams_and_is_stored() {
    let mut api = start();
    let file = Served::pattern(24 << 20);
    let sum = file.digests()["sha1"].clone();
    let r = upload_to(
        &api,
        "local",
        &[("content", "iso"), ("checksum-algorithm", "sha1"), ("checksum", &sum)],
        "my disc.iso",
        &file,
    );
    let (status, log) = task(&api, &r);
    assert_eq!(status, "OK", "{log:#?}");
    assert!(
        log[0].starts_with("starting file import from: /var/tmp/pveupload-"),
        "{log:#?}"
    );
    let tmp = log[0].trim_start_matches("starting file import from: ").to_string();
    assert_eq!(
        log[1..],
        [
            "calculating checksum...OK, checksum verified".to_string(),
            "target node: pve1".into(),
            "target file: /var/lib/vz/template/iso/my_disc.iso".into(),
            format!("file size is: {}", 24 << 20),
            format!("command: cp -- {tmp} /var/lib/vz/template/iso/my_disc.iso"),
            "finished file import successfully".into(),
            "TASK OK".into()
        ]
    );
    let iso = listed(&api, "local", "iso");
    assert_eq!(
        iso,
        [
            json!({"volid": "local:iso/my_disc.iso", "format": "iso", "size": 24 << 20, "content": "iso", "ctime": iso[0]["ctime"]})
        ]
    );
    // download-url of the same name with that checksum finds the file as PVE would.
    let r = api.post(
        "/nodes/pve1/storage/local/download-url",
        &[
            ("url", "http://127.0.0.1:9/x"),
            ("content", "iso"),
            ("filename", "my_disc.iso"),
            ("checksum", &sum),
            ("checksum-algorithm", "sha1"),
        ],
    );
    assert_eq!(api.wait_task(r.data().as_str().unwrap())["exitstatus"], "OK");
    // A ticket needs no CSRF token for an upload; an existing file is overwritten.
    api.login_root();
    api.auth.retain(|(k, _)| k != "CSRFPreventionToken");
    let r = upload_to(
        &api,
        "local",
        &[("content", "iso")],
        "my_disc.iso",
        &Served::pattern(10),
    );
    assert_eq!(task(&api, &r).0, "OK");
    assert_eq!(listed(&api, "local", "iso")[0]["size"], 10);
    // Counted like every API call.
    let counts = api.control("GET", "/_pvesim/requests", None);
    assert_eq!(
        counts["counts"]["POST /api2/json/nodes/pve1/storage/local/upload"], 2,
        "{counts}"
    );
}

#[test]
fn a_checksum_mismatch_fails_the_task_and_stores_nothing() {
    let api = start();
    let file = Served::pattern(1000);
    let r = upload_to(
        &api,
        "local",
        &[
            ("content", "vztmpl"),
            ("checksum-algorithm", "md5"),
            ("checksum", "0123"),
        ],
        "t.tar.gz",
        &file,
    );
    let (status, log) = task(&api, &r);
    assert_eq!(
        status,
        format!("checksum mismatch: got '{}' != expect '0123'", file.digests()["md5"])
    );
    assert_eq!(log[1], "calculating checksum...");
    assert!(listed(&api, "local", "vztmpl").is_empty());
}

#[test]
fn import_images_are_checked() {
    let api = start();
    let r = upload_to(
        &api,
        "local",
        &[("content", "import")],
        "cloud.qcow2",
        &Served::qcow2(5 << 30, 8192),
    );
    assert_eq!(task(&api, &r).0, "OK");
    let import = listed(&api, "local", "import");
    let v = import
        .iter()
        .find(|v| v["volid"] == "local:import/cloud.qcow2")
        .unwrap();
    assert_eq!((v["size"].clone(), v["format"].clone()), (json!(8192), json!("qcow2")));
    let r = upload_to(
        &api,
        "local",
        &[("content", "import")],
        "fake.qcow2",
        &Served::pattern(8192),
    );
    let (status, _) = task(&api, &r);
    assert!(
        status.starts_with("qemu-img: Could not open '/var/tmp/pveupload-")
            && status.ends_with("': Image is not in qcow2 format"),
        "{status}"
    );
    assert!(!listed(&api, "local", "import")
        .iter()
        .any(|v| v["volid"] == "local:import/fake.qcow2"));
}

#[test]
fn refusals() {
    let mut api = start();
    let file = Served::pattern(100);
    let r = upload_to(&api, "local", &[("content", "iso")], "x.qcow2", &file);
    assert_eq!((r.status, r.error("filename")), (400, "wrong file extension".into()));
    let r = upload_to(&api, "local", &[("content", "import")], "x.ovf", &file);
    assert_eq!(
        (r.status, r.error("filename")),
        (400, "invalid filename or wrong extension".into())
    );
    let r = upload_to(&api, "local", &[("content", "snippets")], "x.yaml", &file);
    assert_eq!(r.status, 400, "{}", r.raw);
    let r = upload_to(&api, "local", &[], "x.iso", &file);
    assert_eq!(
        (r.status, r.error("content")),
        (400, "property is missing and it is not optional".into())
    );
    let r = upload_to(&api, "isos", &[("content", "vztmpl")], "x.tar.gz", &file);
    assert_eq!(
        (r.status, r.message()),
        (500, "storage 'isos' does not support 'vztmpl' content\n".into())
    );
    let r = upload_to(&api, "local-lvm", &[("content", "iso")], "x.iso", &file);
    assert_eq!(
        (r.status, r.message()),
        (500, "can't upload to storage type 'lvmthin'\n".into())
    );
    let r = upload_to(&api, "local", &[("content", "iso"), ("checksum", "ab")], "x.iso", &file);
    assert_eq!(
        (r.status, r.error("checksum-algorithm")),
        (400, "missing property required by 'checksum'".into())
    );
    // Datastore.AllocateTemplate is checked before the body is read: PVE answers and
    // closes with the body unread, so these requests send none (a client still sending
    // one may see its write fail before it reads the answer, as the client's own
    // upload tests show).
    api.with_auth(vec![("Authorization", TOKEN)]);
    let r = refused_before_the_body(&api, "local");
    assert_eq!(
        (r.status, r.message()),
        (
            403,
            "Permission check failed (/storage/local, Datastore.AllocateTemplate)\n".into()
        )
    );
    api.with_auth(vec![("Authorization", "PVEAPIToken=tmpl@pve!t=wrong")]);
    let r = refused_before_the_body(&api, "local");
    assert_eq!(r.status, 401);
    api.with_auth(vec![("Authorization", TEMPLATE_TOKEN)]);
    assert!(listed(&api, "local", "iso").is_empty());
}

#[test]
fn malformed_uploads() {
    let api = start();
    let post = |ctype: &str, body: &str| {
        let mut rb = api
            .agent
            .post(api.url("/api2/json/nodes/pve1/storage/local/upload"))
            .header("content-type", ctype);
        for (k, v) in &api.auth {
            rb = rb.header(k, v);
        }
        rb.send(body.to_string())
    };
    // Not multipart: pve-http-server dies without an answer.
    assert!(post("application/x-www-form-urlencoded", "content=iso&filename=x.iso").is_err());
    // No closing delimiter: pveproxy's `error()`, the message as a plain body.
    let body = format!("--{B}\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\niso\r\n--{B}\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"x.iso\"\r\n\r\nabc");
    let mut r = post(&format!("multipart/form-data; boundary={B}"), &body).unwrap();
    assert_eq!(r.status().as_u16(), 500);
    assert!(r.headers().get("content-type").is_none());
    assert_eq!(r.body_mut().read_to_string().unwrap(), "upload failed");
    // The file field must be named `filename`.
    let body =
        format!("--{B}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.iso\"\r\n\r\nabc\r\n--{B}--\r\n");
    let mut r = post(&format!("multipart/form-data; boundary={B}"), &body).unwrap();
    assert_eq!(r.status().as_u16(), 500);
    assert!(r
        .body_mut()
        .read_to_string()
        .unwrap()
        .contains("wrong field name 'file' for file upload, expected 'filename'"));
}

/// pveproxy takes `content`, `checksum-algorithm`, `checksum` in that order, each by a
/// regex anchored at its buffer's start: `checksum` before `checksum-algorithm` makes the
/// algorithm's regex capture the `checksum` part as its Content-Disposition. The message's
/// first line then ends in the body's CR, so `response()` answers 400 Bad Request, empty.
#[test]
fn checksum_before_checksum_algorithm_is_refused_as_pveproxy_refuses_it() {
    let api = start();
    let file = Served::pattern(4096);
    let sum = file.digests()["sha256"].clone();
    let fields = [
        ("content", "iso"),
        ("checksum", sum.as_str()),
        ("checksum-algorithm", "sha256"),
    ];
    let r = upload_to(&api, "local", &fields, "order.iso", &file);
    assert_eq!((r.status, r.raw.as_str()), (400, ""), "{}", r.raw);
    assert!(listed(&api, "local", "iso").is_empty());
    // The same fields in pveproxy's order land and are verified.
    let fields = [
        ("content", "iso"),
        ("checksum-algorithm", "sha256"),
        ("checksum", sum.as_str()),
    ];
    let r = upload_to(&api, "local", &fields, "order.iso", &file);
    let (status, log) = task(&api, &r);
    assert_eq!(status, "OK", "{log:#?}");
    assert_eq!(log[1], "calculating checksum...OK, checksum verified");
}

/// With LF line breaks the same die's first line has no CR: a 500 whose reason phrase
/// is that line and whose body is the whole message, as pveproxy's `error()` sends it.
#[test]
fn a_field_out_of_order_with_lf_line_breaks_is_pveproxys_500() {
    let api = start();
    let body = format!(
        "--{B}\nContent-Disposition: form-data; name=\"content\"\n\niso\n--{B}\nContent-Disposition: form-data; name=\"checksum\"\n\nab\n--{B}\nContent-Disposition: form-data; name=\"checksum-algorithm\"\n\nsha256\n--{B}\nContent-Disposition: form-data; name=\"filename\"; filename=\"x.iso\"\n\nabc\n--{B}--\n"
    );
    let mut rb = api
        .agent
        .post(api.url("/api2/json/nodes/pve1/storage/local/upload"))
        .header("content-type", format!("multipart/form-data; boundary={B}"));
    for (k, v) in &api.auth {
        rb = rb.header(k, v);
    }
    let mut r = rb.send(body).unwrap();
    assert_eq!(r.status().as_u16(), 500);
    let text = r.body_mut().read_to_string().unwrap();
    assert_eq!(
        text,
        format!("wrong Content-Disposition 'form-data; name=\"checksum\"\n\nab\n--{B}\nContent-Disposition: form-data' in multipart, expected 'form-data'\n")
    );
}
