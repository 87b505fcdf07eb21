//! Dry-run parity: a playbook run in check mode predicts what the same playbook then
//! does for real. Each test runs one playbook twice on one fresh simulator, first with
//! `--check`, then for real, and compares what each task reported: `changed`, `msg`,
//! and the whole result of the read-only tasks, except the values only PVE decides
//! (a dry run reports them as null or `(known after apply)`) and the live counters.

use ferrox_integration::{Env, Play, PlayOpts};
use serde_json::Value;

/// Keys whose values only the real run can know, or that say which run it was.
/// Live figures of a running VM, which no plan can know.
const LIVE: [&str; 8] = [
    "memhost",
    "disk",
    "pressurecpufull",
    "pressurecpusome",
    "pressureiofull",
    "pressureiosome",
    "pressurememoryfull",
    "pressurememorysome",
];

/// The status figures of a VM listing a dry run leaves out for a VM it plans to make
/// (left out is fine; a stale value is not).
const OMITTED_WHEN_PLANNED: [&str; 6] = ["cpus", "maxcpu", "maxmem", "maxdisk", "serial", "tags"];

const IGNORED: [&str; 21] = [
    "digest",
    "uptime",
    "cpu",
    "mem",
    "netin",
    "netout",
    "diskread",
    "diskwrite",
    "pid",
    "snaptime",
    "planned",
    "upid",
    "vmgenid",
    "meta",
    "smbios1",
    "known_after_apply",
    "invocation",
    "diff",
    "_ferrox_progress",
    "warnings",
    "elapsed",
];

fn unknown(v: &Value) -> bool {
    v.is_null()
        || v.as_str()
            .is_some_and(|s| s.to_lowercase().contains("known after apply"))
}

fn empty(v: &Value) -> bool {
    v.is_null() || v.as_object().is_some_and(|o| o.is_empty()) || v.as_array().is_some_and(|a| a.is_empty())
}

/// A list of named things (snapshots) in name order: PVE's order is not the point.
fn by_name(list: &[Value]) -> Vec<Value> {
    let mut l = list.to_vec();
    if l.iter().all(|v| v.get("name").is_some_and(Value::is_string)) {
        l.sort_by_key(|v| v["name"].as_str().unwrap_or("").to_string());
    }
    l
}

/// A string with its MAC addresses and volume names replaced (PVE picks them).
fn norm(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split(',').enumerate() {
        if i > 0 {
            out.push(',');
        }
        let p: String = part
            .split('=')
            .map(|w| {
                let hexes: Vec<&str> = w.split(':').collect();
                if hexes.len() == 6
                    && hexes
                        .iter()
                        .all(|h| h.len() == 2 && h.chars().all(|c| c.is_ascii_hexdigit()))
                {
                    "<mac>".to_string()
                } else if w.contains("-disk-") || w.contains("vm-") && w.contains(':') {
                    let store = w.split(':').next().unwrap_or("");
                    format!("{store}:<volume>")
                } else {
                    w.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("=");
        out.push_str(&p);
    }
    out
}

fn compare(pred: &Value, real: &Value, path: &str, out: &mut Vec<String>) {
    if unknown(pred) {
        return;
    }
    match (pred, real) {
        (p, r) if p == r => {}
        (Value::Object(p), Value::Object(r)) => {
            let mut keys: Vec<&String> = p.keys().chain(r.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                if IGNORED.contains(&k.as_str()) || LIVE.contains(&k.as_str()) {
                    continue;
                }
                let (pv, rv) = (p.get(k), r.get(k));
                match (pv, rv) {
                    (Some(pv), Some(rv)) => compare(pv, rv, &format!("{path}.{k}"), out),
                    (Some(pv), None) if empty(pv) => {}
                    (None, Some(rv)) if empty(rv) => {}
                    (None, Some(_))
                        if OMITTED_WHEN_PLANNED.contains(&k.as_str())
                            && p.get("planned") == Some(&Value::Bool(true)) => {}
                    _ => out.push(format!("{path}.{k}: predicted {pv:?}, made {rv:?}")),
                }
            }
        }
        (Value::Array(p), Value::Array(r)) if p.len() == r.len() => {
            let (p, r) = (by_name(p), by_name(r));
            for (i, (pv, rv)) in p.iter().zip(&r).enumerate() {
                compare(pv, rv, &format!("{path}[{i}]"), out);
            }
        }
        (Value::String(p), Value::String(r)) if norm(&p.replace("would be ", "")) == norm(r) => {}
        _ => out.push(format!("{path}: predicted {pred}, made {real}")),
    }
}

/// Runs `play` in check mode, then for real, on `env`; returns both runs and the
/// differences: every task's `changed`/`failed`/`msg`, and the results of `readers`.
fn parity(env: &Env, play: &str, readers: &[&str], defaults: Option<Value>) -> (Play, Play, Vec<String>) {
    let dry = env.run_with(
        play,
        &PlayOpts {
            check: true,
            diff: true,
            module_defaults: defaults.clone(),
            ..Default::default()
        },
    );
    let real = env.run_with(
        play,
        &PlayOpts {
            diff: true,
            module_defaults: defaults,
            ..Default::default()
        },
    );
    let mut out = Vec::new();
    for (d, r) in dry.results.iter().zip(&real.results) {
        if d.changed != r.changed {
            out.push(format!(
                "{}: changed predicted {}, made {}",
                d.name, d.changed, r.changed
            ));
        }
        if d.failed != r.failed {
            out.push(format!(
                "{}: failed predicted {} ({}), made {} ({})",
                d.name,
                d.failed,
                d.msg(),
                r.failed,
                r.msg()
            ));
        }
        if norm(&d.msg().replace("would be ", "")) != norm(r.msg()) && !(d.failed || r.failed) {
            out.push(format!("{}: msg predicted {:?}, made {:?}", d.name, d.msg(), r.msg()));
        }
        if readers.contains(&d.name.as_str()) {
            compare(&d.result, &r.result, &d.name, &mut out);
        }
    }
    if dry.results.len() != real.results.len() {
        out.push(format!(
            "{} tasks predicted, {} run",
            dry.results.len(),
            real.results.len()
        ));
    }
    (dry, real, out)
}

fn assert_parity(play: &str, readers: &[&str]) {
    assert_parity_as(play, readers, false);
}

/// [`assert_parity`], as `root@pam` when `root` (ACLs need `Permissions.Modify`).
fn assert_parity_as(play: &str, readers: &[&str], root: bool) {
    let env = Env::start();
    let defaults = root.then(|| {
        let mut auth = env.auth();
        let a = auth.as_object_mut().unwrap();
        a.remove("api_token_id");
        a.remove("api_token_secret");
        a.insert("api_user".into(), Value::from("root@pam"));
        a.insert(
            "api_password".into(),
            Value::from(ferrox_integration::creds::ROOT_PASSWORD),
        );
        env.defaults_with(auth)
    });
    let (dry, real, diffs) = parity(&env, play, readers, defaults);
    if std::env::var("DRY_RUN_PARITY_DUMP").is_ok() {
        for (d, r) in dry.results.iter().zip(&real.results) {
            eprintln!("== {}\n-- check: {}\n-- real:  {}", d.name, d.result, r.result);
        }
    }
    for t in &real.results {
        assert!(
            !t.failed || t.name.starts_with("may_fail"),
            "{} failed: {}",
            t.name,
            t.msg()
        );
    }
    assert!(
        diffs.is_empty(),
        "the dry run predicted otherwise:\n{}",
        diffs.join("\n")
    );
}

const INFO_NEW: &str = "- name: info\n  ferrox.proxmox.proxmox_vm_info:\n    name: new01\n    config: current\n";
const INFO_WEB: &str = "- name: info\n  ferrox.proxmox.proxmox_vm_info:\n    vmid: 100\n    config: current\n";

fn with(tasks: &str, tail: &str) -> String {
    format!("{tasks}{tail}")
}

#[test]
fn kvm_started_then_stopped() {
    let play = format!(
        "- name: start\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    state: started\n{}\
         - name: stop\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    state: stopped\n\
         - name: info2\n  ferrox.proxmox.proxmox_vm_info:\n    vmid: 100\n",
        INFO_WEB
    );
    assert_parity(&play, &["start", "info", "stop", "info2"]);
}

#[test]
fn kvm_clone_then_template() {
    let play = with(
        "- name: clone\n  ferrox.proxmox.proxmox_kvm:\n    clone: web01\n    name: new01\n    full: true\n    storage: vmdata\n    format: qcow2\n\
         - name: template\n  ferrox.proxmox.proxmox_kvm:\n    name: new01\n    state: template\n",
        INFO_NEW,
    );
    assert_parity(&play, &["clone", "template", "info"]);
}

#[test]
fn kvm_linked_clone_from_template() {
    let play = with(
        "- name: clone\n  ferrox.proxmox.proxmox_kvm:\n    clone: base-debian13\n    name: new01\n    full: false\n    memory: 3072\n",
        INFO_NEW,
    );
    assert_parity(&play, &["clone", "info"]);
}

#[test]
fn kvm_full_clone_from_template_to_other_storage() {
    let play = with(
        "- name: clone\n  ferrox.proxmox.proxmox_kvm:\n    clone: base-debian13\n    name: new01\n    full: true\n    storage: local-lvm\n",
        INFO_NEW,
    );
    assert_parity(&play, &["clone", "info"]);
}

#[test]
fn kvm_migrate_to_pve2() {
    let play = with(
        "- name: migrate\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    node: pve2\n    migrate: true\n",
        INFO_WEB,
    );
    assert_parity(&play, &["migrate", "info"]);
}

#[test]
fn kvm_absent() {
    let play = "- name: gone\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    state: absent\n\
                - name: info\n  ferrox.proxmox.proxmox_vm_info:\n    name: web01\n\
                - name: all\n  ferrox.proxmox.proxmox_vm_info:\n    type: qemu\n";
    assert_parity(play, &["gone", "info", "all"]);
}

#[test]
fn kvm_create_start_then_absent() {
    let play = "- name: create\n  ferrox.proxmox.proxmox_kvm:\n    name: new01\n    node: pve1\n    scsi:\n      scsi0: local-lvm:4\n\
                - name: start\n  ferrox.proxmox.proxmox_kvm:\n    name: new01\n    state: started\n\
                - name: gone\n  ferrox.proxmox.proxmox_kvm:\n    name: new01\n    state: absent\n    force: true\n\
                - name: info\n  ferrox.proxmox.proxmox_vm_info:\n    name: new01\n";
    assert_parity(play, &["create", "start", "gone", "info"]);
}

#[test]
fn disk_detach_then_absent() {
    let play = with(
        "- name: add\n  ferrox.proxmox.proxmox_disk:\n    vmid: 100\n    disk: virtio1\n    storage: vmdata\n    size: 2\n\
         - name: detach\n  ferrox.proxmox.proxmox_disk:\n    vmid: 100\n    disk: virtio1\n    state: detached\n\
         - name: absent\n  ferrox.proxmox.proxmox_disk:\n    vmid: 100\n    disk: unused0\n    state: absent\n",
        INFO_WEB,
    );
    assert_parity(&play, &["add", "detach", "absent", "info"]);
}

const SNAP_INFO: &str = "- name: snaps\n  ferrox.proxmox.proxmox_snap_info:\n    vmid: 100\n";

#[test]
fn snap_take_and_remove() {
    let play = format!(
        "- name: take1\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: one\n    description: first\n\
         - name: take2\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: two\n\
         - name: remove\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: one\n    state: absent\n{SNAP_INFO}"
    );
    assert_parity(&play, &["take1", "take2", "remove", "snaps"]);
}

#[test]
fn snap_retention() {
    let play = format!(
        "- name: take1\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: one\n\
         - name: take2\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: two\n\
         - name: take3\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: three\n    retention: 2\n{SNAP_INFO}"
    );
    assert_parity(&play, &["take1", "take2", "take3", "snaps"]);
}

#[test]
fn snap_rollback_restores_the_config() {
    let play = format!(
        "- name: take\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: before\n\
         - name: update\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 6\n    memory: 8192\n\
         - name: rollback\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: before\n    state: rollback\n{SNAP_INFO}{INFO_WEB}"
    );
    assert_parity(&play, &["take", "update", "rollback", "snaps", "info"]);
}

#[test]
fn snap_rollback_then_update_back() {
    // After a rollback, setting the cores to the changed value again is a change.
    let play = "- name: take\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: before\n\
                - name: update\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 6\n\
                - name: rollback\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: before\n    state: rollback\n\
                - name: again\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 6\n";
    assert_parity(play, &["again"]);
}

#[test]
fn pool_and_member() {
    let play = format!(
        "- name: pool\n  ferrox.proxmox.proxmox_pool:\n    poolid: staging\n    comment: Staging\n\
         - name: member\n  ferrox.proxmox.proxmox_pool_member:\n    poolid: staging\n    member: web01\n\
         - name: storage\n  ferrox.proxmox.proxmox_pool_member:\n    poolid: staging\n    member: vmdata\n    type: storage\n{INFO_WEB}"
    );
    assert_parity_as(&play, &["pool", "member", "storage", "info"], true);
}

#[test]
fn pool_member_move_and_pool_absent() {
    let play = format!(
        "- name: member\n  ferrox.proxmox.proxmox_pool_member:\n    poolid: prod\n    member: 100\n\
         - name: pool\n  ferrox.proxmox.proxmox_pool:\n    poolid: staging\n\
         - name: move\n  ferrox.proxmox.proxmox_pool_member:\n    poolid: staging\n    member: 100\n    allow_move: true\n\
         - name: drop\n  ferrox.proxmox.proxmox_pool:\n    poolid: prod\n    state: absent\n{INFO_WEB}"
    );
    assert_parity_as(&play, &["member", "pool", "move", "drop", "info"], true);
}

#[test]
fn pool_removal_with_members() {
    let play = format!(
        "- name: member\n  ferrox.proxmox.proxmox_pool_member:\n    poolid: prod\n    member: 100\n\
         - name: may_fail_drop\n  ferrox.proxmox.proxmox_pool:\n    poolid: prod\n    state: absent\n  ignore_errors: true\n{INFO_WEB}"
    );
    assert_parity_as(&play, &["member", "may_fail_drop", "info"], true);
}

#[test]
fn kvm_create_in_pool() {
    let play = with(
        "- name: create\n  ferrox.proxmox.proxmox_kvm:\n    name: new01\n    node: pve1\n    pool: prod\n\
         - name: member\n  ferrox.proxmox.proxmox_pool_member:\n    poolid: prod\n    member: new01\n",
        INFO_NEW,
    );
    assert_parity_as(&play, &["create", "member", "info"], true);
}

#[test]
fn access_acl_add_and_remove() {
    let play = "- name: acl\n  ferrox.proxmox.proxmox_access_acl:\n    path: /vms/100\n    type: user\n    ugid: mfa@pve\n    roleid: PVEVMUser\n\
                - name: again\n  ferrox.proxmox.proxmox_access_acl:\n    path: /vms/100\n    type: user\n    ugid: mfa@pve\n    roleid: PVEVMUser\n\
                - name: user\n  ferrox.proxmox.proxmox_user_info:\n    userid: mfa@pve\n\
                - name: gone\n  ferrox.proxmox.proxmox_access_acl:\n    path: /vms/100\n    type: user\n    ugid: mfa@pve\n    roleid: PVEVMUser\n    state: absent\n";
    assert_parity_as(play, &["acl", "again", "user", "gone"], true);
}

#[test]
fn access_acl_for_a_token_and_a_group_path() {
    let play = "- name: acl\n  ferrox.proxmox.proxmox_access_acl:\n    path: /pool/prod\n    type: token\n    ugid: ansible@pve!readonly\n    roleid: PVEVMAdmin\n    propagate: false\n\
                - name: widen\n  ferrox.proxmox.proxmox_access_acl:\n    path: /pool/prod\n    type: token\n    ugid: ansible@pve!readonly\n    roleid: PVEVMAdmin\n    propagate: true\n\
                - name: user\n  ferrox.proxmox.proxmox_user_info:\n    userid: ansible@pve\n";
    assert_parity_as(play, &["acl", "widen", "user"], true);
}

#[test]
fn snap_take_then_config_names_its_parent() {
    let play = format!("- name: take\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: one\n{INFO_WEB}");
    assert_parity(&play, &["take", "info"]);
}

#[test]
fn kvm_tags_set_twice_is_one_change() {
    let play = "- name: tags\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    tags: [Zeta, alpha]\n\
                - name: again\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    tags: [Zeta, alpha]\n";
    assert_parity(play, &["tags", "again"]);
}

#[test]
fn kvm_template_then_linked_clone_of_it() {
    let play = with(
        "- name: template\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    state: template\n\
         - name: clone\n  ferrox.proxmox.proxmox_kvm:\n    clone: web01\n    name: new01\n    full: false\n",
        INFO_NEW,
    );
    assert_parity(&play, &["template", "clone", "info"]);
}

#[test]
fn pool_member_absent() {
    let play = format!(
        "- name: member\n  ferrox.proxmox.proxmox_pool_member:\n    poolid: prod\n    member: 100\n\
         - name: out\n  ferrox.proxmox.proxmox_pool_member:\n    poolid: prod\n    member: 100\n    state: absent\n{INFO_WEB}"
    );
    assert_parity_as(&play, &["member", "out", "info"], true);
}

#[test]
fn disk_resize_twice_is_one_change() {
    let play = "- name: resize\n  ferrox.proxmox.proxmox_disk:\n    vmid: 100\n    disk: scsi0\n    state: resized\n    size: 40G\n\
                - name: again\n  ferrox.proxmox.proxmox_disk:\n    vmid: 100\n    disk: scsi0\n    state: resized\n    size: 40G\n";
    assert_parity(play, &["resize", "again"]);
}

#[test]
fn kvm_clone_then_disk_and_nic_changes() {
    let play = with(
        "- name: clone\n  ferrox.proxmox.proxmox_kvm:\n    clone: base-debian13\n    name: new01\n    full: true\n\
         - name: resize\n  ferrox.proxmox.proxmox_disk:\n    name: new01\n    disk: scsi0\n    state: resized\n    size: 10G\n\
         - name: nic\n  ferrox.proxmox.proxmox_nic:\n    name: new01\n    interface: net0\n    bridge: vmbr1\n\
         - name: start\n  ferrox.proxmox.proxmox_kvm:\n    name: new01\n    state: started\n",
        INFO_NEW,
    );
    assert_parity(&play, &["clone", "resize", "nic", "start", "info"]);
}

#[test]
fn nic_add_change_bridge_absent() {
    let play = with(
        "- name: add\n  ferrox.proxmox.proxmox_nic:\n    vmid: 100\n    interface: net1\n    bridge: vmbr1\n    tag: 20\n\
         - name: bridge\n  ferrox.proxmox.proxmox_nic:\n    vmid: 100\n    interface: net0\n    bridge: vmbr1\n\
         - name: mtu\n  ferrox.proxmox.proxmox_nic:\n    vmid: 100\n    interface: net1\n    mtu: 1400\n    firewall: true\n\
         - name: gone\n  ferrox.proxmox.proxmox_nic:\n    vmid: 100\n    interface: net0\n    state: absent\n",
        INFO_WEB,
    );
    assert_parity(&play, &["add", "bridge", "mtu", "gone", "info"]);
}

#[test]
fn nic_absent_then_disk_absent_boot_order() {
    let play = with(
        "- name: nic\n  ferrox.proxmox.proxmox_nic:\n    vmid: 100\n    interface: net0\n    state: absent\n\
         - name: boot\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    boot: order=scsi0;ide2\n",
        INFO_WEB,
    );
    assert_parity(&play, &["nic", "boot", "info"]);
}

#[test]
fn nic_on_a_vm_created_earlier() {
    let play = with(
        "- name: create\n  ferrox.proxmox.proxmox_kvm:\n    name: new01\n    node: pve1\n    net:\n      net0: virtio,bridge=vmbr0\n\
         - name: nic\n  ferrox.proxmox.proxmox_nic:\n    name: new01\n    interface: net0\n    bridge: vmbr1\n    model: e1000\n",
        INFO_NEW,
    );
    assert_parity(&play, &["create", "nic", "info"]);
}
