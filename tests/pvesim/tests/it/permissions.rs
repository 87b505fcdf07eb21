//! What PVE refuses and hides for a least-privilege token: `GET /access/permissions`,
//! per-key privilege classes, storage and bridge privileges, root-only keys, and the
//! bridges `GET /nodes/{node}/network` leaves out.

use crate::common::*;
use pvesim::state::{AclDef, TokenDef, UserDef};
use pvesim::{Scenario, SimConfig};

const LIMITED: &str = "PVEAPIToken=ops@pve!automation=ops-secret";

/// The token PVE's docs lead to: a role on `/` without storage and network privileges,
/// which are granted only on `local-lvm` and `vmbr0`.
fn least_privilege() -> SimConfig {
    let mut s = Scenario::default_cluster();
    s.users.push(UserDef {
        userid: "ops@pve".into(),
        password: None,
        enable: true,
        totp_secret: None,
        tokens: vec![TokenDef {
            id: "automation".into(),
            secret: "ops-secret".into(),
            privsep: true,
        }],
    });
    s.roles.insert(
        "VMBuilder".into(),
        [
            "VM.Allocate",
            "VM.Audit",
            "VM.Config.Disk",
            "VM.Config.Network",
            "VM.Config.CPU",
            "VM.Config.Memory",
            "VM.Config.Options",
            "VM.Config.HWType",
            "VM.PowerMgmt",
            "Sys.Audit",
            "Datastore.Audit",
        ]
        .map(String::from)
        .to_vec(),
    );
    for ugid in ["ops@pve", "ops@pve!automation"] {
        let acl = |path: &str, role: &str| AclDef {
            path: path.into(),
            ugid: ugid.into(),
            roles: vec![role.into()],
            propagate: true,
        };
        s.acls.push(acl("/", "VMBuilder"));
        s.acls.push(acl("/storage/local-lvm", "PVEDatastoreUser"));
        s.acls.push(acl("/sdn/zones/localnetwork/vmbr0", "PVESDNUser"));
    }
    SimConfig { scenario: s, ..quick() }
}

#[test]
fn access_permissions_of_a_privilege_separated_token() {
    let mut cfg = least_privilege();
    cfg.scenario.acls.push(AclDef {
        path: "/access".into(),
        ugid: "ops@pve!automation".into(),
        roles: vec!["NoAccess".into()],
        propagate: true,
    });
    let mut api = Api::start(cfg);
    api.with_auth(vec![("Authorization", LIMITED)]);
    let r = api.get("/access/permissions?path=/storage/vmdata");
    assert_eq!(r.status, 200, "{}", r.raw);
    let privs = r.data()["/storage/vmdata"].as_object().unwrap();
    assert_eq!(
        privs.get("Datastore.Audit"),
        Some(&serde_json::json!(1)),
        "propagated from / : {privs:?}"
    );
    assert!(!privs.contains_key("Datastore.AllocateSpace"));
    let r = api.get("/access/permissions?path=/storage/local-lvm");
    assert_eq!(r.data()["/storage/local-lvm"]["Datastore.AllocateSpace"], 1);
    assert!(
        r.data()["/storage/local-lvm"].get("VM.Allocate").is_none(),
        "the deeper ACL replaces the role from /"
    );
    // Without a path: the top-level paths and every ACL path.
    let all = api.get("/access/permissions");
    let tree = all.data().as_object().unwrap();
    assert!(
        tree.contains_key("/") && tree.contains_key("/sdn/zones/localnetwork/vmbr0") && tree.contains_key("/vms"),
        "{tree:?}"
    );
    assert!(
        !tree.contains_key("/access/groups") || !tree["/access/groups"].as_object().unwrap().is_empty(),
        "empty paths are left out"
    );
    // Someone else's permissions need Sys.Audit on /access.
    let r = api.get("/access/permissions?userid=ansible@pve");
    assert_eq!(
        (r.status, r.message().as_str()),
        (403, "Permission check failed (/access, Sys.Audit)\n")
    );
    let r = api.get("/access/permissions?userid=ops@pve!automation");
    assert_eq!(r.status, 200, "its own id: {}", r.raw);
}

#[test]
fn storage_bridge_and_class_checks_answer_as_pve() {
    let mut api = Api::start(least_privilege());
    api.with_auth(vec![("Authorization", LIMITED)]);
    let r = api.post(
        "/nodes/pve1/qemu",
        &[
            ("vmid", "150"),
            ("scsi0", "local-lvm:4"),
            ("net0", "virtio,bridge=vmbr0"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    api.wait_task(r.data().as_str().unwrap());
    let r = api.post("/nodes/pve1/qemu/150/config", &[("scsi1", "vmdata:4")]);
    assert_eq!(
        (r.status, r.message().as_str()),
        (
            403,
            "Permission check failed (/storage/vmdata, Datastore.AllocateSpace)\n"
        )
    );
    let r = api.post("/nodes/pve1/qemu/150/config", &[("net1", "virtio,bridge=vmbr1")]);
    assert_eq!(
        (r.status, r.message().as_str()),
        (
            403,
            "Permission check failed (/sdn/zones/localnetwork/vmbr1, SDN.Use)\n"
        )
    );
    let r = api.post("/nodes/pve1/qemu/150/config", &[("net1", "virtio,bridge=vmbr0,tag=30")]);
    assert_eq!(r.status, 200, "the bridge's ACL propagates to its VLANs: {}", r.raw);
    let r = api.post("/nodes/pve1/qemu/150/config", &[("ciuser", "debian")]);
    assert_eq!(
        r.status, 200,
        "VM.Config.Network is enough for cloud-init keys: {}",
        r.raw
    );
    let r = api.post("/nodes/pve1/qemu/150/config", &[("ide2", "none,media=cdrom")]);
    let status = api.wait_task(r.data().as_str().unwrap());
    assert_eq!(
        status["exitstatus"], "Permission check failed (/vms/150, VM.Config.CDROM)",
        "drive values are checked under the lock"
    );
    for key in ["hookscript", "args", "affinity"] {
        let value = if key == "hookscript" {
            "local:snippets/hook.sh"
        } else {
            "1"
        };
        let r = api.post("/nodes/pve1/qemu/150/config", &[(key, value)]);
        assert_eq!(
            (r.status, r.message()),
            (500, format!("only root can set '{key}' config\n")),
            "{key}"
        );
    }
    let r = api.post("/nodes/pve1/qemu/150/config", &[("hostpci0", "0000:01:00.0")]);
    assert_eq!(r.status, 200, "the raw PCI check runs in the task: {}", r.raw);
    let status = api.wait_task(r.data().as_str().unwrap());
    assert_eq!(
        status["exitstatus"],
        "only root can set 'hostpci0' config for non-mapped devices"
    );
    let r = api.post("/nodes/pve1/qemu/150/config", &[("startup", "order=1")]);
    assert_eq!(
        (r.status, r.message().as_str()),
        (403, "Permission check failed (/, Sys.Modify)\n")
    );
}

#[test]
fn network_list_hides_bridges_without_sdn_privileges() {
    let mut api = Api::start(least_privilege());
    api.with_auth(vec![("Authorization", LIMITED)]);
    let names = |api: &Api| -> Vec<String> {
        let r = api.get("/nodes/pve1/network?type=any_bridge");
        r.data()
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["iface"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&api), vec!["vmbr0"]);
    api.with_auth(vec![("Authorization", TOKEN)]);
    assert_eq!(names(&api), vec!["vmbr0", "vmbr1"]);
}
