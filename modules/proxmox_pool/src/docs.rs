//! The prose of the module's documentation (options are described in `spec()`).

pub(crate) fn description() -> Vec<String> {
    vec![
        "Create, describe or delete a resource pool of a Proxmox VE cluster.".into(),
        "For pool members see M(ferrox.proxmox.proxmox_pool_member).".into(),
        "Option-compatible with C(community.proxmox.proxmox_pool); see the notes for where it differs.".into(),
    ]
}

pub(crate) fn notes() -> Vec<String> {
    vec![
        "Unlike community.proxmox 1.6, O(comment) is set on an existing pool too.".into(),
        "A pool with members or child pools is not deleted: the task fails before any write and names them (community.proxmox's check did not see child pools).".into(),
        "A nested pool (V(parent/child), Proxmox VE 8.1 and later) is named by C(/pools?poolid=); any other pool by C(/pools/{poolid}), which every Proxmox VE release serves.".into(),
        "Privileges (as Proxmox VE checks them): C(Pool.Allocate) on V(/pool/<poolid>) to create, describe or delete the pool. A task the caller would be refused fails before any write, check mode included.".into(),
        "In check mode, later tasks of the same check run see the pool as this task leaves it (made, described or removed).".into(),
        "Requests made: one pool read (a deletion also lists the pools, for child pools); a change adds one write.".into(),
    ]
}

pub(crate) const EXAMPLES: &str = r#"
- name: Create a pool
  ferrox.proxmox.proxmox_pool:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
    poolid: prod
    comment: Production VMs

- name: Delete a pool (it must be empty)
  ferrox.proxmox.proxmox_pool:
    poolid: prod
    state: absent
"#;

pub(crate) const RETURN: &str = r#"
poolid:
  description: The pool ID.
  returned: success
  type: str
  sample: prod
changes:
  description: What the task changed (or would change), in words; empty when nothing changes.
  returned: always
  type: list
  elements: str
  sample: ["create pool prod"]
msg:
  description: A short message on what the module did.
  returned: always
  type: str
  sample: "Pool prod successfully created"
"#;
