//! The prose of the module's documentation (options are described in `spec()`).

pub(crate) fn description() -> Vec<String> {
    vec![
        "List the QEMU virtual machines and LXC containers of a Proxmox VE cluster with their status, optionally filtered by node, type, VMID or name.".into(),
        "Optionally adds each guest's configuration (current or with pending changes) and its network interfaces as seen from inside the guest.".into(),
        "Option-compatible with C(community.proxmox.proxmox_vm_info); see the notes for where it differs.".into(),
    ]
}

pub(crate) fn notes() -> Vec<String> {
    vec![
        "Unlike community.proxmox 1.6, an unreachable node does not fail the task: its guests are listed with the cluster's last known status (without RV(proxmox_vms[].config) and RV(proxmox_vms[].network)) and a warning names the node.".into(),
        "Unlike community.proxmox 1.6, O(network=true) does not fail on a guest that is not running or a VM whose guest agent is missing or not running, or whose agent the caller may not read (Proxmox VE 9: C(VM.GuestAgent.Audit)); that guest gets no RV(proxmox_vms[].network) and a warning says why.".into(),
        "The results include only the guests the API user may audit (C(VM.Audit)); others are silently left out, as by the Proxmox VE API itself.".into(),
        "Requests made: C(GET /nodes) only with O(node), one C(GET /cluster/resources) (none by name through the run's name index), one guest listing per node holding matching guests (C(GET .../status/current) when it holds one), and one call per guest for O(config) and for O(network) (O(network) of a running VM adds C(GET .../config) for its NICs' MACs unless O(config) read it; O(config=current) adds C(GET .../cloudinit) for a running VM with a cloud-init drive).".into(),
        ferrox_run::name_index::doc_note("name"),
    ]
}

pub(crate) const EXAMPLES: &str = r#"
- name: List all guests of the cluster
  ferrox.proxmox.proxmox_vm_info:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
  register: guests

- name: List the QEMU VMs of one node
  ferrox.proxmox.proxmox_vm_info:
    node: pve1
    type: qemu

- name: Look up VMs by name, with their current configuration
  ferrox.proxmox.proxmox_vm_info:
    name: web01
    config: current
  register: web

- name: Show the configuration a VM gets at its next restart
  ferrox.proxmox.proxmox_vm_info:
    vmid: 100
    config: pending

- name: Collect guest IP addresses (running guests with an agent)
  ferrox.proxmox.proxmox_vm_info:
    type: qemu
    network: true
  register: net

- name: Use defaults for every module of the collection
  module_defaults:
    group/ferrox.proxmox.proxmox:
      api_host: pve1.example.org
      api_user: ansible@pve
      api_token_id: automation
      api_token_secret: "{{ vault_proxmox_token_secret }}"
      api_cert_fingerprint: "{{ pve1_fingerprint }}"
  block:
    - name: List templates
      ferrox.proxmox.proxmox_vm_info:
        type: qemu
      register: all_vms

    - name: Show their names
      ansible.builtin.debug:
        msg: "{{ all_vms.proxmox_vms | selectattr('template') | map(attribute='name') | list }}"
"#;

pub(crate) const RETURN: &str = r#"
proxmox_vms:
  description:
    - The matching guests, sorted by VMID.
    - Each item is the guest's record from the cluster resources (C(/cluster/resources)) overlaid with its node's guest listing; which keys are present depends on the guest's type and state and on the Proxmox VE version.
  returned: always
  type: list
  elements: dict
  contains:
    id:
      description: Resource id, C(<type>/<vmid>).
      returned: always
      type: str
      sample: qemu/100
    type:
      description: C(qemu) or C(lxc).
      returned: always
      type: str
      sample: qemu
    vmid:
      description: The VMID.
      returned: always
      type: int
      sample: 100
    name:
      description: The guest's name.
      returned: when known
      type: str
      sample: web01
    node:
      description: The node the guest is on.
      returned: always
      type: str
      sample: pve1
    status:
      description: The guest's state (C(running), C(stopped), ...).
      returned: always
      type: str
      sample: running
    template:
      description: Whether the guest is a template.
      returned: always
      type: bool
      sample: false
    planned:
      description:
        - V(true) for a VM that does not exist yet and that an earlier task of this C(--check) run would create
          (through the collection's action plugins, every check-mode task of a playbook run plans against the
          cluster as the earlier tasks would leave it).
        - Values Proxmox VE decides when it creates the VM (MAC addresses, volume names) read C((known after apply)) in its RV(proxmox_vms[].config).
      returned: only for such VMs, only in check mode
      type: bool
      sample: true
    cpu:
      description: CPU usage as a fraction of RV(proxmox_vms[].maxcpu).
      returned: when known
      type: float
      sample: 0.17
    cpus:
      description: Number of CPUs (from the node's listing).
      returned: when the node answered
      type: int
      sample: 2
    maxcpu:
      description: Number of CPUs.
      returned: when known
      type: int
      sample: 2
    mem:
      description: Memory in use, in bytes.
      returned: when known
      type: int
      sample: 35304543
    maxmem:
      description: Memory size, in bytes.
      returned: when known
      type: int
      sample: 4294967296
    disk:
      description: Disk space in use, in bytes (0 for QEMU VMs).
      returned: when known
      type: int
      sample: 0
    maxdisk:
      description: Size of the boot disk, in bytes.
      returned: when known
      type: int
      sample: 34359738368
    diskread:
      description: Bytes read since start.
      returned: when known
      type: int
    diskwrite:
      description: Bytes written since start.
      returned: when known
      type: int
    netin:
      description: Bytes received since start.
      returned: when known
      type: int
    netout:
      description: Bytes sent since start.
      returned: when known
      type: int
    uptime:
      description: Seconds since start.
      returned: when known
      type: int
      sample: 669
    pid:
      description: Process id of the running guest on its node.
      returned: when running and the node answered
      type: int
      sample: 4076688
    pool:
      description: Resource pool of the guest.
      returned: when in a pool
      type: str
    tags:
      description: Tags, separated by C(;).
      returned: when set
      type: str
    lock:
      description: Lock held on the guest (C(backup), C(migrate), ...).
      returned: when locked
      type: str
    hastate:
      description: HA state.
      returned: when HA-managed
      type: str
    config:
      description:
        - The guest's configuration as Proxmox VE returns it (C(GET /nodes/<node>/<type>/<vmid>/config)), with pending changes applied for O(config=pending).
      returned: when O(config) is not V(none) and the node answered
      type: dict
      sample: {"cores": 2, "memory": "2048", "net0": "virtio=BC:24:11:12:34:56,bridge=vmbr0", "scsi0": "local-lvm:vm-100-disk-0,size=32G"}
    cloudinit_pending:
      description:
        - With O(config=current), for a running VM with a cloud-init drive, the cloud-init keys in its configuration that the drive does not hold yet (C(GET /nodes/<node>/qemu/<vmid>/cloudinit)), key to new value ("(delete)" for a removed key); the guest gets them when the VM next starts. Proxmox VE does not list a changed C(ipconfigN) there.
      returned: when there are such keys
      type: dict
      sample: {"ciuser": "admin", "ipconfig1": "ip=dhcp"}
    network:
      description:
        - Network interfaces as reported from inside the guest; for QEMU VMs the guest agent's C(network-get-interfaces) result.
      returned: when O(network=true) and the guest answered
      type: list
      elements: dict
      sample:
        - name: eth0
          hardware-address: "bc:24:11:12:34:56"
          ip-addresses: [{"ip-address": "192.0.2.10", "ip-address-type": "ipv4", "prefix": 24}]
    ip_addresses:
      description:
        - For QEMU VMs, the usable addresses of RV(proxmox_vms[].network) per NIC, matched to C(netN) of the VM's configuration by MAC (any case), the shape ferrox.proxmox.proxmox_kvm returns with O(ferrox.proxmox.proxmox_kvm#module:wait_for_ip); link-local, APIPA and loopback addresses and guest interfaces of no C(netN) are left out.
      returned: when O(network=true) and the VM's agent answered
      type: dict
      sample: {"net0": {"mac": "BC:24:11:12:34:56", "ipv4": ["192.0.2.10"], "ipv6": []}}
"#;
