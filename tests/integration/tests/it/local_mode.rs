//! Local mode: tasks without `api_host` talk to Proxmox VE through `pvesh` on the
//! machine they run on, as root@pam (community.proxmox's `local` backend). Here the
//! modules run in process against the simulator with pvesim's `pvesh` stand-in on PATH
//! (`pvesim::pvesh`, built with these tests): the same plan, results and final cluster
//! as over HTTPS, a rerun changes nothing, check mode writes nothing; without pvesh
//! the task fails before any call, and an HTTPS-only option is warned about.
//!
//! PATH and the stand-in's `PVESIM_*` variables are the test process's, so the tests
//! here hold one lock while they set them (other tests never look for pvesh).

use std::sync::{Mutex, MutexGuard};

use std::time::Duration;

use crate::kvm_support::{qemu_vms, run_playbook, run_playbook_with};
use ferrox_integration::{repo_root, Env, PlayOpts};
use ferrox_pve_client::client::Client;
use ferrox_pve_client::connection::ConnectionParams;
use ferrox_pve_client::tasks;
use ferrox_run::local_mode::{find_on_path, PVESH};
use pvesim::pvesh::{CA_ENV, ROOT_PASSWORD_ENV, URL_ENV};
use serde_json::{json, Value};

const CREATE: &str = r#"
- name: create
  ferrox.proxmox.proxmox_kvm:
    node: pve1
    name: app07
    cores: 2
    memory: 2048
    scsihw: virtio-scsi-single
    scsi:
      scsi0: local-lvm:8,discard=on
    net:
      net0: virtio,bridge=vmbr0,tag=10
    tags: [web, prod]
    onboot: true
"#;

const INFO: &str = r#"
- name: info
  ferrox.proxmox.proxmox_vm_info:
    name: app07
"#;

/// The process's environment while a test runs modules in local mode.
static PROCESS_ENV: Mutex<()> = Mutex::new(());

/// PATH (and the stand-in's variables) as one test set them, restored when dropped.
struct LocalNode {
    path: Option<std::ffi::OsString>,
    _held: MutexGuard<'static, ()>,
}

impl LocalNode {
    /// This machine as a Proxmox VE node of `env`'s cluster: pvesim's pvesh first on PATH.
    fn of(env: &Env) -> LocalNode {
        let held = PROCESS_ENV.lock().unwrap_or_else(|e| e.into_inner());
        let bin = env.dir().join("node-bin");
        std::fs::create_dir_all(&bin).unwrap();
        let link = bin.join(PVESH);
        if !link.exists() {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pvesim-pvesh"), &link).unwrap();
        }
        let path = std::env::var_os("PATH");
        let dirs = std::iter::once(bin).chain(path.iter().flat_map(std::env::split_paths));
        std::env::set_var("PATH", std::env::join_paths(dirs).unwrap());
        std::env::set_var(URL_ENV, format!("https://127.0.0.1:{}", env.sim().port()));
        std::env::set_var(CA_ENV, env.ca_path());
        std::env::remove_var(ROOT_PASSWORD_ENV);
        LocalNode { path, _held: held }
    }

    /// This machine as it is: no pvesh on PATH (asserted).
    fn none() -> LocalNode {
        let held = PROCESS_ENV.lock().unwrap_or_else(|e| e.into_inner());
        let path = std::env::var_os("PATH");
        assert_eq!(
            find_on_path(PVESH, path.as_deref()),
            None,
            "this test needs a machine without pvesh on PATH"
        );
        LocalNode { path, _held: held }
    }
}

impl Drop for LocalNode {
    fn drop(&mut self) {
        match &self.path {
            Some(path) => std::env::set_var("PATH", path),
            None => std::env::remove_var("PATH"),
        }
        for var in [URL_ENV, CA_ENV] {
            std::env::remove_var(var);
        }
    }
}

/// No connection option at all (`module_defaults` empty).
fn local() -> PlayOpts {
    PlayOpts {
        module_defaults: Some(json!({})),
        ..Default::default()
    }
}

fn local_check() -> PlayOpts {
    PlayOpts {
        check: true,
        diff: true,
        ..local()
    }
}

/// A VM's config without what PVE makes up anew for each VM (MAC, UUID, generation id, digest).
fn made_config(env: &Env, vmid: u64) -> Value {
    let mut cfg = env.api_get(&format!("/nodes/pve1/qemu/{vmid}/config"));
    let map = cfg.as_object_mut().unwrap();
    for made in ["digest", "smbios1", "vmgenid", "meta"] {
        map.remove(made);
    }
    if let Some(net0) = map.get("net0").and_then(Value::as_str) {
        let without_mac: Vec<&str> = net0
            .split(',')
            .filter(|p| !p.contains('=') || p.starts_with("bridge") || p.starts_with("tag"))
            .collect();
        map.insert("net0".into(), Value::from(without_mac.join(",")));
    }
    cfg
}

#[test]
fn create_converges_through_pvesh_as_over_https() {
    let https = Env::start();
    let over_https = https.run(CREATE);
    over_https.assert_ok();

    let env = Env::start();
    let _node = LocalNode::of(&env);
    let dry = env.run_with(CREATE, &local_check());
    dry.assert_ok();
    assert!(dry.task("create").changed);
    assert!(env.writes().is_empty(), "check mode wrote: {:?}", env.writes());

    let play = env.run_with(CREATE, &local());
    play.assert_ok();
    let created = play.task("create");
    assert!(created.changed);
    let vmid = created.result["vmid"].as_u64().expect("vmid");
    assert_eq!(created.result["vmid"], over_https.task("create").result["vmid"]);
    assert_eq!(created.result["msg"], format!("VM app07 with vmid {vmid} deployed"));
    assert_eq!(
        created.result["actions"],
        dry.task("create").result["actions"],
        "the plan check mode reported"
    );
    assert_eq!(
        made_config(&env, vmid),
        made_config(&https, vmid),
        "the same VM as over HTTPS"
    );
    assert!(env.logins().0 > 0, "pvesh logged in as root@pam");

    let written = env.writes();
    let again = env.run_with(CREATE, &local());
    again.assert_ok();
    assert!(!again.task("create").changed, "{:?}", again.task("create").result);
    assert!(
        again.task("create").warnings().is_empty(),
        "{:?}",
        again.task("create").warnings()
    );
    let dry_again = env.run_with(CREATE, &local_check());
    dry_again.assert_ok();
    assert!(!dry_again.task("create").changed);
    assert_eq!(env.writes(), written, "neither the rerun nor check mode wrote");

    let info = env.run_with(INFO, &local());
    info.assert_ok();
    let vms = info.task("info").result["proxmox_vms"].as_array().unwrap().clone();
    assert_eq!(vms.len(), 1, "{vms:?}");
    assert_eq!(vms[0]["vmid"], json!(vmid));
    assert_eq!(vms[0]["node"], json!("pve1"));
}

#[test]
fn the_client_reads_pveshs_answers_as_pves_over_https() {
    let env = Env::start();
    let _node = LocalNode::of(&env);
    // No host: the client runs pvesh.
    let client = Client::connect(&ConnectionParams {
        timeout_secs: 30,
        ..ConnectionParams::default()
    })
    .unwrap();
    assert!(client.is_local());
    assert_eq!(client.identity(), "user root@pam (pvesh on this node)");
    let version = client.get("/version", &[]).unwrap();
    assert_eq!(version["release"], env.api_get("/version")["release"]);
    // A parameter PVE refuses: its status, message and the parameter, as over HTTPS.
    let refused = client
        .put("/nodes/pve1/qemu/100/config", &[("cores", "many".into())])
        .unwrap_err();
    assert_eq!(
        (refused.status, refused.message.as_str()),
        (Some(400), "Parameter verification failed.")
    );
    assert!(
        refused.errors.as_ref().is_some_and(|e| e.contains_key("cores")),
        "{refused:?}"
    );
    // A config write answers null; a task-starting call the UPID of a task already done.
    assert_eq!(
        client
            .put(
                "/nodes/pve1/qemu/100/config",
                &[("description", "-set through pvesh-".into())]
            )
            .unwrap(),
        Value::Null
    );
    assert_eq!(
        env.api_get("/nodes/pve1/qemu/100/config")["description"],
        json!("-set through pvesh-")
    );
    let upid = client
        .post("/nodes/pve1/qemu/100/snapshot", &[("snapname", "local1".into())])
        .unwrap();
    let upid = upid.as_str().expect("a UPID");
    let done = tasks::wait(&client, upid, Duration::from_secs(30)).unwrap();
    assert_eq!(done.exitstatus, "OK");
    assert_eq!(client.task_owner(), ("root@pam".to_string(), None));
    // A log longer than a page: pvesh prints no total, its pages are read to the end.
    env.fault(json!({"task_type": "qmsnapshot", "warnings": 120, "times": 1}));
    let upid = client
        .post("/nodes/pve1/qemu/100/snapshot", &[("snapname", "local2".into())])
        .unwrap();
    let done = tasks::wait(&client, upid.as_str().unwrap(), Duration::from_secs(30)).unwrap();
    assert_eq!(done.exitstatus, "WARNINGS: 120");
    assert_eq!(done.warnings.len(), 120, "{:?}", done.warnings.last());
}

#[test]
fn a_task_that_fails_under_pvesh_fails_the_module_as_over_https() {
    let env = Env::start();
    let _node = LocalNode::of(&env);
    let create = "- name: c\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: f01\n    scsi:\n      scsi0: local-lvm:4\n";
    env.fault(json!({"task_type": "qmcreate", "fail": "lvcreate 'pve/vm-101-disk-0' error: out of space", "times": 1}));
    let play = env.run_with(create, &local());
    let failed = play.task("c");
    assert!(failed.failed, "{:?}", failed.result);
    assert!(
        failed
            .msg()
            .starts_with("creation of qemu VM f01 with vmid 101 failed with exception=")
            && failed.msg().contains("out of space")
            && failed.msg().contains("UPID:pve1:"),
        "{}",
        failed.msg()
    );
    let again = env.run_with(create, &local());
    again.assert_ok();
    assert!(again.task("c").changed);
}

#[test]
fn without_api_host_or_pvesh_the_task_fails_before_anything_else() {
    let env = Env::start();
    let _machine = LocalNode::none();
    let before = api_calls(&env);
    let play = env.run_with(INFO, &local());
    let info = play.task("info");
    assert!(info.failed);
    assert!(
        info.msg().starts_with("api_host is not set")
            && info.msg().contains("no pvesh on its PATH")
            && info.msg().contains("delegate_to"),
        "{}",
        info.msg()
    );
    assert_eq!(api_calls(&env), before, "nothing reached the cluster");
}

/// The simulator's API requests so far, by method and path (its own log's reads aside).
fn api_calls(env: &Env) -> Value {
    let counts = env.requests()["counts"].as_object().unwrap().clone();
    Value::Object(counts.into_iter().filter(|(k, _)| !k.contains("/_pvesim/")).collect())
}

#[test]
fn an_https_only_option_in_local_mode_is_warned_about_and_never_shown() {
    let env = Env::start();
    let _node = LocalNode::of(&env);
    let opts = PlayOpts {
        module_defaults: Some(
            env.defaults_with(json!({"api_password": "local-mode-secret", "api_user": "ansible@pve"})),
        ),
        ..Default::default()
    };
    let play = env.run_with(INFO, &opts);
    play.assert_ok();
    let info = play.task("info");
    let warnings = info.warnings();
    for option in ["api_password", "api_user"] {
        let warned = format!("{option} is ignored without api_host");
        assert!(warnings.iter().any(|w| w.starts_with(&warned)), "{warnings:?}");
    }
    assert!(!info.result.to_string().contains("local-mode-secret"));
}

/// The whole path through Ansible: a play on the controller delegates its tasks to a
/// node host (this machine, `ansible_connection: local`, pvesim's pvesh on its PATH);
/// the action plugin picks the binary for the node, which runs pvesh there.
#[test]
fn a_play_delegated_to_a_node_converges_through_pvesh() {
    let env = Env::start();
    let node = node_environment(&env);
    let opts = |check: bool| PlayOpts {
        check,
        module_defaults: Some(json!({})),
        hosts: Some((
            "localhost".into(),
            "localhost ansible_connection=local\npve1 ansible_connection=local\n".into(),
        )),
        env: node.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        ..Default::default()
    };
    let tasks = format!(
        "{}  delegate_to: pve1\n{}  delegate_to: pve1\n",
        CREATE.trim_start_matches('\n'),
        INFO.trim_start_matches('\n')
    );

    let dry = env.play_with(&tasks, &opts(true));
    assert_eq!(dry.rc, 0, "{}", dry.transcript());
    assert!(dry.task("create").changed);
    assert!(env.writes().is_empty(), "check mode wrote: {:?}", env.writes());

    let play = env.play_with(&tasks, &opts(false));
    assert_eq!(play.rc, 0, "{}", play.transcript());
    let created = play.task("create");
    assert!(created.changed);
    let vmid = created.result["vmid"].as_u64().expect("vmid");
    assert_eq!(created.result["actions"], dry.task("create").result["actions"]);
    assert_eq!(play.task("info").result["proxmox_vms"][0]["vmid"], json!(vmid));
    let written = env.writes();

    let again = env.play_with(&tasks, &opts(false));
    assert_eq!(again.rc, 0, "{}", again.transcript());
    assert_eq!(again.recap("changed"), Some(0), "{}", again.transcript());
    let dry_again = env.play_with(&tasks, &opts(true));
    assert_eq!(dry_again.recap("changed"), Some(0), "{}", dry_again.transcript());
    assert_eq!(env.writes(), written, "neither the rerun nor check mode wrote");
}

/// What `ansible-playbook` gets to make this machine a node of `env`'s cluster: PATH with
/// pvesim's pvesh first, and where the stand-in finds the simulator.
fn node_environment(env: &Env) -> Vec<(&'static str, String)> {
    let node_bin = env.dir().join("playbook-node-bin");
    std::fs::create_dir_all(&node_bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pvesim-pvesh"), node_bin.join(PVESH)).unwrap();
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::iter::once(node_bin).chain(std::env::split_paths(&inherited));
    vec![
        (
            "PATH",
            std::env::join_paths(dirs).unwrap().to_string_lossy().into_owned(),
        ),
        (URL_ENV, format!("https://127.0.0.1:{}", env.sim().port())),
        (CA_ENV, env.ca_path().display().to_string()),
    ]
}

/// The field playbooks (`playbooks/`, tasks delegated to localhost: here the node) with no
/// connection at all: converge, repeat and check mode change nothing, the cluster ends as
/// the same playbooks over HTTPS leave it, and teardown removes it all.
#[test]
fn field_playbooks_in_local_mode_end_as_over_https() {
    let books = repo_root().join("playbooks");
    let inventory = books.join("inventory.yml");
    let https = Env::start();
    for book in ["create.yml", "start.yml"] {
        let run = run_playbook(&https, &books.join(book), &inventory, &[]);
        assert_eq!(run.rc, 0, "over HTTPS {book}:\n{}", run.stdout);
    }

    let env = Env::start();
    let node = node_environment(&env);
    let dry = run_playbook_with(&env, &books.join("create.yml"), &inventory, &["--check"], &node);
    assert_eq!(dry.rc, 0, "{}", dry.stdout);
    assert_eq!(dry.recap("changed"), 3 * 4, "{}", dry.stdout);
    assert!(env.writes().is_empty(), "check mode wrote: {:?}", env.writes());
    for (round, extra) in [("converge", &[][..]), ("repeat", &[][..]), ("check", &["--check"][..])] {
        for book in ["create.yml", "start.yml", "info.yml"] {
            let run = run_playbook_with(&env, &books.join(book), &inventory, extra, &node);
            assert_eq!(run.rc, 0, "{round} {book}:\n{}", run.stdout);
            if round != "converge" {
                assert_eq!(
                    run.recap("changed"),
                    0,
                    "{round} {book} changed something:\n{}",
                    run.stdout
                );
            }
        }
    }
    let local_vms = demo_vms(&env);
    assert_eq!(local_vms.len(), 3, "{local_vms:?}");
    assert_eq!(local_vms, demo_vms(&https), "the cluster as over HTTPS");

    let run = run_playbook_with(&env, &books.join("teardown.yml"), &inventory, &[], &node);
    assert_eq!(run.rc, 0, "{}", run.stdout);
    assert!(qemu_vms(&env).iter().all(|(_, n)| !n.starts_with("demo-")));
}

/// The demo VMs by name: node, status and config, vmids and what PVE makes up per VM left out.
fn demo_vms(env: &Env) -> Vec<(String, Value, Value, String)> {
    vms_named(env, "demo-")
}

/// The VMs whose name starts with `prefix`, as [`demo_vms`] shows them.
fn vms_named(env: &Env, prefix: &str) -> Vec<(String, Value, Value, String)> {
    let mut vms: Vec<_> = env
        .guests_listed()
        .iter()
        .filter(|g| g["type"] == "qemu" && g["name"].as_str().is_some_and(|n| n.starts_with(prefix)))
        .map(|g| {
            let vmid = g["vmid"].as_u64().unwrap();
            let path = format!("/nodes/{}/qemu/{vmid}/config", g["node"].as_str().unwrap());
            let mut cfg = env.api_get(&path);
            let map = cfg.as_object_mut().unwrap();
            for made in ["digest", "smbios1", "vmgenid", "meta"] {
                map.remove(made);
            }
            let config = serde_json::to_string(&cfg)
                .unwrap()
                .replace(&format!("vm-{vmid}-"), "vm-VMID-");
            let config = regex::Regex::new("[0-9A-F]{2}(:[0-9A-F]{2}){5}")
                .unwrap()
                .replace_all(&config, "MAC");
            (
                g["name"].as_str().unwrap().to_string(),
                g["node"].clone(),
                g["status"].clone(),
                config.into_owned(),
            )
        })
        .collect();
    vms.sort_by(|a, b| a.0.cmp(&b.0));
    vms
}

/// The `/var/tmp/pveupload-…` files on this machine (the uploads handed to pvesh).
/// The handed copies (`/var/tmp/pveupload-*`) that hold `file`'s bytes. Other tests of
/// the suite hand files there at the same time: only a copy of this very file counts.
fn handed_copies_of(file: &std::path::Path) -> Vec<String> {
    let wanted = std::fs::read(file).unwrap();
    let dir = std::path::Path::new(ferrox_pve_client::client::local_upload::UPLOAD_DIR);
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(ferrox_pve_client::client::local_upload::UPLOAD_PREFIX)
                })
                .filter(|e| e.metadata().is_ok_and(|m| m.len() == wanted.len() as u64))
                .filter(|e| std::fs::read(e.path()).is_ok_and(|b| b == wanted))
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// An ISO of `len` bytes written on this machine (the node), and its digests.
fn iso(env: &Env, name: &str, len: u64) -> (std::path::PathBuf, std::collections::BTreeMap<String, String>) {
    let served = pvesim::fileserver::Served::pattern(len);
    let mut bytes = Vec::new();
    served
        .each_chunk(|c| {
            bytes.extend_from_slice(c);
            Ok(())
        })
        .unwrap();
    let path = env.dir().join(name);
    std::fs::write(&path, bytes).unwrap();
    (path, served.digests())
}

/// proxmox_template's `src` in local mode: pvesh has no file parameter, so the file is
/// handed to PVE's upload as pve-http-server would (`tmpfilename`), checked by PVE,
/// stored, and no copy is left on the node, whether PVE took it or refused it.
#[test]
fn an_upload_goes_through_pvesh_and_leaves_no_copy_on_the_node() {
    let env = Env::start();
    let _node = LocalNode::of(&env);
    let (path, digests) = iso(&env, "local-installer.iso", 3 << 20);
    let before = handed_copies_of(&path);
    let upload = format!(
        "- name: upload\n  ferrox.proxmox.proxmox_template: {{node: pve1, storage: isos, content_type: iso, src: {}, checksum_algorithm: sha256, checksum: '{}'}}\n",
        path.display(),
        digests["sha256"]
    );

    let dry = env.run_with(&upload, &local_check());
    dry.assert_ok();
    assert!(dry.task("upload").changed);
    assert!(env.writes().is_empty(), "check mode wrote: {:?}", env.writes());

    let play = env.run_with(&upload, &local());
    play.assert_ok();
    let up = play.task("upload");
    assert!(up.changed, "{}", up.result);
    assert_eq!(up.msg(), "template with volid=isos:iso/local-installer.iso uploaded");
    assert_eq!(up.result["size"], json!(3 << 20));
    let listed = env.api_get("/nodes/pve1/storage/isos/content");
    let stored = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["volid"] == "isos:iso/local-installer.iso")
        .unwrap_or_else(|| panic!("stored: {listed}"));
    assert_eq!(stored["size"], json!(3 << 20));
    assert_eq!(handed_copies_of(&path), before, "the handed copy is gone");

    let again = env.run_with(&upload, &local());
    again.assert_ok();
    assert!(!again.task("upload").changed, "{}", again.task("upload").result);

    // PVE's task refuses a checksum mismatch and unlinks the file.
    let (other, _) = iso(&env, "other.iso", 4096);
    let other_before = handed_copies_of(&other);
    let mismatch = format!(
        "- name: upload\n  ferrox.proxmox.proxmox_template: {{node: pve1, storage: isos, content_type: iso, src: {}, checksum_algorithm: sha256, checksum: '{}'}}\n  ignore_errors: true\n",
        other.display(),
        "ab".repeat(32)
    );
    let refused = env.run_with(&mismatch, &local());
    let r = refused.task("upload");
    assert!(r.failed, "{}", r.result);
    assert!(r.msg().contains("checksum mismatch"), "{}", r.msg());
    assert_eq!(handed_copies_of(&other), other_before, "no copy left after a refusal");
    let listed = env.api_get("/nodes/pve1/storage/isos/content").to_string();
    assert!(!listed.contains("other.iso"), "{listed}");
}

/// The seed flow (playbooks/golden-image.yml: each node downloads a cloud image, a VM per
/// node is made from it and turned into a template) with its tasks delegated to a node
/// host and no connection option: check mode predicts every change and writes nothing,
/// the run leaves the templates the same run over HTTPS leaves, a rerun changes nothing
/// (its only calls that write are the nodes verifying the image's checksum), and a check
/// run then writes nothing.
#[test]
fn the_seed_flow_delegated_to_a_node_ends_as_over_https() {
    let (https, _https_files, https_vars) = crate::golden_image::golden_start();
    let over_https = https.play_with(
        &crate::golden_image::tasks(),
        &crate::golden_image::as_root(&https, https_vars),
    );
    assert_eq!(over_https.rc, 0, "over HTTPS:\n{}", over_https.transcript());

    let (env, _files, vars) = crate::golden_image::golden_start();
    let node = node_environment(&env);
    let opts = |check: bool| PlayOpts {
        check,
        vars: vars.clone(),
        module_defaults: Some(json!({})),
        hosts: Some((
            "localhost".into(),
            "localhost ansible_connection=local\npve1 ansible_connection=local\n".into(),
        )),
        env: node.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        ..Default::default()
    };
    // Every task of the playbook delegated to the node.
    let tasks =
        crate::golden_image::tasks().replace("\n- name:", "\n  delegate_to: pve1\n- name:") + "  delegate_to: pve1\n";
    assert_eq!(tasks.matches("delegate_to: pve1").count(), 3, "{tasks}");

    env.clear_requests();
    let dry = env.play_with(&tasks, &opts(true));
    assert_eq!(dry.rc, 0, "{}", dry.transcript());
    assert_eq!(crate::golden_image::items_changed(&dry), 9, "{}", dry.transcript());
    assert!(env.writes().is_empty(), "check mode wrote: {:?}", env.writes());

    let first = env.play_with(&tasks, &opts(false));
    assert_eq!(first.rc, 0, "{}", first.transcript());
    assert_eq!(crate::golden_image::items_changed(&first), 9, "{}", first.transcript());
    let templates = vms_named(&env, "golden-");
    assert_eq!(templates.len(), 3, "{templates:?}");
    assert_eq!(templates, vms_named(&https, "golden-"), "the cluster as over HTTPS");
    let written = env.writes();

    let again = env.play_with(&tasks, &opts(false));
    assert_eq!(again.recap("changed"), Some(0), "{}", again.transcript());
    // The only calls of the rerun that are writes to PVE: each node verifying the image's
    // checksum (download-url of a file that is there downloads nothing), as over HTTPS.
    let verified: Vec<String> = env.writes()[written.len()..].to_vec();
    assert_eq!(
        verified,
        ["pve1", "pve2", "pve3"]
            .iter()
            .map(|n| format!("POST /api2/json/nodes/{n}/storage/local/download-url"))
            .collect::<Vec<_>>()
    );
    let written = env.writes();
    let dry_again = env.play_with(&tasks, &opts(true));
    assert_eq!(dry_again.recap("changed"), Some(0), "{}", dry_again.transcript());
    assert_eq!(env.writes(), written, "check mode wrote");
}
