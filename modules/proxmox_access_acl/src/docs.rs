//! The prose of the module's documentation (options are described in `spec()`).

pub(crate) fn description() -> Vec<String> {
    vec![
        "Give a user, group or API token a role on an ACL path of a Proxmox VE cluster, or remove entries of a path (C(PUT /access/acl)).".into(),
        "Option-compatible with C(community.proxmox.proxmox_access_acl); see the notes for where it differs.".into(),
    ]
}

pub(crate) fn notes() -> Vec<String> {
    vec![
        "Unlike community.proxmox (which has no check mode: C(--check) skips its task), check mode reads the path's entries and reports what a real run would change; later tasks of the same check run see the entries it plans, and C(--diff) shows the path's entries before and after.".into(),
        "Unlike community.proxmox 1.6, O(propagate) converges both ways: an entry with the other O(propagate) is changed (1.6 compared it only when true, so V(false) never replaced a propagating entry).".into(),
        "Unlike community.proxmox 1.6, O(state=absent) with only O(path) removes every entry of the path, as its documentation says (1.6 removed only the propagating ones).".into(),
        "Unlike community.proxmox, RV(old_acls) and RV(new_acls) list only the entries of the task's path, not every entry the caller may see (which put other tenants' grants into logs).".into(),
        "Proxmox VE checks a V(/vms/<vmid>) path against a pattern and never looks the VM up: the entry can be set right after the VM's create task, with no pause.".into(),
        "Privileges (as Proxmox VE checks them): C(Permissions.Modify) on the path, or below V(/vms) C(VM.Allocate), below V(/storage) C(Datastore.Allocate), below V(/pool) C(Pool.Allocate); without C(Permissions.Modify) the caller may only hand out (or take away) a role whose every privilege it holds on the path itself (propagating, for a propagating entry), and never V(NoAccess). A task the caller would be refused fails before any write, check mode included.".into(),
        "A user, group or token that does not exist fails before any write with Proxmox VE's words when the caller may see every user (C(Sys.Audit) or C(User.Modify) on V(/access/groups)); otherwise Proxmox VE refuses it and nothing changes.".into(),
        "Requests made: one C(GET /access/acl) when nothing changes; a change adds C(GET /access/roles), the user or group listing (see above), one C(PUT /access/acl) per user, group or token, and one C(GET /access/acl) to read the result back.".into(),
    ]
}

pub(crate) const EXAMPLES: &str = r#"
- name: Give the VM's owner a role on it, right after the create (no pause needed)
  ferrox.proxmox.proxmox_access_acl:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
    state: present
    path: /vms/100
    type: user
    ugid: jdoe@ad
    roleid: PVEVMUser
    propagate: false

- name: Give a group the auditor role on a pool
  ferrox.proxmox.proxmox_access_acl:
    path: /pool/prod
    type: group
    ugid: auditors
    roleid: PVEAuditor

- name: Delete all ACEs for a given path
  ferrox.proxmox.proxmox_access_acl:
    state: absent
    path: /vms/100
"#;

pub(crate) const RETURN: &str = r#"
path:
  description: The ACL path, normalised as Proxmox VE stores it.
  returned: always
  type: str
  sample: /vms/100
old_acls:
  description:
    - The entries of the task's path before the task, as Proxmox VE lists them.
    - Unlike community.proxmox, only the task's path.
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/vms/100", "type": "user", "ugid": "jdoe@ad", "roleid": "PVEVMUser", "propagate": 1}]
new_acls:
  description:
    - The entries of the task's path after the task (in check mode, as predicted).
  returned: when changed
  type: list
  elements: dict
changes:
  description: What the task changed (or would change), in words; empty when nothing changes.
  returned: always
  type: list
  elements: str
  sample: ["grant PVEVMUser to user jdoe@ad (not propagating)"]
msg:
  description: What the task did.
  returned: always
  type: str
  sample: "ACL of /vms/100 updated: grant PVEVMUser to user jdoe@ad (not propagating)"
"#;
