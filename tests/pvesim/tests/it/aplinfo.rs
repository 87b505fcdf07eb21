//! The appliance index and downloading a template from it (`pveam download`): the
//! index's checksum is required and verified.

use crate::common::*;
use pvesim::fileserver::{FileServer, Served};
use pvesim::state::Appliance;
use pvesim::{Scenario, SimConfig};

fn appliance(files: &FileServer, name: &str, sha512: Option<String>) -> Appliance {
    Appliance {
        package: "debian-13-standard".into(),
        version: "13.1-2".into(),
        os: "debian".into(),
        location: files.url(&format!("/system/{name}")),
        sha512sum: sha512,
        md5sum: None,
        kind: "lxc".into(),
        section: "system".into(),
        architecture: "amd64".into(),
        infopage: "https://pve.proxmox.com/wiki/Linux_Container#pct_supported_distributions".into(),
        headline: "Debian 13 (standard)".into(),
    }
}

#[test]
fn appliance_templates_are_listed_and_downloaded_verified() {
    let files = FileServer::start().unwrap();
    let body = Served::pattern(70_000);
    files.add("/system/debian-13-standard_13.1-2_amd64.tar.zst", body.clone());
    files.add("/system/bad_1_amd64.tar.zst", Served::pattern(10));
    files.add("/system/nosum_1_amd64.tar.zst", Served::pattern(10));
    let mut s = Scenario::default_cluster();
    with_template_user(&mut s);
    s.appliances = vec![
        appliance(
            &files,
            "debian-13-standard_13.1-2_amd64.tar.zst",
            Some(body.digests()["sha512"].clone()),
        ),
        appliance(&files, "bad_1_amd64.tar.zst", Some("00".into())),
        appliance(&files, "nosum_1_amd64.tar.zst", None),
    ];
    let mut api = Api::start(SimConfig { scenario: s, ..quick() });
    api.with_auth(vec![("Authorization", TEMPLATE_TOKEN)]);

    let r = api.get("/nodes/pve1/aplinfo");
    assert_eq!(r.status, 200, "{}", r.raw);
    let first = &r.data()[0];
    assert_eq!(first["template"], "debian-13-standard_13.1-2_amd64.tar.zst");
    assert_eq!(first["type"], "lxc");
    assert_eq!(
        returns_mismatches("GET", "/nodes/{node}/aplinfo", r.data()),
        Vec::<String>::new()
    );

    let run = |template: &str, storage: &str| {
        let r = api.post("/nodes/pve1/aplinfo", &[("storage", storage), ("template", template)]);
        assert_eq!(r.status, 200, "{}", r.raw);
        let upid = r.data().as_str().unwrap().to_string();
        assert!(upid.contains(&format!(":download:{template}:")), "{upid}");
        (
            api.wait_task(&upid)["exitstatus"].as_str().unwrap().to_string(),
            api.task_log(&upid),
        )
    };
    let (status, log) = run("debian-13-standard_13.1-2_amd64.tar.zst", "local");
    assert_eq!(status, "OK", "{log:#?}");
    assert!(log.contains(&"calculating checksum...OK, checksum verified".to_string()));
    let listed = api.get("/nodes/pve1/storage/local/content?content=vztmpl");
    assert_eq!(
        listed.data()[0]["volid"],
        "local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst"
    );
    // Again: the file is there with the index's checksum.
    let (status, log) = run("debian-13-standard_13.1-2_amd64.tar.zst", "local");
    assert_eq!(status, "OK");
    assert_eq!(
        log[1],
        "calculating checksum of existing file...OK, got correct file already, no need to download"
    );
    let (status, _) = run("bad_1_amd64.tar.zst", "local");
    assert!(
        status.starts_with("checksum mismatch: got '") && status.ends_with("' != expect '00'"),
        "{status}"
    );
    let (status, _) = run("nosum_1_amd64.tar.zst", "local");
    assert_eq!(status, "checksum required but not specified");
    assert_eq!(
        api.get("/nodes/pve1/storage/local/content?content=vztmpl")
            .data()
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let r = api.post(
        "/nodes/pve1/aplinfo",
        &[("storage", "local"), ("template", "nosuch.tar.zst")],
    );
    assert_eq!((r.status, r.error("template")), (400, "no such template".into()));
    let r = api.post(
        "/nodes/pve1/aplinfo",
        &[("storage", "isos"), ("template", "bad_1_amd64.tar.zst")],
    );
    assert_eq!(
        (r.status, r.message()),
        (500, "storage 'isos' does not support templates\n".into())
    );
    api.with_auth(vec![("Authorization", TOKEN)]);
    let r = api.post(
        "/nodes/pve1/aplinfo",
        &[("storage", "local"), ("template", "bad_1_amd64.tar.zst")],
    );
    assert_eq!(
        (r.status, r.message()),
        (
            403,
            "Permission check failed (/storage/local, Datastore.AllocateTemplate)\n".into()
        )
    );
}
