//! The prose of the module's documentation (options are described in `options.rs`).

pub(crate) fn description() -> Vec<String> {
    vec![
        "Create, converge or remove one network interface (C(netN)) of a QEMU VM.".into(),
        "Option-compatible with C(community.proxmox.proxmox_nic); see the notes for where it behaves better.".into(),
    ]
}

pub(crate) fn notes() -> Vec<String> {
    vec![
        "Options are compared parsed and normalised, not as strings: MAC case, option order, explicit defaults (C(firewall=0)) and the spelling of O(rate) (V(10) = V(10.0)) cause no change.".into(),
        "Options the task does not mention are kept, including the model and the MAC address. To remove O(tag), O(mtu), O(queues) or O(rate) give V(0); to remove O(trunks) give an empty list; V(false) turns O(firewall) and O(link_down) off.".into(),
        "The MAC address is returned as RV(mac) on every result: unchanged, changed, check mode and before deletion. In check mode a NIC that would be created without O(mac) has no MAC yet (PVE generates it), so RV(mac) is null.".into(),
        "On a running VM, Proxmox VE applies bridge, tag, trunks, firewall, rate and link_down at once; a new NIC and changes of model, MAC, queues or mtu need the C(network) hotplug feature, otherwise they wait for the next VM restart.".into(),
        "The write carries the config C(digest) read for the plan, so a concurrent change makes the task fail instead of being overwritten; rerun it to converge.".into(),
        "Requests made: one C(GET /cluster/resources) (by name through the run's name index, one C(GET .../status/current) instead), one config read, and on change one C(PUT .../config); plus one interface listing when the NIC is attached to a new bridge (to fail early on a missing bridge), and one config read when PVE generated the MAC.".into(),
        ferrox_run::name_index::doc_note("name"),
    ]
}

pub(crate) const EXAMPLES: &str = r#"
- name: Attach a virtio NIC to vmbr0 in VLAN 20
  ferrox.proxmox.proxmox_nic:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
    vmid: 100
    interface: net1
    bridge: vmbr0
    tag: 20
  register: nic

- name: Show the MAC address
  ansible.builtin.debug:
    msg: "{{ nic.mac }}"

- name: Turn the firewall on and limit the rate, keeping everything else
  ferrox.proxmox.proxmox_nic:
    name: web01
    interface: net1
    firewall: true
    rate: 12.5

- name: Remove the VLAN tag and the rate limit
  ferrox.proxmox.proxmox_nic:
    name: web01
    interface: net1
    tag: 0
    rate: 0

- name: Pass VLANs 10, 20 and 30 through
  ferrox.proxmox.proxmox_nic:
    vmid: 100
    interface: net2
    bridge: vmbr1
    trunks: [10, 20, 30]

- name: Remove the NIC
  ferrox.proxmox.proxmox_nic:
    vmid: 100
    interface: net2
    state: absent
"#;

pub(crate) const RETURN: &str = r#"
vmid:
  description: The VMID of the VM.
  returned: success
  type: int
  sample: 103
msg:
  description: What happened (community.proxmox's wording).
  returned: always
  type: str
  sample: Nic net0 unchanged on VM with vmid 103
interface:
  description: The NIC's config key.
  returned: success
  type: str
  sample: net0
mac:
  description: The NIC's MAC address (upper case). After O(state=absent), the MAC the removed NIC had. Null when there is no NIC, and in check mode for a new NIC without O(mac).
  returned: success
  type: str
  sample: BC:24:11:5E:7A:01
nic_config:
  description: The NIC's config entry after the task (in check mode, the entry that would be written). Null when there is no NIC.
  returned: success
  type: str
  sample: virtio=BC:24:11:5E:7A:01,bridge=vmbr0,firewall=1,tag=20
changes:
  description: One line per change made (or, in check mode, that would be made).
  returned: success
  type: list
  elements: str
  sample: ["tag: 10 -> 20", "firewall: unset -> 1"]
pending:
  description:
    - True when the VM is running and Proxmox VE keeps the change pending until it restarts (a new or removed NIC, or a model, MAC, queues or MTU change, on a VM without the C(network) hotplug feature). A warning says so too.
    - In check mode, predicted from the VM's hotplug setting; after a real run, read back from Proxmox VE.
  returned: success
  type: bool
  sample: false
known_after_apply:
  description:
    - In check mode, the result keys whose value only Proxmox VE decides when the change is applied (the MAC of a new NIC without O(mac)); they are null in the result, and the config values in the C(diff) and RV(nic_config) show C((known after apply)) in their place.
  returned: check mode, when such a value is part of the result
  type: list
  elements: str
  sample: ["mac"]
"#;
