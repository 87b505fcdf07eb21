//! proxmox_template in process against the simulator (`Env::run`): removal and its
//! idempotence, refusals of bad input before any write (each naming the option, the
//! cause and the fix), the privileges PVE will demand predicted, and a check run whose
//! plan lets later tasks use the file without `check_mode_assume`.

use serde_json::{json, Value};

use ferrox_integration::{creds, Env, PlayOpts};

const T: &str = "ferrox.proxmox.proxmox_template";

/// Connection as root@pam (password): every privilege, so the module's own behaviour shows.
fn as_root(env: &Env) -> PlayOpts {
    let mut auth = env.auth();
    auth["api_user"] = json!("root@pam");
    auth["api_password"] = json!(creds::ROOT_PASSWORD);
    auth["api_token_id"] = Value::Null;
    auth["api_token_secret"] = Value::Null;
    PlayOpts {
        module_defaults: Some(env.defaults_with(auth)),
        ..Default::default()
    }
}

fn checked(mut o: PlayOpts) -> PlayOpts {
    o.check = true;
    o
}

fn task(args: &str) -> String {
    format!("- name: t\n  {T}: {{{args}}}\n  ignore_errors: true\n")
}

fn volids(env: &Env) -> Vec<String> {
    let state = env.state();
    let mut out: Vec<String> = state["volumes"]
        .as_array()
        .expect("the simulator's volumes")
        .iter()
        .map(|v| {
            format!(
                "{}:{}{}",
                v["storage"].as_str().unwrap_or_default(),
                v["volname"].as_str().unwrap_or_default(),
                v["node"].as_str().map(|n| format!(" on {n}")).unwrap_or_default()
            )
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "the scenario has volumes");
    out
}

/// Runs `args` in check mode and for real as root: both fail with `msg`, and nothing
/// is written.
fn refused(env: &Env, args: &str, msg: &str) {
    env.clear_requests();
    let before = volids(env);
    for o in [checked(as_root(env)), as_root(env)] {
        let play = env.run_with(&task(args), &o);
        let t = play.task("t");
        assert!(t.failed, "{args}: fails (check: {}): {}", o.check, t.result);
        assert_eq!(t.msg(), msg, "{args} (check: {})", o.check);
    }
    assert!(env.writes().is_empty(), "{args}: nothing written: {:?}", env.writes());
    assert_eq!(volids(env), before, "{args}: the storages hold what they held");
}

#[test]
fn a_file_is_removed_once_and_then_is_already_deleted() {
    let env = Env::start();
    let args =
        "node: pve1, storage: local, content_type: import, template: debian-13-genericcloud-amd64.qcow2, state: absent";
    let dry = env.run_with(&task(args), &checked(as_root(&env)));
    let d = dry.task("t");
    assert!(d.changed && !d.failed, "{}", d.result);
    assert_eq!(
        d.msg(),
        "template with volid=local:import/debian-13-genericcloud-amd64.qcow2 deleted"
    );
    let on_pve1 = "local:import/debian-13-genericcloud-amd64.qcow2 on pve1".to_string();
    assert!(volids(&env).contains(&on_pve1), "check mode removed nothing");
    let real = env.run_with(&task(args), &as_root(&env));
    let r = real.task("t");
    assert!(r.changed && !r.failed, "{}", r.result);
    assert_eq!(r.msg(), d.msg());
    assert_eq!(r.result["volid"], "local:import/debian-13-genericcloud-amd64.qcow2");
    assert!(!volids(&env).contains(&on_pve1), "{:?}", volids(&env));
    assert!(
        volids(&env).contains(&"local:import/debian-13-genericcloud-amd64.qcow2 on pve2".to_string()),
        "pve2's own local storage keeps its copy"
    );
    let again = env.run_with(&task(args), &as_root(&env));
    let a = again.task("t");
    assert!(!a.changed && !a.failed, "{}", a.result);
    assert_eq!(
        a.msg(),
        "template with volid=local:import/debian-13-genericcloud-amd64.qcow2 is already deleted"
    );
}

#[test]
fn a_file_already_there_is_ok() {
    let env = Env::start();
    let src = env.dir().join("debian-13-netinst.iso");
    std::fs::write(&src, b"not read: the name is on the storage").unwrap();
    env.clear_requests();
    for o in [checked(as_root(&env)), as_root(&env)] {
        let play = env.run_with(
            &task(&format!(
                "node: pve1, storage: isos, content_type: iso, src: {}",
                src.display()
            )),
            &o,
        );
        let t = play.task("t");
        assert!(!t.changed && !t.failed, "{}", t.result);
        assert_eq!(
            t.msg(),
            "template with volid=isos:iso/debian-13-netinst.iso already exists"
        );
        assert_eq!(t.result["size"], json!(754u64 * 1024 * 1024));
    }
    assert!(env.writes().is_empty(), "{:?}", env.writes());
}

#[test]
fn bad_input_is_refused_naming_the_option_cause_and_fix_and_leaves_nothing() {
    let env = Env::start();
    refused(
        &env,
        "node: pve1, storage: local, content_type: iso, url: 'http://127.0.0.1:9/a.iso', template: 'dir/a.iso'",
        "template \"dir/a.iso\" contains '/': it is the file's name on the storage, not a path; give only the name (for example \"a.iso\")",
    );
    refused(
        &env,
        "node: pve1, storage: isos, content_type: vztmpl, template: debian-12-standard_12.7-1_amd64.tar.zst",
        "storage isos on node pve1 does not take container templates (vztmpl) (its content: iso): add vztmpl to the storage's content types (Datacenter > Storage > isos > Content), or set storage to one that takes them (on node pve1: local)",
    );
    refused(
        &env,
        "node: pve1, content_type: iso, src: /tmp/a.iso, url: 'http://127.0.0.1:9/a.iso'",
        "parameters are mutually exclusive: src|url",
    );
    refused(
        &env,
        "node: pve1, content_type: iso, url: 'http://127.0.0.1:9/a.iso', checksum: abc",
        "parameters are required together: checksum, checksum_algorithm",
    );
    refused(
        &env,
        "node: pve1, storage: local, content_type: iso, src: /nonexistent/netinst.iso",
        "template file on path /nonexistent/netinst.iso not exists: src must name an existing file on the host the task runs on",
    );
    refused(
        &env,
        "node: pve1, storage: local, content_type: iso, url: 'http://127.0.0.1:9/images/debian-13.qcow2', template: debian-13.qcow2",
        "the file name debian-13.qcow2 does not fit content_type iso: Proxmox VE takes .iso or .img files there. Set content_type to the file's type (iso, vztmpl, import), or give it a fitting name with template",
    );
    let dir = env.dir().join("a-directory.iso");
    std::fs::create_dir_all(&dir).unwrap();
    refused(
        &env,
        &format!("node: pve1, storage: local, content_type: iso, src: {}", dir.display()),
        &format!(
            "template file on path {} not exists: src names a directory or special file, not a regular file",
            dir.display()
        ),
    );
}

/// A storage the node cannot activate (`active: 0` in its storage listing: an NFS server
/// it cannot reach) or one storage.cfg disables (`enabled: 0`) is refused before any
/// write, naming why and the storages that would take the file there.
#[test]
fn a_storage_not_active_or_disabled_on_the_node_is_refused_naming_why() {
    let mut cfg = pvesim::SimConfig::default();
    for sd in &mut cfg.scenario.storages {
        match sd.id.as_str() {
            "isos" => sd.inactive_on = vec!["pve1".into()],
            "local" => sd.disable = true,
            _ => {}
        }
    }
    let env = Env::start_with(cfg);
    let iso = env.dir().join("rescue.iso");
    std::fs::write(&iso, vec![0u8; 4096]).unwrap();
    refused(
        &env,
        &format!("node: pve1, storage: isos, content_type: iso, src: {}", iso.display()),
        "storage isos is not active on node pve1 (the node cannot reach or activate it, for example an NFS server it cannot mount): bring it back online on node pve1, or set storage to one that takes ISO images (iso) there (on node pve1: none)",
    );
    refused(
        &env,
        &format!("node: pve1, storage: local, content_type: iso, src: {}", iso.display()),
        "storage local is disabled or not available on node pve1 (enabled: 0: storage.cfg disables it or its nodes leave pve1 out): enable it for node pve1 (Datacenter > Storage > local), or set storage to one that takes ISO images (iso) there (on node pve1: none)",
    );
}

/// pve-storage takes `.ova` as `import` from PVE 8.3 and disk images from 8.4: an OVA
/// lands on 8.3, a qcow2 is refused there naming 8.4, and an OVA on 8.2 naming 8.3.
#[test]
fn import_takes_an_ova_from_8_3_and_disk_images_from_8_4_naming_the_version() {
    let start = |version: &str| {
        let mut cfg = pvesim::SimConfig::default();
        cfg.scenario.pve_version = Some(version.into());
        Env::start_with(cfg)
    };
    let env = start("8.3.4");
    let qcow2 = env.dir().join("noble.qcow2");
    std::fs::write(&qcow2, b"qcow2").unwrap();
    refused(
        &env,
        &format!("node: pve1, storage: local, content_type: import, src: {}", qcow2.display()),
        "content_type import of a disk image (.qcow2, .raw, .vmdk) needs Proxmox VE 8.4 or later, and node pve1 runs pve-manager 8.3.4: upgrade the node, or import the disk image on the node with qm disk import",
    );
    let ova = env.dir().join("appliance.ova");
    std::fs::write(&ova, vec![7u8; 4096]).unwrap();
    let args = format!(
        "node: pve1, storage: local, content_type: import, src: {}",
        ova.display()
    );
    for o in [checked(as_root(&env)), as_root(&env)] {
        let play = env.run_with(&task(&args), &o);
        let t = play.task("t");
        assert!(t.changed && !t.failed, "check: {}: {}", o.check, t.result);
        assert_eq!(t.msg(), "template with volid=local:import/appliance.ova uploaded");
    }
    assert!(
        volids(&env).contains(&"local:import/appliance.ova on pve1".to_string()),
        "{:?}",
        volids(&env)
    );

    let env = start("8.2.7");
    let ova = env.dir().join("appliance.ova");
    std::fs::write(&ova, vec![7u8; 4096]).unwrap();
    refused(
        &env,
        &format!("node: pve1, storage: local, content_type: import, src: {}", ova.display()),
        "content_type import of an OVA needs Proxmox VE 8.3 or later, and node pve1 runs pve-manager 8.2.7: upgrade the node, or extract the OVA on the node and import it with qm importovf",
    );
}

/// The default token lacks Datastore.AllocateTemplate: the check run predicts PVE's
/// refusal, and the real run is refused before it writes.
#[test]
fn privileges_pve_will_refuse_are_predicted() {
    let env = Env::start();
    let src = env.dir().join("new.iso");
    std::fs::write(&src, b"iso").unwrap();
    env.clear_requests();
    let want = "proxmox_template upload on storage isos on node pve1: needs Datastore.AllocateTemplate on /storage/isos, which ansible@pve!automation does not have";
    for check in [true, false] {
        let play = env.run_with(
            &task(&format!(
                "node: pve1, storage: isos, content_type: iso, src: {}",
                src.display()
            )),
            &PlayOpts {
                check,
                ..Default::default()
            },
        );
        assert_eq!(play.task("t").msg(), want, "check: {check}");
    }
    let removal = env.run(&task(
        "node: pve1, storage: isos, content_type: iso, template: virtio-win.iso, state: absent",
    ));
    assert_eq!(
        removal.task("t").msg(),
        "proxmox_template remove on storage isos on node pve1: needs Datastore.Allocate on /storage/isos, which ansible@pve!automation does not have"
    );
    assert!(env.writes().is_empty(), "{:?}", env.writes());
}

/// A check run that uploads an ISO: the later proxmox_kvm task's ide2 and proxmox_disk's
/// iso_image find it in the plan, with no check_mode_assume; a file the plan removes
/// is gone for later tasks.
#[test]
fn the_check_runs_plan_knows_the_file_afterwards() {
    let env = Env::start();
    let src = env.dir().join("planned.iso");
    std::fs::write(&src, vec![0u8; 4096]).unwrap();
    let tasks = format!(
        "- name: upload\n  {T}: {{node: pve1, storage: isos, content_type: iso, src: {}}}\n\
         - name: vm\n  ferrox.proxmox.proxmox_kvm: {{node: pve1, vmid: 150, name: web150, ide: {{ide2: 'isos:iso/planned.iso,media=cdrom'}}}}\n\
         - name: disk\n  ferrox.proxmox.proxmox_disk: {{vmid: 100, disk: ide3, iso_image: 'isos:iso/planned.iso', media: cdrom}}\n\
         - name: remove\n  {T}: {{node: pve1, storage: local, content_type: import, template: debian-13-genericcloud-amd64.qcow2, state: absent}}\n\
         - name: import gone\n  ferrox.proxmox.proxmox_disk: {{vmid: 100, disk: scsi5, storage: local-lvm, import_from: 'local:import/debian-13-genericcloud-amd64.qcow2'}}\n  ignore_errors: true\n",
        src.display()
    );
    env.clear_requests();
    let mut o = checked(as_root(&env));
    o.env = vec![(
        "ANSIBLE_CALLBACKS_ENABLED".to_string(),
        "ferrox_results,ferrox.proxmox.plan".to_string(),
    )];
    let play = env.play_with(&tasks, &o);
    for name in ["upload", "vm", "disk", "remove"] {
        let t = play.task(name);
        assert!(t.changed && !t.failed, "{name}: {}", t.result);
        assert!(
            t.warnings().iter().all(|w| !w.contains("check_mode_assume")),
            "{name}: {:?}",
            t.warnings()
        );
    }
    assert_eq!(play.task("upload").result["size"], json!(4096));
    let gone = play.task("import gone");
    assert!(
        gone.failed
            && gone.msg().starts_with(
                "scsi5: volume local:import/debian-13-genericcloud-amd64.qcow2 does not exist on node pve1"
            ),
        "{}",
        gone.result
    );
    assert!(env.writes().is_empty(), "{:?}", env.writes());
    let summary = play
        .stdout
        .split("FERROX PLAN")
        .nth(1)
        .unwrap_or_else(|| panic!("no plan summary\n{}", play.stdout));
    assert!(
        summary.contains(
            "  + file isos:iso/planned.iso on pve1\n  - file local:import/debian-13-genericcloud-amd64.qcow2 on pve1\n"
        ),
        "{summary}"
    );
    assert!(summary.contains(", 2 files to put or remove."), "{summary}");
}

/// A whole build in one check run: the installer ISO uploaded and the cloud image
/// downloaded by ferrox, then a VM booting the ISO, a disk imported from the image and a
/// NIC. Every task predicts its change with no `check_mode_assume`; nothing is written.
#[test]
fn a_build_that_uploads_its_iso_and_downloads_its_image_checks_clean_without_assumptions() {
    let env = Env::start();
    let files = pvesim::fileserver::FileServer::start().unwrap();
    let image = pvesim::fileserver::Served::qcow2(2 << 30, 512 << 10);
    files.add("/images/build-cloud.qcow2", image.clone());
    let iso = env.dir().join("installer.iso");
    std::fs::write(&iso, vec![0u8; 8192]).unwrap();
    let tasks = format!(
        "- name: iso\n  {T}: {{node: pve1, storage: isos, content_type: iso, src: {}}}\n\
         - name: image\n  {T}: {{node: pve1, storage: local, content_type: import, url: '{}', checksum_algorithm: sha256, checksum: {}}}\n\
         - name: vm\n  ferrox.proxmox.proxmox_kvm: {{node: pve1, vmid: 160, name: build160, ide: {{ide2: 'isos:iso/installer.iso,media=cdrom'}}}}\n\
         - name: disk\n  ferrox.proxmox.proxmox_disk: {{vmid: 160, disk: scsi0, storage: local-lvm, import_from: 'local:import/build-cloud.qcow2'}}\n\
         - name: nic\n  ferrox.proxmox.proxmox_nic: {{vmid: 160, interface: net0, bridge: vmbr0}}\n",
        iso.display(),
        files.url("/images/build-cloud.qcow2"),
        image.digests()["sha256"],
    );
    env.clear_requests();
    let play = env.run_with(&tasks, &checked(as_root(&env)));
    assert_eq!(play.rc, 0, "{}", play.transcript());
    for name in ["iso", "image", "vm", "disk", "nic"] {
        let t = play.task(name);
        assert!(t.changed && !t.failed, "{name}: {}", t.result);
        assert!(
            t.warnings().iter().all(|w| !w.contains("check_mode_assume")),
            "{name}: {:?}",
            t.warnings()
        );
    }
    assert!(
        env.writes().is_empty(),
        "a check run writes nothing: {:?}",
        env.writes()
    );
    assert_eq!(
        files.requests(),
        ["HEAD /images/build-cloud.qcow2"],
        "the check asked the node for the URL's metadata only"
    );
}

mod download {
    use super::*;
    use pvesim::fileserver::{FileServer, Served};

    fn files() -> FileServer {
        FileServer::start().expect("the loopback file server")
    }

    #[test]
    fn a_url_is_downloaded_by_the_node_named_by_its_last_segment_and_then_ok() {
        let env = Env::start();
        let files = files();
        files.add("/isos/netinst-13.iso", Served::pattern(3 << 20));
        let args = format!(
            "node: pve1, storage: local, content_type: iso, url: '{}'",
            files.url("/isos/netinst-13.iso")
        );
        env.clear_requests();
        let dry = env.run_with(&task(&args), &checked(as_root(&env)));
        let d = dry.task("t");
        assert!(d.changed && !d.failed, "{}", d.result);
        assert_eq!(d.msg(), "template with volid=local:iso/netinst-13.iso uploaded");
        assert_eq!(
            (d.result["volid"].clone(), d.result["size"].clone()),
            (json!("local:iso/netinst-13.iso"), json!(3 << 20))
        );
        assert!(env.writes().is_empty(), "check mode writes nothing: {:?}", env.writes());
        assert_eq!(
            files.requests(),
            ["HEAD /isos/netinst-13.iso"],
            "the check asked the node for the URL's metadata only"
        );

        let real = env.run_with(&task(&args), &as_root(&env));
        let r = real.task("t");
        assert!(r.changed && !r.failed, "{}", r.result);
        assert_eq!(r.msg(), d.msg());
        assert_eq!(r.result["size"], json!(3 << 20));
        assert_eq!(r.result["transfer"]["bytes"], json!(3 << 20));
        assert!(
            r.result["transfer"]["seconds"].as_f64().is_some_and(|s| s >= 0.0),
            "{}",
            r.result
        );
        assert!(
            r.result["transfer"]["upid"]
                .as_str()
                .is_some_and(|u| u.contains(":download:")),
            "{}",
            r.result
        );
        assert!(volids(&env).contains(&"local:iso/netinst-13.iso on pve1".to_string()));

        let again = env.run_with(&task(&args), &as_root(&env));
        let a = again.task("t");
        assert!(!a.changed && !a.failed, "{}", a.result);
        assert_eq!(a.msg(), "template with volid=local:iso/netinst-13.iso already exists");
    }

    #[test]
    fn a_checksum_is_verified_by_the_node_and_a_differing_file_is_refused_unless_forced() {
        let env = Env::start();
        let files = files();
        let image = Served::qcow2(2 << 30, 512 << 10);
        files.add("/cloud/noble.qcow2", image.clone());
        let sum = image.digests()["sha256"].clone();
        let url = files.url("/cloud/noble.qcow2");
        let args = |sum: &str, force: bool| {
            format!("node: pve1, storage: local, content_type: import, url: '{url}', checksum_algorithm: sha256, checksum: '{sum}', force: {force}")
        };
        let first = env.run_with(&task(&args(&sum, false)), &as_root(&env));
        let f = first.task("t");
        assert!(f.changed && !f.failed, "{}", f.result);
        assert_eq!(
            f.msg(),
            "Checksum verified, template with volid=local:import/noble.qcow2 uploaded"
        );

        // The same checksum again: the node checks the file there and fetches nothing.
        let again = env.run_with(&task(&args(&sum, false)), &as_root(&env));
        let a = again.task("t");
        assert!(!a.changed && !a.failed, "{}", a.result);
        assert_eq!(a.result["checksum_verified"], json!(true));
        assert_eq!(
            files.requests().iter().filter(|r| r.starts_with("GET")).count(),
            1,
            "{:?}",
            files.requests()
        );

        // Another file behind the URL now, same size: PVE names both checksums.
        let other = Served::qcow2(3 << 30, 512 << 10);
        files.add("/cloud/noble.qcow2", other.clone());
        let new_sum = other.digests()["sha256"].clone();
        let refused = env.run_with(&task(&args(&new_sum, false)), &as_root(&env));
        let r = refused.task("t");
        assert!(r.failed, "{}", r.result);
        assert_eq!(
            r.msg(),
            format!("local:import/noble.qcow2 already exists on storage local on node pve1 and is another file: checksum mismatch: got '{sum}' != expect '{new_sum}', aborting. Set force: true to replace it, or set template to another name")
        );

        let forced = env.run_with(&task(&args(&new_sum, true)), &as_root(&env));
        let fo = forced.task("t");
        assert!(fo.changed && !fo.failed, "{}", fo.result);
        assert_eq!(fo.result["replaced"], json!(true));
        let listed = env.api_get("/nodes/pve1/storage/local/content?content=import");
        assert!(
            listed
                .as_array()
                .unwrap()
                .iter()
                .any(|v| v["volid"] == "local:import/noble.qcow2"),
            "{listed}"
        );
    }

    #[test]
    fn a_file_of_another_size_is_refused_in_check_mode_too_naming_both_sizes() {
        let env = Env::start();
        let files = files();
        files.add("/debian-13-genericcloud-amd64.qcow2", Served::qcow2(3 << 30, 1 << 20));
        let url = files.url("/debian-13-genericcloud-amd64.qcow2");
        refused(
            &env,
            &format!("node: pve1, storage: local, content_type: import, url: '{url}', checksum_algorithm: sha512, checksum: 'abc'"),
            "local:import/debian-13-genericcloud-amd64.qcow2 already exists on storage local on node pve1 with another content: it is 3221225472 bytes and the source is 1048576 bytes, so its sha512 checksum is not the one given (abc; Proxmox VE does not report a stored file's checksum, only its size). Set force: true to replace it, or set template to another name",
        );
    }

    #[test]
    fn a_checksum_mismatch_fails_the_task_and_leaves_no_file() {
        let env = Env::start();
        let files = files();
        files.add("/t/debian-12-standard.tar.zst", Served::pattern(100_000));
        let url = files.url("/t/debian-12-standard.tar.zst");
        let play = env.run_with(&task(&format!("node: pve1, storage: local, content_type: vztmpl, url: '{url}', checksum_algorithm: md5, checksum: '0123'")), &as_root(&env));
        let t = play.task("t");
        assert!(t.failed, "{}", t.result);
        let got = Served::pattern(100_000).digests()["md5"].clone();
        assert!(
            t.msg()
                .starts_with(&format!("Task error: checksum mismatch: got '{got}' != expect '0123'")),
            "{}",
            t.msg()
        );
        assert!(
            t.msg().ends_with("; Proxmox VE removed the partial file"),
            "{}",
            t.msg()
        );
        assert!(
            !volids(&env).iter().any(|v| v.contains("debian-12-standard")),
            "{:?}",
            volids(&env)
        );
    }

    /// query-url-metadata is a HEAD request: a URL it cannot query is not refused. The
    /// check run warns that the size is unknown; the real run downloads, and a URL that
    /// GET cannot fetch either fails at the download, naming the HEAD's failure too.
    #[test]
    fn a_url_the_node_cannot_query_warns_in_check_mode_and_fails_at_the_download() {
        let env = Env::start();
        let files = files();
        files.add("/gone.iso", Served::status(404));
        let url = files.url("/gone.iso");
        env.clear_requests();
        let before = volids(&env);
        let args = task(&format!("node: pve1, storage: local, content_type: iso, url: '{url}'"));
        let dry = env.run_with(&args, &checked(as_root(&env)));
        let d = dry.task("t");
        assert!(d.changed && !d.failed, "{}", d.result);
        assert_eq!(d.result["known_after_apply"], json!(["size"]), "{}", d.result);
        let warnings = d.warnings();
        assert!(
            warnings.iter().any(|w| w
                .starts_with("node pve1 could not query the url (invalid server response: '404 Not Found'")
                && w.contains("the file name gone.iso comes from the url's path")),
            "{warnings:?}"
        );
        assert!(env.writes().is_empty(), "{:?}", env.writes());

        let real = env.run_with(&args, &as_root(&env));
        let r = real.task("t");
        assert!(r.failed, "{}", r.result);
        assert!(r.msg().starts_with("Task error: "), "{}", r.msg());
        assert!(r.msg().contains("ERROR 404: Not Found."), "{}", r.msg());
        assert!(
            r.msg().ends_with(
                "(before it, the node's HEAD request of the url failed too: invalid server response: '404 Not Found')"
            ),
            "{}",
            r.msg()
        );
        assert_eq!(volids(&env), before);
    }

    /// A server that refuses HEAD (405), or a link signed for GET only: download-url
    /// needs no HEAD, so the file lands, named by the URL's path; the check run says
    /// what it could not learn instead of failing.
    #[test]
    fn a_url_that_refuses_head_is_downloaded_and_the_check_run_says_what_it_cannot_know() {
        let env = Env::start();
        let files = files();
        let served = Served::pattern(3 << 20);
        files.add("/bucket/noble-server.iso", served.clone().refusing_head(405));
        let url = format!("{}?X-Amz-Expires=600", files.url("/bucket/noble-server.iso"));
        let args = task(&format!(
            "node: pve1, storage: local, content_type: iso, url: '{url}', checksum_algorithm: sha256, checksum: '{}'",
            served.digests()["sha256"]
        ));
        let dry = env.run_with(&args, &checked(as_root(&env)));
        let d = dry.task("t");
        assert!(d.changed && !d.failed, "{}", d.result);
        assert_eq!(d.result["volid"], "local:iso/noble-server.iso");
        assert_eq!(
            (d.result["size"].clone(), d.result["known_after_apply"].clone()),
            (Value::Null, json!(["size"]))
        );
        assert!(
            d.warnings()
                .iter()
                .any(|w| w.contains("'405 Method Not Allowed'")
                    && w.contains("its size is not known before the download")),
            "{:?}",
            d.warnings()
        );

        let real = env.run_with(&args, &as_root(&env));
        let r = real.task("t");
        assert!(r.changed && !r.failed, "{}", r.result);
        assert_eq!(
            r.msg(),
            "Checksum verified, template with volid=local:iso/noble-server.iso uploaded"
        );
        assert_eq!(r.result["size"], json!(3 << 20));
        assert!(volids(&env).contains(&"local:iso/noble-server.iso on pve1".to_string()));
        assert_eq!(
            files.requests().iter().filter(|r| r.starts_with("GET ")).count(),
            1,
            "{:?}",
            files.requests()
        );
    }
}

/// A simulator with the token `tmpl@pve!t`, holding `Datastore.AllocateTemplate` and
/// `Datastore.Audit` on the storages (and with `network`, `Sys.AccessNetwork` on pve1),
/// and the play options that connect as it.
fn template_token_env(network: bool) -> (Env, PlayOpts) {
    use pvesim::state::{AclDef, TokenDef, UserDef};
    let mut cfg = pvesim::SimConfig::default();
    let s = &mut cfg.scenario;
    s.users.push(UserDef {
        userid: "tmpl@pve".into(),
        password: None,
        enable: true,
        totp_secret: None,
        tokens: vec![TokenDef {
            id: "t".into(),
            secret: "22222222-3333-4444-5555-666666666666".into(),
            privsep: true,
        }],
    });
    s.roles.insert(
        "Templates".into(),
        vec!["Datastore.AllocateTemplate".into(), "Datastore.Audit".into()],
    );
    s.roles.insert("Network".into(), vec!["Sys.AccessNetwork".into()]);
    for ugid in ["tmpl@pve", "tmpl@pve!t"] {
        s.acls.push(AclDef {
            path: "/storage".into(),
            ugid: ugid.into(),
            roles: vec!["Templates".into()],
            propagate: true,
        });
        if network {
            s.acls.push(AclDef {
                path: "/nodes/pve1".into(),
                ugid: ugid.into(),
                roles: vec!["Network".into()],
                propagate: true,
            });
        }
    }
    let env = Env::start_with(cfg);
    let mut auth = env.auth();
    auth["api_user"] = json!("tmpl@pve");
    auth["api_token_id"] = json!("t");
    auth["api_token_secret"] = json!("22222222-3333-4444-5555-666666666666");
    let o = PlayOpts {
        module_defaults: Some(env.defaults_with(auth)),
        ..Default::default()
    };
    (env, o)
}

#[test]
fn a_download_needs_the_nodes_network_as_pve_checks_it() {
    let start = template_token_env;
    let files = pvesim::fileserver::FileServer::start().unwrap();
    files.add("/a.iso", pvesim::fileserver::Served::pattern(4096));
    let args = format!(
        "node: pve1, storage: local, content_type: iso, url: '{}'",
        files.url("/a.iso")
    );

    let (env, o) = start(false);
    env.clear_requests();
    for o in [checked(o.clone()), o] {
        let play = env.run_with(&task(&args), &o);
        assert_eq!(
            play.task("t").msg(),
            "proxmox_template download on storage local on node pve1: needs Sys.Audit and Sys.Modify on / (or Sys.AccessNetwork on /nodes/pve1), which tmpl@pve!t does not have"
        );
    }
    assert!(env.writes().is_empty(), "{:?}", env.writes());
    assert!(
        files.requests().is_empty(),
        "the node was not asked for the URL: {:?}",
        files.requests()
    );

    let (env, o) = start(true);
    for o in [checked(o.clone()), o] {
        let play = env.run_with(&task(&args), &o);
        let t = play.task("t");
        assert!(t.changed && !t.failed, "check: {}: {}", o.check, t.result);
    }
    assert!(volids(&env).contains(&"local:iso/a.iso on pve1".to_string()));
}

mod upload {
    use super::*;

    /// `len` bytes of a pattern, and its digests as PVE computes them.
    fn file(env: &Env, name: &str, len: usize) -> (std::path::PathBuf, pvesim::fileserver::Served) {
        let served = pvesim::fileserver::Served::pattern(len as u64);
        let mut bytes = Vec::with_capacity(len);
        served
            .each_chunk(|c| {
                bytes.extend_from_slice(c);
                Ok(())
            })
            .unwrap();
        let path = env.dir().join(name);
        std::fs::write(&path, bytes).unwrap();
        (path, served)
    }

    #[test]
    fn an_iso_is_streamed_to_the_storage_predicted_then_ok() {
        let env = Env::start();
        let (path, _) = file(&env, "installer-1.iso", 5 << 20);
        let args = format!("node: pve1, storage: isos, content_type: iso, src: {}", path.display());
        env.clear_requests();
        let dry = env.run_with(&task(&args), &checked(as_root(&env)));
        let d = dry.task("t");
        assert!(d.changed && !d.failed, "{}", d.result);
        assert_eq!(d.msg(), "template with volid=isos:iso/installer-1.iso uploaded");
        assert_eq!(d.result["size"], json!(5 << 20));
        assert!(env.writes().is_empty(), "{:?}", env.writes());

        let real = env.run_with(&task(&args), &as_root(&env));
        let r = real.task("t");
        assert!(r.changed && !r.failed, "{}", r.result);
        assert_eq!(r.msg(), d.msg());
        assert_eq!(
            (r.result["size"].clone(), r.result["transfer"]["bytes"].clone()),
            (json!(5 << 20), json!(5 << 20))
        );
        assert!(
            r.result["transfer"]["sending_seconds"].as_f64().is_some(),
            "{}",
            r.result
        );
        assert_eq!(
            env.write_counts(),
            ["POST /api2/json/nodes/pve1/storage/isos/upload x1"]
        );
        assert!(
            volids(&env).contains(&"isos:iso/installer-1.iso".to_string()),
            "{:?}",
            volids(&env)
        );

        let again = env.run_with(&task(&args), &as_root(&env));
        let a = again.task("t");
        assert!(!a.changed && !a.failed, "{}", a.result);
        assert_eq!(a.msg(), "template with volid=isos:iso/installer-1.iso already exists");
    }

    #[test]
    fn the_checksum_is_verified_by_pve_and_a_mismatch_leaves_no_file() {
        let env = Env::start();
        let (path, served) = file(&env, "tmpl.tar.zst", 200_000);
        let sha = served.digests()["sha512"].clone();
        let bad = env.run_with(
            &task(&format!(
                "node: pve1, storage: local, content_type: vztmpl, src: {}, checksum_algorithm: sha512, checksum: '{}'",
                path.display(),
                "ab".repeat(64)
            )),
            &as_root(&env),
        );
        let b = bad.task("t");
        assert!(b.failed, "{}", b.result);
        assert!(
            b.msg().starts_with(&format!(
                "Task error: checksum mismatch: got '{sha}' != expect '{}'",
                "ab".repeat(64)
            )),
            "{}",
            b.msg()
        );
        assert!(
            !volids(&env).iter().any(|v| v.contains("tmpl.tar.zst")),
            "{:?}",
            volids(&env)
        );

        let good = env.run_with(
            &task(&format!(
                "node: pve1, storage: local, content_type: vztmpl, src: {}, checksum_algorithm: sha512, checksum: '{}'",
                path.display(),
                sha.to_uppercase()
            )),
            &as_root(&env),
        );
        let g = good.task("t");
        assert!(g.changed && !g.failed, "{}", g.result);
        assert!(
            volids(&env).contains(&"local:vztmpl/tmpl.tar.zst on pve1".to_string()),
            "{:?}",
            volids(&env)
        );
    }

    /// PVE stores `my installer.iso` as `my_installer.iso`: the rerun finds it there.
    #[test]
    fn a_name_pve_normalises_is_found_again() {
        let env = Env::start();
        let (path, _) = file(&env, "my installer.iso", 8192);
        let args = format!(
            "node: pve1, storage: isos, content_type: iso, src: '{}'",
            path.display()
        );
        let first = env.run_with(&task(&args), &as_root(&env));
        assert!(first.task("t").changed, "{}", first.task("t").result);
        assert_eq!(first.task("t").result["volid"], "isos:iso/my_installer.iso");
        assert_eq!(first.task("t").result["size"], json!(8192));
        let again = env.run_with(&task(&args), &as_root(&env));
        let a = again.task("t");
        assert!(!a.changed && !a.failed, "{}", a.result);
        assert_eq!(a.msg(), "template with volid=isos:iso/my_installer.iso already exists");
    }

    /// PVE's upload overwrites a file of its name, so `force: true` uploads over it: no
    /// removal first, and a token with only Datastore.AllocateTemplate may do it.
    #[test]
    fn force_uploads_over_a_file_of_that_name_with_allocate_template_alone() {
        let (env, o) = template_token_env(false);
        let (first, _) = file(&env, "virtio-win.iso", 16 << 10);
        let play = env.run_with(
            &task(&format!(
                "node: pve1, storage: local, content_type: iso, src: {}",
                first.display()
            )),
            &o,
        );
        assert!(play.task("t").changed, "{}", play.task("t").result);
        let newer = env.dir().join("newer");
        std::fs::create_dir_all(&newer).unwrap();
        let (path, _) = file(&env, "newer/virtio-win.iso", 64 << 10);
        let args = task(&format!(
            "node: pve1, storage: local, content_type: iso, src: {}, force: true",
            path.display()
        ));
        env.clear_requests();
        for o in [checked(o.clone()), o] {
            let play = env.run_with(&args, &o);
            let t = play.task("t");
            assert!(t.changed && !t.failed, "check: {}: {}", o.check, t.result);
            assert_eq!(t.msg(), "template with volid=local:iso/virtio-win.iso uploaded");
            assert_eq!(t.result["replaced"], json!(true));
            assert_eq!(t.result["size"], json!(64 << 10));
        }
        assert_eq!(
            env.write_counts(),
            ["POST /api2/json/nodes/pve1/storage/local/upload x1"]
        );
        let listed = env.api_get("/nodes/pve1/storage/local/content?content=iso");
        let v = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["volid"] == "local:iso/virtio-win.iso")
            .cloned()
            .unwrap_or_default();
        assert_eq!(v["size"], json!(64 << 10), "{listed}");
    }
}

/// `template` alone, `content_type: vztmpl`: PVE's appliance index (`pveam`) downloads
/// it (POST /nodes/{node}/aplinfo), checked by the index's sha512; then it is ok.
#[test]
fn an_appliance_template_is_downloaded_from_pves_index() {
    let files = pvesim::fileserver::FileServer::start().unwrap();
    let body = pvesim::fileserver::Served::pattern(150_000);
    files.add("/images/system/debian-13-standard_13.1-2_amd64.tar.zst", body.clone());
    let mut cfg = pvesim::SimConfig::default();
    cfg.scenario.appliances.push(
        serde_json::from_value(json!({
            "package": "debian-13-standard", "version": "13.1-2", "os": "debian",
            "location": files.url("/images/system/debian-13-standard_13.1-2_amd64.tar.zst"),
            "sha512sum": body.digests()["sha512"],
        }))
        .unwrap(),
    );
    let env = Env::start_with(cfg);
    let args = "node: pve1, storage: local, content_type: vztmpl, template: debian-13-standard_13.1-2_amd64.tar.zst";
    env.clear_requests();
    let dry = env.run_with(&task(args), &checked(as_root(&env)));
    assert!(
        dry.task("t").changed && !dry.task("t").failed,
        "{}",
        dry.task("t").result
    );
    assert!(env.writes().is_empty(), "{:?}", env.writes());
    let real = env.run_with(&task(args), &as_root(&env));
    let r = real.task("t");
    assert!(r.changed && !r.failed, "{}", r.result);
    assert_eq!(
        r.msg(),
        "template with volid=local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst downloaded"
    );
    assert_eq!(r.result["size"], json!(150_000));
    assert_eq!(env.write_counts(), ["POST /api2/json/nodes/pve1/aplinfo x1"]);
    let again = env.run_with(&task(args), &as_root(&env));
    assert!(
        !again.task("t").changed && !again.task("t").failed,
        "{}",
        again.task("t").result
    );
    assert_eq!(
        again.task("t").msg(),
        "template with volid=local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst already exists"
    );
}
