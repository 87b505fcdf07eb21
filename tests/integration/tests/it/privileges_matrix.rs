//! For every privilege the modules can need (read from the mapping the pre-write check
//! uses), a token lacking just that one: what each task's check run predicts PVE will
//! refuse is what PVE then refuses in the real run. The real run is made with the
//! prediction out of the way (`GET /access/permissions` unanswered, so the binaries go
//! on to write), so the refusal compared is the simulator's, not our own. A token with
//! every privilege is refused nothing, and a token of root (privilege separated) is
//! refused exactly the root-only keys, predicted and real alike.
//!
//! The binaries are run directly, one thread per token: the check is in the binary,
//! and the plan's record of a refusal is covered end to end by `privileges.rs`.

use std::collections::BTreeMap;
use std::path::Path;

use ferrox_integration::{module_command, Env};
use pvesim::state::{AclDef, TokenDef, UserDef};
use regex::Regex;
use serde_json::{json, Value};

const USER: &str = "matrix@pve";
/// The user the ACL tasks hand a role to (not the tokens' own user: an entry on a VM's
/// path would replace the role the user holds there from `/`).
const GRANTEE: &str = "grantee@pve";
const SECRET: &str = "8d2f4b6a-1c3e-4f5a-9b7d-0e2c4a6b8d1f";
/// What every token may read (the tasks look before they write; not what is tested).
const READS: &[&str] = &["VM.Audit", "Datastore.Audit", "Pool.Audit", "SDN.Audit", "Sys.Audit"];

/// One token of the matrix: the privilege it lacks (`None`: it has them all).
struct Token {
    id: String,
    user: &'static str,
    lacks: Option<&'static str>,
    /// Its VMs: `base` (stopped, local-lvm disk, vmbr0 NIC), `base + 1` (on vmdata, to be
    /// migrated and removed), `base + 2` (created), `base + 3` (cloned), `base + 4` (in no
    /// pool, added to one), `base + 5` (in pool `mp<base>`, moved to `mq<base>`); its
    /// pools `mp<base>`, `mq<base>` and `mx<base>` (empty, removed), and `MatrixGrant` of
    /// its user on `/vms/<base + 4>` (removed).
    base: u32,
}

fn tokens() -> Vec<Token> {
    let mut out = vec![Token {
        id: "all".into(),
        user: USER,
        lacks: None,
        base: 3000,
    }];
    for (i, p) in ferrox_pve_rules::privileges::table::privileges()
        .into_iter()
        .enumerate()
    {
        out.push(Token {
            id: format!("no-{p}"),
            user: USER,
            lacks: Some(p),
            base: 3010 + 10 * i as u32,
        });
    }
    out.push(Token {
        id: "matrix".into(),
        user: "root@pam",
        lacks: None,
        base: 2900,
    });
    out
}

fn guest(vmid: u32, storage: &str, n: usize) -> Value {
    let disk = if storage == "vmdata" {
        format!("vmdata:{vmid}/vm-{vmid}-disk-0.qcow2,size=1G")
    } else {
        format!("{storage}:vm-{vmid}-disk-0,size=1G")
    };
    json!({"vmid": vmid, "node": "pve1", "type": "qemu", "running": false, "config": {
        "name": format!("m{vmid}"), "memory": "512", "cores": 1, "scsihw": "virtio-scsi-single",
        "scsi0": disk, "net0": format!("virtio=BC:24:11:{:02X}:{:02X}:01,bridge=vmbr0", n / 256, n % 256),
    }})
}

/// The default cluster, a snippet for hookscripts, and per token its role on `/` and its VMs.
fn cluster(tokens: &[Token]) -> Env {
    let mut cfg = pvesim::SimConfig {
        task_ms: 20,
        resources_lag_ms: 0,
        ..Default::default()
    };
    let mut scenario = serde_json::to_value(&cfg.scenario).unwrap();
    scenario["volumes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"storage": "local", "volname": "snippets/hook.sh", "size": "1K"}));
    for (n, t) in tokens.iter().enumerate() {
        scenario["guests"]
            .as_array_mut()
            .unwrap()
            .push(guest(t.base, "local-lvm", 2 * n));
        scenario["guests"]
            .as_array_mut()
            .unwrap()
            .push(guest(t.base + 1, "vmdata", 2 * n + 1));
        for (vmid, n) in [(t.base + 4, 1000 + 2 * n), (t.base + 5, 1001 + 2 * n)] {
            scenario["guests"]
                .as_array_mut()
                .unwrap()
                .push(guest(vmid, "local-lvm", n));
        }
        let b = t.base;
        scenario["pools"].as_array_mut().unwrap().extend([
            json!({"poolid": format!("mp{b}"), "vms": [b + 5]}),
            json!({"poolid": format!("mq{b}")}),
            json!({"poolid": format!("mx{b}")}),
        ]);
        // An ISO each token's proxmox_template removes.
        scenario["volumes"].as_array_mut().unwrap().push(
            json!({"storage": "local", "node": "pve1", "volname": format!("iso/m{}-old.iso", t.base), "size": "1M"}),
        );
    }
    cfg.scenario = pvesim::scenario::Scenario::from_json(&scenario.to_string()).unwrap();
    let every: Vec<String> = READS
        .iter()
        .copied()
        .chain(ferrox_pve_rules::privileges::table::privileges())
        .map(str::to_string)
        .collect();
    cfg.scenario.roles.insert("MatrixAll".into(), every.clone());
    // The role the ACL tasks hand out: one every token holds, so only the path's own
    // check (`Permissions.Modify` or the allocate privilege) can refuse it.
    cfg.scenario.roles.insert("MatrixGrant".into(), vec!["VM.Audit".into()]);
    for userid in [USER, GRANTEE] {
        cfg.scenario.users.push(UserDef {
            userid: userid.into(),
            password: None,
            enable: true,
            totp_secret: None,
            tokens: vec![],
        });
    }
    let acl = |ugid: &str, role: &str| AclDef {
        path: "/".into(),
        ugid: ugid.into(),
        roles: vec![role.into()],
        propagate: true,
    };
    cfg.scenario.acls.push(acl(USER, "MatrixAll"));
    for t in tokens {
        let user = cfg.scenario.users.iter_mut().find(|u| u.userid == t.user).unwrap();
        user.tokens.push(TokenDef {
            id: t.id.clone(),
            secret: SECRET.into(),
            privsep: true,
        });
        let role = format!("Matrix-{}", t.id);
        cfg.scenario.roles.insert(
            role.clone(),
            every.iter().filter(|p| Some(p.as_str()) != t.lacks).cloned().collect(),
        );
        cfg.scenario.acls.push(acl(&format!("{}!{}", t.user, t.id), &role));
        cfg.scenario.acls.push(AclDef {
            path: format!("/vms/{}", t.base + 4),
            ugid: GRANTEE.into(),
            roles: vec!["MatrixGrant".into()],
            propagate: true,
        });
    }
    Env::start_with(cfg)
}

/// The tasks a token runs (module, name, arguments): together they need every privilege
/// of the mapping; the root-only keys, last, only for the tokens lacking nothing.
fn tasks(t: &Token) -> Vec<(&'static str, &'static str, Value)> {
    let b = t.base;
    let mut tasks = vec![
        (
            "proxmox_kvm",
            "create",
            json!({
                "node": "pve1", "vmid": b + 2, "name": format!("m{}", b + 2), "pool": "prod", "ha_managed": true, "cores": 2, "memory": 1024, "vga": "std",
                "onboot": true, "startup": "order=1", "scsi": {"scsi0": "local-lvm:1"}, "ciuser": "admin",
                "ide": {"ide2": "isos:iso/debian-13-netinst.iso,media=cdrom", "ide0": "local-lvm:cloudinit"},
                "net": {"net0": "virtio,bridge=vmbr0,tag=20"}, "hostpci": {"hostpci0": "mapping=gpu"},
            }),
        ),
        (
            "proxmox_kvm",
            "clone",
            json!({"node": "pve1", "vmid": 9000, "clone": "base-debian13", "newid": b + 3, "name": format!("m{}", b + 3), "full": true, "storage": "local-lvm"}),
        ),
        (
            "proxmox_kvm",
            "migrate",
            json!({"vmid": b + 1, "node": "pve2", "migrate": true}),
        ),
        ("proxmox_kvm", "start", json!({"vmid": b, "state": "started"})),
        (
            "proxmox_disk",
            "disk",
            json!({"vmid": b, "disk": "scsi1", "storage": "vmdata", "size": 1, "state": "present"}),
        ),
        (
            "proxmox_disk",
            "resize",
            json!({"vmid": b, "disk": "scsi0", "size": "2G", "state": "resized"}),
        ),
        (
            "proxmox_disk",
            "cdrom",
            json!({"vmid": b, "disk": "ide2", "media": "cdrom", "iso_image": "isos:iso/debian-13-netinst.iso", "state": "present"}),
        ),
        (
            "proxmox_kvm",
            "cloudinit",
            json!({"vmid": b, "update": true, "ide": {"ide0": "local-lvm:cloudinit"}}),
        ),
        (
            "proxmox_nic",
            "nic",
            json!({"vmid": b, "interface": "net1", "bridge": "vmbr1"}),
        ),
        (
            "proxmox_snap",
            "snapshot",
            json!({"vmid": b, "snapname": "matrix", "retention": 1}),
        ),
        (
            "proxmox_kvm",
            "pool",
            json!({"vmid": b, "update": true, "pool": "prod"}),
        ),
        (
            "proxmox_kvm",
            "remove",
            json!({"vmid": b + 1, "state": "absent", "force": true}),
        ),
        (
            "proxmox_template",
            "upload",
            json!({"node": "pve1", "storage": "local", "content_type": "iso", "src": upload_file(b)}),
        ),
        (
            "proxmox_template",
            "file removal",
            json!({"node": "pve1", "storage": "local", "content_type": "iso", "template": format!("m{b}-old.iso"), "state": "absent"}),
        ),
        (
            "proxmox_access_acl",
            "acl grant",
            json!({"path": format!("/vms/{b}"), "type": "user", "ugid": GRANTEE, "roleid": "MatrixGrant"}),
        ),
        (
            "proxmox_access_acl",
            "acl removal",
            json!({"path": format!("/vms/{}", b + 4), "type": "user", "ugid": GRANTEE, "roleid": "MatrixGrant", "state": "absent"}),
        ),
        (
            "proxmox_pool",
            "pool create",
            json!({"poolid": format!("mn{b}"), "comment": "new"}),
        ),
        (
            "proxmox_pool",
            "pool comment",
            json!({"poolid": format!("mp{b}"), "comment": "described"}),
        ),
        (
            "proxmox_pool",
            "pool removal",
            json!({"poolid": format!("mx{b}"), "state": "absent"}),
        ),
        (
            "proxmox_pool_member",
            "pool member",
            json!({"poolid": format!("mp{b}"), "member": b + 4}),
        ),
        (
            "proxmox_pool_member",
            "pool move",
            json!({"poolid": format!("mq{b}"), "members": [{"vm": b + 5}], "allow_move": true}),
        ),
        (
            "proxmox_pool_member",
            "pool storage",
            json!({"poolid": format!("mp{b}"), "member": "local", "type": "storage"}),
        ),
    ];
    if t.lacks.is_some() {
        return tasks;
    }
    tasks.extend([
        (
            "proxmox_kvm",
            "hookscript",
            json!({"vmid": b, "update": true, "hookscript": "local:snippets/hook.sh"}),
        ),
        (
            "proxmox_kvm",
            "hostpci",
            json!({"vmid": b, "update": true, "hostpci": {"hostpci2": "0000:01:00.0"}}),
        ),
        (
            "proxmox_kvm",
            "args",
            json!({"vmid": b, "update": true, "args": "-no-reboot"}),
        ),
    ]);
    tasks
}

/// A small ISO for the token's upload (`m<base>.iso`), written once.
fn upload_file(base: u32) -> String {
    let path = std::env::temp_dir()
        .join(format!("ferrox-matrix-{}-{base}", std::process::id()))
        .join(format!("m{base}.iso"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, vec![0u8; 4096]).unwrap();
    path.display().to_string()
}

/// How a task ended, in terms both runs share.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Done,
    /// Refused for lack of `privilege` on `path` (`root@pam` and the key for root-only keys).
    Refused {
        privilege: String,
        path: String,
    },
    /// Refused without naming what is missing: PVE's answer when an endpoint's either-or
    /// permission rule fails (clone: `VM.Allocate` on the new VM or on its pool).
    RefusedUnnamed,
    Failed(String),
}

/// The refusal in a task's message: our prediction's wording, PVE's, or 1.6's own check.
fn outcome(result: &Value) -> Outcome {
    if result["failed"] != json!(true) {
        return Outcome::Done;
    }
    let msg = result["msg"].as_str().unwrap_or_default();
    let patterns = [
        (r"needs (\S+(?: or \S+)*) on (/\S*), which", false),
        (r"Permission check failed \((/[^,]*), ([^)]+)\)", true),
        (r"only root@pam may set (\S+) ", false),
        (r"only root can set '([^']+)' config", false),
        (r"(\w+) parameter require root@pam user", false),
    ];
    for (i, (re, path_first)) in patterns.iter().enumerate() {
        let Some(c) = Regex::new(re).unwrap().captures(msg) else {
            continue;
        };
        if i >= 2 {
            return Outcome::Refused {
                privilege: "root@pam".into(),
                path: c[1].to_string(),
            };
        }
        let (privilege, path) = if *path_first { (&c[2], &c[1]) } else { (&c[1], &c[2]) };
        return Outcome::Refused {
            privilege: privilege.replace(" or ", "|"),
            path: path.to_string(),
        };
    }
    if msg.contains("Permission check failed - ") {
        return Outcome::RefusedUnnamed;
    }
    Outcome::Failed(msg.to_string())
}

/// Whether a prediction matches the real run (a refusal PVE words without the privilege
/// and path matches any predicted refusal).
fn agrees(predicted: &Outcome, real: &Outcome) -> bool {
    predicted == real || (matches!(predicted, Outcome::Refused { .. }) && *real == Outcome::RefusedUnnamed)
}

/// Runs one module binary as ansible-core would, and returns its result.
fn run_binary(dir: &Path, module: &str, args: &Value) -> Value {
    let file = dir.join(format!("args-{}", std::process::id() as u64 * 1000 + rand_suffix()));
    std::fs::write(&file, args.to_string()).unwrap();
    let out = module_command(module)
        .arg(&file)
        .env_clear()
        .output()
        .expect("run the module binary");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{module}: not one JSON result ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::SeqCst)
}

/// Every token's tasks, in order, one thread per token: (token, task) → outcome.
fn run_all(env: &Env, tokens: &[Token], check: bool) -> BTreeMap<(String, &'static str), (Outcome, Value)> {
    let dir = tempfile::tempdir().unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = tokens
            .iter()
            .map(|t| {
                let dir = dir.path();
                s.spawn(move || {
                    let mut auth = env.auth();
                    auth["api_user"] = json!(t.user);
                    auth["api_token_id"] = json!(t.id);
                    auth["api_token_secret"] = json!(SECRET);
                    let mut out = Vec::new();
                    for (module, name, args) in tasks(t) {
                        let mut full = auth.clone();
                        full.as_object_mut().unwrap().extend(args.as_object().unwrap().clone());
                        full["_ansible_module_name"] = json!(module);
                        full["_ansible_check_mode"] = json!(check);
                        let result = run_binary(dir, module, &full);
                        out.push(((format!("{}!{}", t.user, t.id), name), (outcome(&result), result)));
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

/// Every module with a row in the least-privilege table has a task in the matrix.
#[test]
fn every_writing_module_of_the_table_is_in_the_matrix() {
    let tokens = tokens();
    let run: std::collections::BTreeSet<&str> = tasks(&tokens[0]).iter().map(|(m, _, _)| *m).collect();
    let table: std::collections::BTreeSet<&str> = ferrox_pve_rules::privileges::table::operations()
        .iter()
        .map(|o| o.module)
        .collect();
    let missing: Vec<&&str> = table.difference(&run).collect();
    assert!(missing.is_empty(), "no matrix task for {missing:?}");
}

#[test]
fn each_missing_privilege_is_predicted_as_pve_then_refuses_it() {
    let tokens = tokens();
    let env = cluster(&tokens);
    let predicted = run_all(&env, &tokens, true);
    // The real run without the prediction: every write goes to PVE, which refuses or not.
    env.fault(json!({"method": "GET", "path_regex": "^/api2/json/access/permissions", "status": 501, "message": "Method 'GET /access/permissions' not implemented"}));
    let real = run_all(&env, &tokens, false);

    let mut mismatches = Vec::new();
    for (key, (p, p_result)) in &predicted {
        let (r, r_result) = &real[key];
        if !agrees(p, r) {
            mismatches.push(format!(
                "{key:?}:\n  predicted {p:?}  ({})\n  real      {r:?}  ({})",
                p_result["msg"], r_result["msg"]
            ));
        }
        let msg = r_result["msg"].as_str().unwrap_or_default();
        if msg.contains("does not have") || msg.contains("only root@pam may set") {
            mismatches.push(format!(
                "{key:?}: the real run was refused by the prediction, not by PVE: {msg}"
            ));
        }
        if let Outcome::Failed(m) = p {
            mismatches.push(format!("{key:?}: failed for another reason than a privilege: {m}"));
        }
        if p == &Outcome::Done && p_result["changed"] != json!(true) {
            mismatches.push(format!(
                "{key:?}: a check run that plans nothing tests nothing: {p_result}"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} predictions differ:\n{}",
        mismatches.len(),
        predicted.len(),
        mismatches.join("\n")
    );

    let root_only = ["args", "hookscript", "hostpci"];
    for t in &tokens {
        let who = format!("{}!{}", t.user, t.id);
        let refused: Vec<(&str, &Outcome)> = predicted
            .iter()
            .filter(|((w, _), (o, _))| *w == who && matches!(o, Outcome::Refused { .. }))
            .map(|((_, n), (o, _))| (*n, o))
            .collect();
        let names: Vec<&str> = refused.iter().map(|(n, _)| *n).collect();
        match t.lacks {
            None => assert_eq!(
                names, root_only,
                "{who} is refused only the root-only keys: {refused:?}"
            ),
            Some(p) => {
                let all: Vec<_> = predicted
                    .iter()
                    .filter(|((w, _), _)| *w == who)
                    .map(|((_, n), (o, r))| format!("{n}: {o:?} {}", r["msg"]))
                    .collect();
                assert!(
                    !refused.is_empty(),
                    "no task needed {p}: the matrix does not cover it\n{}",
                    all.join("\n")
                );
                for (n, o) in &refused {
                    if let Outcome::Refused { privilege, .. } = o {
                        // An any-of check names its alternatives (`Permissions.Modify|VM.Allocate`
                        // of a pool update); the matrix grants none but the one tested.
                        assert!(
                            privilege.split('|').any(|alt| alt == p),
                            "{who} {n}: refused for {privilege}, lacking only {p}"
                        );
                    }
                }
            }
        }
    }
}
