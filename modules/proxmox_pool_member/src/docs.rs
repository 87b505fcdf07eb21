//! The prose of the module's documentation (options are described in `spec()`).

pub(crate) fn description() -> Vec<String> {
    vec![
        "Add VMs and storages to a Proxmox VE resource pool, or remove them.".into(),
        "Option-compatible with both shapes of C(community.proxmox.proxmox_pool_member): 1.6's O(member) and O(type), and 2.0's O(members) and O(exclusive); see the notes for where it differs.".into(),
    ]
}

pub(crate) fn notes() -> Vec<String> {
    vec![
        "A task gives either O(member) (with O(type)) or O(members), never both; the result has 1.6's keys (RV(member)) or 2.0's (RV(members)) accordingly.".into(),
        "Unlike community.proxmox 2.0, a VM already in the pool is no change (2.0.0 added it again and failed with Proxmox VE's C(VM N is already a pool member)); unlike 1.6.0, a storage can be added.".into(),
        "A VM in another pool fails before any write, naming that pool and O(allow_move); with O(allow_move=true) it is moved (C(allow-move), Proxmox VE 8.0.6 and later).".into(),
        "A VMID or storage that does not exist fails before any write (Proxmox VE itself would add it). A VM name must match exactly one guest.".into(),
        "A nested pool (V(parent/child), Proxmox VE 8.1 and later) is named by C(/pools?poolid=); any other pool by C(/pools/{poolid}), which every Proxmox VE release serves, as community.proxmox 1.6 did (2.0 fails on clusters older than 8.1).".into(),
        "In check mode a VM an earlier task of the same check run plans (a create) can be added, by VMID or name; later tasks see it in the pool.".into(),
        "Privileges (as Proxmox VE checks them): C(Pool.Allocate) on V(/pool/<poolid>); for each VM added or removed C(Permissions.Modify) or C(VM.Allocate) on V(/vms/<vmid>), and C(Pool.Allocate) on the pool a moved VM leaves; for each storage C(Permissions.Modify) or C(Datastore.Allocate) on V(/storage/<id>). A task the caller would be refused fails before any write, check mode included.".into(),
        "Requests made: C(GET /cluster/resources), one pool read; a change adds one C(PUT) to add members and one to remove them.".into(),
    ]
}

pub(crate) const EXAMPLES: &str = r#"
- name: Add a VM to a pool (community.proxmox 1.6's shape)
  ferrox.proxmox.proxmox_pool_member:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
    poolid: prod
    member: web01

- name: Add a storage to a pool
  ferrox.proxmox.proxmox_pool_member:
    poolid: prod
    member: vmdata
    type: storage

- name: Pool members, 2.0's shape, moving VM 101 out of another pool
  ferrox.proxmox.proxmox_pool_member:
    poolid: prod
    members:
      - vm: 101
      - storage: vmdata
    allow_move: true

- name: The pool holds exactly these members
  ferrox.proxmox.proxmox_pool_member:
    poolid: prod
    members:
      - vm: web01
    exclusive: true

- name: Remove a VM from a pool
  ferrox.proxmox.proxmox_pool_member:
    poolid: prod
    member: 101
    state: absent
"#;

pub(crate) const RETURN: &str = r#"
poolid:
  description: The pool ID.
  returned: success
  type: str
  sample: prod
member:
  description: The member as given (with O(member)).
  returned: success, with O(member)
  type: str
  sample: "101"
members:
  description: The pool's members after the task (in check mode, as predicted), VMs first (with O(members)).
  returned: success, with O(members)
  type: list
  elements: dict
  sample: [{"vm": "101"}, {"storage": "vmdata"}]
changes:
  description: What the task changed (or would change), in words; empty when nothing changes.
  returned: always
  type: list
  elements: str
  sample: ["add VM 101", "move VM 102 from pool dev"]
msg:
  description: What the task did.
  returned: always
  type: str
  sample: "New member 101 added to the pool prod"
"#;
