//! Storage content as pve-storage lists and removes it: types per storage, `vmid`
//! filtering, formats, access per volume, `imgdel` tasks; and `GET /nodes/{node}/version`.

use crate::common::*;
use pvesim::scenario::VolumeSpec;
use pvesim::state::{AclDef, TokenDef, UserDef};
use pvesim::{Scenario, SimConfig};
use serde_json::{json, Value};

pub const AUDITOR: &str = "PVEAPIToken=store@pve!t=11111111-2222-3333-4444-555555555555";

fn file(storage: &str, volname: &str, size: u64) -> VolumeSpec {
    VolumeSpec {
        storage: storage.into(),
        volname: volname.into(),
        size: json!(size),
        node: Some("pve1".into()),
        config: None,
        ctime: Some(1_760_000_123),
        checksums: Default::default(),
        virtual_size: None,
    }
}

/// The default cluster plus files on `local` (pve1) and a token with Datastore.Audit only.
fn scenario() -> Scenario {
    let mut s = Scenario::default_cluster();
    s.volumes.push(file("local", "iso/Zeta.iso", 1000));
    s.volumes.push(file("local", "iso/alpha.img", 2000));
    s.volumes
        .push(file("local", "vztmpl/debian-13-standard_13.1-2_amd64.tar.zst", 3000));
    s.volumes.push(file("local", "vztmpl/old.tar", 4000));
    s.volumes.push(file("local", "snippets/user.yaml", 10));
    s.users.push(UserDef {
        userid: "store@pve".into(),
        password: None,
        enable: true,
        totp_secret: None,
        tokens: vec![TokenDef {
            id: "t".into(),
            secret: "11111111-2222-3333-4444-555555555555".into(),
            privsep: true,
        }],
    });
    for ugid in ["store@pve", "store@pve!t"] {
        s.acls.push(AclDef {
            path: "/storage".into(),
            ugid: ugid.into(),
            roles: vec!["PVEAuditor".into()],
            propagate: true,
        });
    }
    s
}

fn start() -> Api {
    Api::start(SimConfig {
        scenario: scenario(),
        ..quick()
    })
}

fn volids(r: &Resp) -> Vec<String> {
    r.data()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["volid"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn listing_has_pves_fields_order_and_formats() {
    let api = start();
    let r = api.get("/nodes/pve1/storage/local/content");
    assert_eq!(r.status, 200, "{}", r.raw);
    // Sorted by volume id without regard to case; snippets need Datastore.Allocate.
    assert_eq!(
        volids(&r),
        [
            "local:import/debian-13-genericcloud-amd64.qcow2",
            "local:iso/alpha.img",
            "local:iso/Zeta.iso",
            "local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst",
            "local:vztmpl/old.tar"
        ]
    );
    let d = r.data();
    assert_eq!(
        d[1],
        json!({"volid": "local:iso/alpha.img", "format": "iso", "size": 2000, "content": "iso", "ctime": 1_760_000_123})
    );
    assert_eq!(d[0]["format"], "qcow2");
    assert_eq!(d[0]["content"], "import");
    assert_eq!(d[3]["format"], "tzst");
    assert_eq!(d[4]["format"], "tar");
    let r = api.get("/nodes/pve1/storage/local/content?content=iso");
    assert_eq!(volids(&r), ["local:iso/alpha.img", "local:iso/Zeta.iso"]);
    let r = api.get("/nodes/pve1/storage/local/content?content=isos");
    assert_eq!(
        (r.status, r.error("content")),
        (400, "invalid format - invalid content type 'isos'\n".into())
    );
    // A type the storage is not configured for lists nothing.
    let r = api.get("/nodes/pve1/storage/local/content?content=images");
    assert_eq!(r.data(), &json!([]));
    // With `vmid`: ISOs and templates are left out, import images stay.
    let r = api.get("/nodes/pve1/storage/local/content?vmid=100");
    assert_eq!(volids(&r), ["local:import/debian-13-genericcloud-amd64.qcow2"]);
    // Files of a local storage are per node.
    let r = api.get("/nodes/pve2/storage/local/content?content=iso");
    assert_eq!(r.data(), &json!([]));
}

#[test]
fn listing_access_and_errors() {
    let mut api = start();
    let r = api.get("/nodes/pve1/storage/nosuch/content");
    assert_eq!(
        (r.status, r.message()),
        (500, "storage 'nosuch' does not exist\n".into())
    );
    api.with_auth(vec![("Authorization", AUDITOR)]);
    // Datastore.Audit: templates, ISOs and import images, not VM disks of VMs it cannot see.
    let r = api.get("/nodes/pve1/storage/local-lvm/content");
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.data(), &json!([]));
    let r = api.get("/nodes/pve1/storage/local/content?content=iso");
    assert_eq!(volids(&r).len(), 2);
    api.with_auth(vec![("Authorization", READONLY)]);
    let r = api.get("/nodes/pve1/storage/local-lvm/content");
    assert_eq!(
        r.data(),
        &json!([]),
        "PVEAuditor on /: Datastore.Audit, but no VM.Config.Disk on the VM"
    );
    api.with_auth(vec![("Authorization", TOKEN)]);
    let r = api.get("/nodes/pve1/storage/local-lvm/content");
    assert_eq!(
        volids(&r),
        ["local-lvm:vm-100-disk-0"],
        "Datastore.Audit and VM.Config.Disk"
    );
    assert_eq!(r.data()[0]["vmid"], 100);
}

#[test]
fn delete_is_an_imgdel_task() {
    let mut api = start();
    api.with_auth(vec![("Authorization", "PVEAPIToken=root@pam!x=y")]);
    let _ = api.get("/version");
    // root via ticket
    let t = api.post(
        "/access/ticket",
        &[("username", "root@pam"), ("password", "pvesim-root")],
    );
    let ticket = t.data()["ticket"].as_str().unwrap().to_string();
    let csrf = t.data()["CSRFPreventionToken"].as_str().unwrap().to_string();
    let cookie = format!("PVEAuthCookie={ticket}");
    api.with_auth(vec![("Cookie", &cookie), ("CSRFPreventionToken", &csrf)]);

    let r = api.delete(
        &format!("/nodes/pve1/storage/local/content/{}", urlencode("local:iso/Zeta.iso")),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    let upid = r.data().as_str().unwrap().to_string();
    assert!(upid.contains(":imgdel:local:root@pam:"), "{upid}");
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    assert_eq!(api.task_log(&upid), ["Removed volume 'local:iso/Zeta.iso'", "TASK OK"]);
    // A name on the path's storage, unencoded slash; `delay` answers null when done.
    let r = api.delete("/nodes/pve1/storage/local/content/iso/alpha.img", &[("delay", "5")]);
    assert_eq!((r.status, r.data().clone()), (200, Value::Null), "{}", r.raw);
    let r = api.get("/nodes/pve1/storage/local/content?content=iso");
    assert_eq!(r.data(), &json!([]));
    // Gone already: PVE warns and still "removes" it.
    let upid = api
        .delete("/nodes/pve1/storage/local/content/local:iso/alpha.img", &[])
        .data()
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(api.wait_task(&upid)["exitstatus"], "WARNINGS: 1");
    let log = api.task_log(&upid);
    assert_eq!(
        log[0],
        "WARN: disk image '/var/lib/vz/template/iso/alpha.img' does not exist"
    );
    // Errors before any task.
    let r = api.delete("/nodes/pve1/storage/isos/content/local:iso/x.iso", &[]);
    assert_eq!(
        (r.status, r.error("volume")),
        (400, "storage ID mismatch (local != isos)\n".into())
    );
    let r = api.delete("/nodes/pve1/storage/local/content/iso/x.txt", &[]);
    assert_eq!(
        (r.status, r.message()),
        (500, "unable to parse directory volume name 'iso/x.txt'\n".into())
    );
    let r = api.delete("/nodes/pve1/storage/nosuch/content/iso/x.iso", &[]);
    assert_eq!(
        (r.status, r.message()),
        (500, "storage 'nosuch' does not exist\n".into())
    );
    // A block storage's missing volume fails the task.
    let upid = api
        .delete("/nodes/pve1/storage/local-lvm/content/vm-100-disk-9", &[])
        .data()
        .as_str()
        .unwrap()
        .to_string();
    let st = api.wait_task(&upid);
    assert!(
        st["exitstatus"]
            .as_str()
            .unwrap()
            .contains("Failed to find logical volume \"pve/vm-100-disk-9\""),
        "{st}"
    );
}

#[test]
fn delete_needs_datastore_allocate() {
    let mut api = start();
    // The automation token has Datastore.AllocateSpace/Audit but not Datastore.Allocate.
    let r = api.delete("/nodes/pve1/storage/local/content/local:iso/Zeta.iso", &[]);
    assert_eq!(
        (r.status, r.message()),
        (
            403,
            "Permission check failed (/storage/local, Datastore.Allocate)\n".into()
        )
    );
    api.with_auth(vec![("Authorization", AUDITOR)]);
    let r = api.delete("/nodes/pve1/storage/local/content/local:iso/Zeta.iso", &[]);
    assert_eq!(r.status, 403);
    assert_eq!(
        api.get("/nodes/pve1/storage/local/content?content=iso")
            .data()
            .as_array()
            .unwrap()
            .len(),
        2,
        "nothing removed"
    );
}

#[test]
fn node_version_follows_the_scenario() {
    let mut s = scenario();
    s.pve_version = Some("8.4.1".into());
    let api = Api::start(SimConfig { scenario: s, ..quick() });
    let r = api.get("/nodes/pve1/version");
    assert_eq!(
        r.data(),
        &json!({"version": "8.4.1", "release": "8.4", "repoid": "0a1b2c3d4e5f6a7b"})
    );
    assert_eq!(api.get("/version").data()["version"], "8.4.1");
    let api = start();
    assert_eq!(
        api.get("/nodes/pve2/version").data(),
        &json!({"version": "9.1.5", "release": "9.1", "repoid": "0a1b2c3d4e5f6a7b"})
    );
}

#[test]
fn answers_conform_to_the_schema() {
    let api = start();
    let r = api.get("/nodes/pve1/storage/local/content");
    assert_eq!(
        returns_mismatches("GET", "/nodes/{node}/storage/{storage}/content", r.data()),
        Vec::<String>::new()
    );
    let r = api.get("/nodes/pve1/version");
    assert_eq!(
        returns_mismatches("GET", "/nodes/{node}/version", r.data()),
        Vec::<String>::new()
    );
}

#[test]
fn scenario_files_carry_checksums_and_virtual_size() {
    let mut s = scenario();
    let mut cloud = file("local", "import/noble.qcow2", 600 << 20);
    cloud.checksums.insert("sha256".into(), "AB".repeat(32));
    cloud.virtual_size = Some(json!("3584M"));
    s.volumes.push(cloud);
    let mut api = Api::start(SimConfig { scenario: s, ..quick() });
    api.login_root();
    let r = api.get("/nodes/pve1/storage/local/content?content=import");
    let v = r
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["volid"] == "local:import/noble.qcow2")
        .unwrap()
        .clone();
    assert_eq!(v["size"], 600 << 20, "the listing gives the file's size");
    // download-url with that checksum: the file is there already (checksums are compared
    // without regard to case); any other is a mismatch naming the file's.
    let form = |sum: &str| {
        vec![
            ("url", "http://127.0.0.1:9/noble.qcow2".to_string()),
            ("content", "import".into()),
            ("filename", "noble.qcow2".into()),
            ("checksum", sum.to_string()),
            ("checksum-algorithm", "sha256".into()),
        ]
    };
    let post = |f: Vec<(&str, String)>| {
        let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let r = api.post("/nodes/pve1/storage/local/download-url", &f);
        api.wait_task(r.data().as_str().unwrap())["exitstatus"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(post(form(&"ab".repeat(32))), "OK");
    let got = "ab".repeat(32);
    assert_eq!(
        post(form("00")),
        format!("checksum mismatch: got '{got}' != expect '00', aborting")
    );
    // An algorithm the scenario does not give: content nobody knows, matches nothing.
    let f = vec![
        ("url", "http://127.0.0.1:9/n".to_string()),
        ("content", "import".into()),
        ("filename", "noble.qcow2".into()),
        ("checksum", "00".into()),
        ("checksum-algorithm", "md5".into()),
    ];
    assert!(post(f).starts_with("checksum mismatch: got '"));
    // import-from gives the disk the image's virtual size.
    let r = api.post(
        "/nodes/pve1/qemu",
        &[
            ("vmid", "701"),
            ("scsi0", "local-lvm:0,import-from=local:import/noble.qcow2"),
        ],
    );
    assert_eq!(api.wait_task(r.data().as_str().unwrap())["exitstatus"], "OK");
    assert_eq!(api.config("pve1", 701)["scsi0"], "local-lvm:vm-701-disk-0,size=3584M");
}

#[test]
fn volume_info_as_volume_size_info_reports_it() {
    let mut s = scenario();
    let mut cloud = file("local", "import/noble.qcow2", 600 << 20);
    cloud.virtual_size = Some(json!("3G"));
    s.volumes.push(cloud);
    let mut api = Api::start(SimConfig { scenario: s, ..quick() });
    let r = api.get("/nodes/pve1/storage/local/content/local:import/noble.qcow2");
    assert_eq!(
        r.data(),
        &json!({"path": "/var/lib/vz/import/noble.qcow2", "size": 3u64 << 30, "used": 600 << 20, "format": "qcow2"})
    );
    assert_eq!(
        returns_mismatches("GET", "/nodes/{node}/storage/{storage}/content/{volume}", r.data()),
        Vec::<String>::new()
    );
    let r = api.get("/nodes/pve1/storage/local/content/iso/Zeta.iso");
    assert_eq!(
        r.data(),
        &json!({"path": "/var/lib/vz/template/iso/Zeta.iso", "size": 1000, "used": 1000, "format": "raw"})
    );
    let r = api.get("/nodes/pve1/storage/local/content/iso/none.iso");
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            "volume_size_info on 'local:iso/none.iso' failed - no format\n".into()
        )
    );
    let r = api.get("/nodes/pve2/storage/local/content/iso/Zeta.iso");
    assert_eq!(r.status, 500, "files of a local storage are per node");
    api.with_auth(vec![("Authorization", AUDITOR)]);
    let r = api.get("/nodes/pve1/storage/local-lvm/content/vm-100-disk-0");
    assert_eq!(
        (r.status, r.message()),
        (403, "Permission check failed (/vms/100, VM.Config.Disk)\n".into())
    );
    let r = api.get("/nodes/pve1/storage/local/content/snippets/user.yaml");
    assert_eq!(
        (r.status, r.message()),
        (500, "missing privileges to access local:snippets/user.yaml\n".into())
    );
}
