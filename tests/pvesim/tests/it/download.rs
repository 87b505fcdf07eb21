//! `download-url` and `query-url-metadata` against a loopback HTTP server: the node
//! fetches the URL itself, checks the checksum and the image, logs as wget and PVE do,
//! and a failure leaves no file.

use crate::common::*;
use pvesim::fileserver::{FileServer, Served};
use pvesim::{Scenario, SimConfig};
use serde_json::json;

fn start(version: Option<&str>) -> (Api, FileServer) {
    let mut s = Scenario::default_cluster();
    with_template_user(&mut s);
    s.pve_version = version.map(String::from);
    let mut api = Api::start(SimConfig { scenario: s, ..quick() });
    api.with_auth(vec![("Authorization", TEMPLATE_TOKEN)]);
    (api, FileServer::start().unwrap())
}

const DL: &str = "/nodes/pve1/storage/local/download-url";

fn download(api: &Api, form: &[(&str, &str)]) -> (String, String, Vec<String>) {
    let r = api.post(DL, form);
    assert_eq!(r.status, 200, "{}", r.raw);
    let upid = r.data().as_str().unwrap().to_string();
    let status = api.wait_task(&upid)["exitstatus"].as_str().unwrap().to_string();
    let log = api.task_log(&upid);
    (upid, status, log)
}

fn listed(api: &Api, content: &str) -> Vec<serde_json::Value> {
    api.get(&format!("/nodes/pve1/storage/local/content?content={content}"))
        .data()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn an_iso_is_fetched_checked_and_listed() {
    let (api, files) = start(None);
    let served = Served::pattern(3 << 20);
    files.add("/isos/debian-13.iso", served.clone());
    let sum = served.digests()["sha256"].clone();
    let url = files.url("/isos/debian-13.iso");
    let (upid, status, log) = download(
        &api,
        &[
            ("url", &url),
            ("content", "iso"),
            ("filename", "debian-13.iso"),
            ("checksum", &sum.to_uppercase()),
            ("checksum-algorithm", "sha256"),
        ],
    );
    assert_eq!(status, "OK", "{log:#?}");
    assert!(upid.contains(":download:debian-13.iso:tmpl@pve!t:"), "{upid}");
    let dest = "/var/lib/vz/template/iso/debian-13.iso";
    assert_eq!(log[0], format!("downloading {url} to {dest}"));
    assert!(
        log.iter()
            .any(|l| l == "HTTP request sent, awaiting response... 200 OK"),
        "{log:#?}"
    );
    assert!(
        log.iter()
            .any(|l| l == "Length: 3145728 (3.0M) [application/octet-stream]"),
        "{log:#?}"
    );
    assert!(
        log.iter()
            .any(|l| l.starts_with("Saving to: '/var/lib/vz/template/iso/debian-13.iso.tmp_dwnl.")),
        "{log:#?}"
    );
    assert!(log.iter().any(|l| l.ends_with("saved [3145728/3145728]")), "{log:#?}");
    assert_eq!(
        &log[log.len() - 3..],
        [
            "calculating checksum...OK, checksum verified".to_string(),
            format!("download of '{url}' to '{dest}' finished"),
            "TASK OK".into()
        ]
    );
    let iso = listed(&api, "iso");
    let ours = iso
        .iter()
        .find(|v| v["volid"] == "local:iso/debian-13.iso")
        .expect("listed");
    assert_eq!(
        (ours["size"].clone(), ours["format"].clone()),
        (json!(3 << 20), json!("iso"))
    );
    assert_eq!(
        files.requests(),
        ["GET /isos/debian-13.iso"],
        "one GET, the body streamed once"
    );
    let counts = api.control("GET", "/_pvesim/requests", None);
    assert_eq!(
        counts["counts"]["POST /api2/json/nodes/pve1/storage/local/download-url"], 1,
        "counted: {counts}"
    );

    // Again with the right checksum (another algorithm): nothing fetched, OK.
    let md5 = served.digests()["md5"].clone();
    let (_, status, log) = download(
        &api,
        &[
            ("url", &url),
            ("content", "iso"),
            ("filename", "debian-13.iso"),
            ("checksum", &md5),
            ("checksum-algorithm", "md5"),
        ],
    );
    assert_eq!(status, "OK");
    assert_eq!(
        log[1],
        "calculating checksum of existing file...OK, got correct file already, no need to download"
    );
    assert_eq!(files.requests().len(), 1);
    // A different checksum for the file there: refused, naming both.
    let (_, status, _) = download(
        &api,
        &[
            ("url", &url),
            ("content", "iso"),
            ("filename", "debian-13.iso"),
            ("checksum", "00ff"),
            ("checksum-algorithm", "md5"),
        ],
    );
    assert_eq!(
        status,
        format!("checksum mismatch: got '{md5}' != expect '00ff', aborting")
    );
    // No checksum: an existing file is never overwritten.
    let (_, status, _) = download(
        &api,
        &[("url", &url), ("content", "iso"), ("filename", "debian-13.iso")],
    );
    assert_eq!(status, format!("refusing to override existing file '{dest}'"));
}

#[test]
fn a_checksum_mismatch_fails_and_leaves_no_file() {
    let (api, files) = start(None);
    files.add("/t.tar.zst", Served::pattern(100_000));
    let (_, status, log) = download(
        &api,
        &[
            ("url", &files.url("/t.tar.zst")),
            ("content", "vztmpl"),
            ("filename", "t.tar.zst"),
            ("checksum", "abc"),
            ("checksum-algorithm", "sha512"),
        ],
    );
    let got = Served::pattern(100_000).digests()["sha512"].clone();
    assert_eq!(status, format!("checksum mismatch: got '{got}' != expect 'abc'"));
    assert_eq!(log[log.len() - 2], "calculating checksum...");
    assert!(listed(&api, "vztmpl").is_empty());
}

#[test]
fn import_images_get_their_virtual_size_and_are_checked() {
    let (mut api, files) = start(None);
    files.add("/cloud.qcow2", Served::qcow2(3 << 30, 400 << 10));
    files.add("/fake.qcow2", Served::pattern(4096));
    let (_, status, log) = download(
        &api,
        &[
            ("url", &files.url("/cloud.qcow2")),
            ("content", "import"),
            ("filename", "cloud.qcow2"),
        ],
    );
    assert_eq!(status, "OK", "{log:#?}");
    let v = listed(&api, "import")
        .into_iter()
        .find(|v| v["volid"] == "local:import/cloud.qcow2")
        .unwrap();
    assert_eq!(
        (v["size"].clone(), v["format"].clone()),
        (json!(400 << 10), json!("qcow2"))
    );
    // A disk made from it has the image's virtual size.
    api.login_root();
    let r = api.post(
        "/nodes/pve1/qemu",
        &[
            ("vmid", "700"),
            ("scsi0", "local-lvm:0,import-from=local:import/cloud.qcow2"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(api.wait_task(r.data().as_str().unwrap())["exitstatus"], "OK");
    assert_eq!(api.config("pve1", 700)["scsi0"], "local-lvm:vm-700-disk-0,size=3G");
    api.with_auth(vec![("Authorization", TEMPLATE_TOKEN)]);
    // Not a qcow2 at all: qemu-img's refusal, no file.
    let (_, status, _) = download(
        &api,
        &[
            ("url", &files.url("/fake.qcow2")),
            ("content", "import"),
            ("filename", "fake.qcow2"),
        ],
    );
    assert!(
        status.starts_with("failed to verify file: qemu-img: Could not open '/var/lib/vz/import/fake.qcow2.tmp_dwnl."),
        "{status}"
    );
    assert!(status.ends_with("': Image is not in qcow2 format"), "{status}");
    assert!(!listed(&api, "import")
        .iter()
        .any(|v| v["volid"] == "local:import/fake.qcow2"));
}

#[test]
fn refusals_before_any_task() {
    let (api, files) = start(None);
    files.add("/x.iso", Served::pattern(10));
    let url = files.url("/x.iso");
    let post = |form: &[(&str, &str)]| api.post(DL, form);
    let r = post(&[
        ("url", &url),
        ("content", "iso"),
        ("filename", "x.iso"),
        ("checksum", "ab"),
    ]);
    assert_eq!(
        (r.status, r.error("checksum-algorithm")),
        (400, "missing property required by 'checksum'".into())
    );
    let r = post(&[
        ("url", &url),
        ("content", "iso"),
        ("filename", "x.iso"),
        ("checksum-algorithm", "sha256"),
    ]);
    assert_eq!(
        (r.status, r.error("checksum")),
        (400, "missing property required by 'checksum-algorithm'".into())
    );
    let r = post(&[
        ("url", &url),
        ("content", "iso"),
        ("filename", "x.iso"),
        ("checksum", "ab"),
        ("checksum-algorithm", "crc32"),
    ]);
    assert_eq!(r.status, 400);
    assert!(
        r.error("checksum-algorithm")
            .starts_with("value 'crc32' does not have a value in the enumeration 'md5, sha1"),
        "{}",
        r.raw
    );
    let r = post(&[("url", "ftp://h/x.iso"), ("content", "iso"), ("filename", "x.iso")]);
    assert_eq!(
        (r.status, r.error("url")),
        (400, "value does not match the regex pattern".into())
    );
    let r = post(&[("url", &url), ("content", "images"), ("filename", "x.iso")]);
    assert_eq!(r.status, 400, "{}", r.raw);
    let r = post(&[("url", &url), ("content", "iso"), ("filename", "x.qcow2")]);
    assert_eq!((r.status, r.error("filename")), (400, "wrong file extension".into()));
    let r = post(&[("url", &url), ("content", "vztmpl"), ("filename", "x.iso")]);
    assert_eq!((r.status, r.error("filename")), (400, "wrong file extension".into()));
    let r = post(&[("url", &url), ("content", "import"), ("filename", "x.iso")]);
    assert_eq!(
        (r.status, r.error("filename")),
        (400, "invalid filename or wrong extension".into())
    );
    // A name with a `/`: PVE keeps what follows the last one.
    let r = post(&[("url", &url), ("content", "iso"), ("filename", "../../etc/x.iso")]);
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(api.wait_task(r.data().as_str().unwrap())["exitstatus"], "OK");
    assert!(listed(&api, "iso").iter().any(|v| v["volid"] == "local:iso/x.iso"));
    // Storages.
    let on = |sid: &str, form: &[(&str, &str)]| api.post(&format!("/nodes/pve1/storage/{sid}/download-url"), form);
    let iso = [("url", url.as_str()), ("content", "iso"), ("filename", "y.iso")];
    let r = on(
        "isos",
        &[("url", &url), ("content", "vztmpl"), ("filename", "y.tar.gz")],
    );
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            "storage 'isos' is not configured for content-type 'vztmpl'\n".into()
        )
    );
    let r = on("isos", &[("url", &url), ("content", "import"), ("filename", "y.qcow2")]);
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            "storage 'isos' is not configured for content-type 'import'\n".into()
        )
    );
    let r = on("local-lvm", &iso);
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            "can't upload to storage type 'lvmthin', not a file based storage!\n".into()
        )
    );
    let r = on("nosuch", &iso);
    assert_eq!(
        (r.status, r.message()),
        (500, "storage 'nosuch' does not exist\n".into())
    );
}

#[test]
fn permissions_as_pve_declares_them() {
    let (mut api, files) = start(None);
    files.add("/x.iso", Served::pattern(10));
    let form = [
        ("url", files.url("/x.iso")),
        ("content", "iso".into()),
        ("filename", "x.iso".into()),
    ];
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // The automation token: no Datastore.AllocateTemplate.
    api.with_auth(vec![("Authorization", TOKEN)]);
    let r = api.post(DL, &form);
    assert_eq!(
        (r.status, r.message()),
        (
            403,
            "Permission check failed (/storage/local, Datastore.AllocateTemplate)\n".into()
        )
    );
    // query-url-metadata: Sys.Audit+Sys.Modify on / or Sys.AccessNetwork on the node; the
    // automation token has Sys.Audit only.
    let r = api.get(&format!(
        "/nodes/pve1/query-url-metadata?url={}",
        urlencode(&files.url("/x.iso"))
    ));
    assert_eq!((r.status, r.message()), (403, "Permission check failed\n".into()));
    api.with_auth(vec![("Authorization", TEMPLATE_TOKEN)]);
    let r = api.get(&format!(
        "/nodes/pve1/query-url-metadata?url={}",
        urlencode(&files.url("/x.iso"))
    ));
    assert_eq!(r.status, 200, "{}", r.raw);
}

#[test]
fn unreachable_and_missing_urls() {
    let (api, files) = start(None);
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{dead}/x.iso");
    let (_, status, log) = download(&api, &[("url", &url), ("content", "iso"), ("filename", "x.iso")]);
    assert_eq!(
        status,
        format!("download failed: Connecting to 127.0.0.1:{dead}... failed: Connection refused."),
        "{log:#?}"
    );
    let (_, status, _) = download(
        &api,
        &[
            ("url", &files.url("/nothing.iso")),
            ("content", "iso"),
            ("filename", "x.iso"),
        ],
    );
    assert!(
        status.starts_with("download failed: 20") && status.ends_with(" ERROR 404: Not Found."),
        "{status}"
    );
    assert!(listed(&api, "iso").iter().all(|v| v["volid"] != "local:iso/x.iso"));
    let r = api.get(&format!("/nodes/pve1/query-url-metadata?url={}", urlencode(&url)));
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            format!("invalid server response: '500 Can't connect to 127.0.0.1:{dead} (Connection refused)'\n")
        )
    );
    let r = api.get(&format!(
        "/nodes/pve1/query-url-metadata?url={}",
        urlencode(&files.url("/nothing.iso"))
    ));
    assert_eq!(
        (r.status, r.message()),
        (500, "invalid server response: '404 Not Found'\n".into())
    );
}

#[test]
fn url_metadata_as_pve_reports_it() {
    let (api, files) = start(None);
    files.add(
        "/images/debian-13-genericcloud-amd64.qcow2",
        Served {
            content_type: Some("application/x-qemu-disk; charset=binary".into()),
            ..Served::pattern(12345)
        },
    );
    files.add(
        "/latest",
        Served::redirect(&files.url("/images/debian-13-genericcloud-amd64.qcow2")),
    );
    files.add(
        "/dl",
        Served {
            disposition: Some("attachment; filename=\"named.iso\"".into()),
            content_type: None,
            ..Served::pattern(0)
        },
    );
    let q = |path: &str| {
        api.get(&format!(
            "/nodes/pve1/query-url-metadata?url={}",
            urlencode(&files.url(path))
        ))
    };
    let r = q("/images/debian-13-genericcloud-amd64.qcow2?sig=1");
    assert_eq!(
        r.data(),
        &json!({"filename": "debian-13-genericcloud-amd64.qcow2", "size": 12345, "mimetype": "application/x-qemu-disk"})
    );
    // Redirects are followed; the name stays the asked URL's.
    let r = q("/latest");
    assert_eq!(
        r.data(),
        &json!({"filename": "latest", "size": 12345, "mimetype": "application/x-qemu-disk"})
    );
    // Content-Disposition names the file; a size of 0 and no type are left out.
    assert_eq!(q("/dl").data(), &json!({"filename": "named.iso"}));
    assert!(
        files.requests().iter().all(|r| r.starts_with("HEAD ")),
        "{:?}",
        files.requests()
    );
    assert_eq!(
        returns_mismatches("GET", "/nodes/{node}/query-url-metadata", r.data()),
        Vec::<String>::new()
    );
    let counts = api.control("GET", "/_pvesim/requests", None);
    assert_eq!(
        counts["counts"]["GET /api2/json/nodes/pve1/query-url-metadata"], 3,
        "counted: {counts}"
    );
}

#[test]
fn import_content_by_pve_version() {
    let (api, files) = start(Some("8.2.4"));
    files.add("/c.qcow2", Served::qcow2(1 << 30, 4096));
    files.add("/a.ova", Served::pattern(4096));
    let r = api.post(
        DL,
        &[
            ("url", &files.url("/c.qcow2")),
            ("content", "import"),
            ("filename", "c.qcow2"),
        ],
    );
    assert_eq!(
        (r.status, r.error("content")),
        (
            400,
            "value 'import' does not have a value in the enumeration 'iso, vztmpl'".into()
        )
    );
    let (api, files) = start(Some("8.3.2"));
    files.add("/c.qcow2", Served::qcow2(1 << 30, 4096));
    files.add("/a.ova", Served::pattern(4096));
    let r = api.post(
        DL,
        &[
            ("url", &files.url("/c.qcow2")),
            ("content", "import"),
            ("filename", "c.qcow2"),
        ],
    );
    assert_eq!(
        (r.status, r.error("filename")),
        (400, "invalid filename or wrong extension".into())
    );
    let (_, status, _) = download(
        &api,
        &[
            ("url", &files.url("/a.ova")),
            ("content", "import"),
            ("filename", "a.ova"),
        ],
    );
    assert_eq!(status, "OK");
    let (api, files) = start(Some("8.4.0"));
    files.add("/c.qcow2", Served::qcow2(1 << 30, 4096));
    let (_, status, _) = download(
        &api,
        &[
            ("url", &files.url("/c.qcow2")),
            ("content", "import"),
            ("filename", "c.qcow2"),
        ],
    );
    assert_eq!(status, "OK");
}

#[test]
fn compression_only_for_isos() {
    let (api, files) = start(None);
    files.add("/t.tar.gz", Served::pattern(100));
    let (_, status, _) = download(
        &api,
        &[
            ("url", &files.url("/t.tar.gz")),
            ("content", "vztmpl"),
            ("filename", "t.tar.gz"),
            ("compression", "gz"),
        ],
    );
    assert_eq!(status, "decompression not supported for vztmpl");
    let (_, status, _) = download(
        &api,
        &[
            ("url", &files.url("/t.tar.gz")),
            ("content", "iso"),
            ("filename", "t.iso"),
            ("compression", "xz"),
        ],
    );
    assert_eq!(status, "no decompression method found");
}

#[test]
fn https_urls_have_their_certificates_checked() {
    let (api, _files) = start(None);
    // The simulator itself is an HTTPS server whose CA nobody trusts.
    let port = api.sim.port();
    let url = format!("https://127.0.0.1:{port}/api2/json/version");
    let (_, status, _) = download(&api, &[("url", &url), ("content", "iso"), ("filename", "v.iso")]);
    assert_eq!(
        status,
        "download failed: To connect to 127.0.0.1 insecurely, use `--no-check-certificate'."
    );
    let (_, status, _) = download(
        &api,
        &[
            ("url", &url),
            ("content", "iso"),
            ("filename", "v.iso"),
            ("verify-certificates", "0"),
        ],
    );
    // The status's standard reason phrase (the server's own, `No ticket`, is not read).
    assert!(
        status.starts_with("download failed: 20") && status.ends_with(" ERROR 401: Unauthorized."),
        "{status}"
    );
    let r = api.get(&format!("/nodes/pve1/query-url-metadata?url={}", urlencode(&url)));
    assert_eq!(
        r.message(),
        format!("invalid server response: '500 Can't connect to 127.0.0.1:{port} (certificate verify failed)'\n")
    );
    let r = api.get(&format!(
        "/nodes/pve1/query-url-metadata?url={}&verify-certificates=0",
        urlencode(&url)
    ));
    // pveproxy (like pvesim) knows no HEAD.
    assert_eq!(r.message(), "invalid server response: '501 Not Implemented'\n");
}

/// community.proxmox's `fetch_and_verify` posts its parameters in the query string.
#[test]
fn parameters_in_the_query_string_of_a_post() {
    let (api, files) = start(None);
    let served = Served::pattern(5000);
    files.add("/q.iso", served.clone());
    let q = format!(
        "url={}&content=iso&filename=q.iso&checksum={}&checksum-algorithm=sha224",
        urlencode(&files.url("/q.iso")),
        served.digests()["sha224"]
    );
    let mut rb = api.agent.post(api.url(&format!("/api2/json{DL}?{q}")));
    for (k, v) in &api.auth {
        rb = rb.header(k, v);
    }
    let mut r = rb.send_empty().unwrap();
    let body: serde_json::Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    let upid = body["data"].as_str().expect("a UPID").to_string();
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    assert!(api
        .task_log(&upid)
        .contains(&"calculating checksum...OK, checksum verified".to_string()));
}

/// `/_pvesim/faults` task faults reach download tasks: the task fails, no file stays.
#[test]
fn a_task_fault_fails_the_download() {
    let (api, files) = start(None);
    files.add("/f.iso", Served::pattern(1000));
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "download", "fail": "write failed: No space left on device", "times": 1})),
    );
    let (_, status, _) = download(
        &api,
        &[("url", &files.url("/f.iso")), ("content", "iso"), ("filename", "f.iso")],
    );
    assert_eq!(status, "write failed: No space left on device");
    assert!(listed(&api, "iso").iter().all(|v| v["volid"] != "local:iso/f.iso"));
    let (_, status, _) = download(
        &api,
        &[("url", &files.url("/f.iso")), ("content", "iso"), ("filename", "f.iso")],
    );
    assert_eq!(status, "OK");
}

/// A long download shows its progress in the task log while it runs (wget's line per
/// 32 MiB); the task stays `running` until the body is in.
#[test]
fn progress_shows_while_the_download_runs() {
    let (api, files) = start(None);
    files.add(
        "/slow.iso",
        Served {
            bytes_per_sec: Some(64 << 20),
            ..Served::pattern(80 << 20)
        },
    );
    let r = api.post(
        DL,
        &[
            ("url", &files.url("/slow.iso")),
            ("content", "iso"),
            ("filename", "slow.iso"),
        ],
    );
    let upid = r.data().as_str().unwrap().to_string();
    let status = |api: &Api| {
        api.get(&format!("/nodes/pve1/tasks/{}/status", urlencode(&upid)))
            .data()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let progress = loop {
        let log = api.task_log(&upid);
        if let Some(line) = log
            .iter()
            .find(|l| l.starts_with("     0K ........ ........ ........ ........  40%"))
        {
            break line.clone();
        }
        assert!(std::time::Instant::now() < deadline, "no progress line: {log:#?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status(&api), "running", "{progress}");
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    let log = api.task_log(&upid);
    assert!(
        log.iter()
            .any(|l| l.starts_with(" 32768K ........ ........ ........ ........  80%")),
        "{log:#?}"
    );
}

/// query-url-metadata is a `HEAD` (pve-manager's Nodes.pm), download-url a `GET` (wget, in
/// pve-common's `download_file_from_url`): a URL that refuses `HEAD` has no metadata but
/// downloads all the same.
#[test]
fn a_url_that_refuses_head_still_downloads() {
    let (api, files) = start(None);
    let served = Served::pattern(1 << 20);
    files.add("/signed/debian-13.iso", served.clone().refusing_head(405));
    let url = files.url("/signed/debian-13.iso");
    let r = api.get(&format!("/nodes/pve1/query-url-metadata?url={}", urlencode(&url)));
    assert_eq!(
        (r.status, r.message()),
        (500, "invalid server response: '405 Method Not Allowed'\n".into())
    );
    let sum = served.digests()["sha256"].clone();
    let (_, status, log) = download(
        &api,
        &[
            ("url", &url),
            ("content", "iso"),
            ("filename", "debian-13.iso"),
            ("checksum", &sum),
            ("checksum-algorithm", "sha256"),
        ],
    );
    assert_eq!(status, "OK", "{log:#?}");
    assert_eq!(listed(&api, "iso")[0]["size"], 1 << 20);
    assert_eq!(
        files.requests(),
        ["HEAD /signed/debian-13.iso", "GET /signed/debian-13.iso"]
    );
}
