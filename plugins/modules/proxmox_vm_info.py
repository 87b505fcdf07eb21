# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation and argument spec only: the action plugin plugins/action/proxmox_vm_info.py runs
# the module binary, plugins/modules/__bin/<platform>/ferrox, for the task's target platform.

from __future__ import annotations

DOCUMENTATION = r"""
module: proxmox_vm_info
short_description: Retrieve information about QEMU VMs and LXC containers of a Proxmox VE cluster
version_added: "0.1.0"
description:
  - List the QEMU virtual machines and LXC containers of a Proxmox VE cluster with their status, optionally filtered by node, type, VMID or name.
  - Optionally adds each guest's configuration (current or with pending changes) and its network interfaces as seen from inside the guest.
  - Option-compatible with C(community.proxmox.proxmox_vm_info); see the notes for where it differs.
author:
  - ferrox.proxmox contributors (!UNKNOWN)
options:
  config:
    description:
      - Whether to add each guest's configuration as RV(proxmox_vms[].config).
      - V(current) is the configuration in effect; V(pending) is the configuration with pending changes applied (what the guest gets at its next restart);
        V(none) adds nothing.
      - Costs one API call per guest.
    type: str
    default: none
    choices:
      - none
      - current
      - pending
  name:
    description:
      - Restrict the results to guests with exactly this name (case-sensitive).
      - Names need not be unique, so several guests can match; an unknown name gives an empty list.
    type: str
  network:
    description:
      - Whether to add each guest's network interfaces as reported from inside the guest, as RV(proxmox_vms[].network).
      - A QEMU VM needs a running QEMU guest agent. A guest that is not running, or a VM whose agent is not configured or not running, is skipped with a
        warning, as is a guest whose agent the caller may not read (Proxmox VE 9 needs C(VM.GuestAgent.Audit) on it, 8 needed C(VM.Monitor)); the warning names
        the privilege and the guest.
      - Costs one API call per running guest.
    type: bool
    default: false
  node:
    description:
      - Restrict the results to guests on this node.
      - The node must exist in the cluster, otherwise the module fails.
    type: str
  type:
    description:
      - Restrict the results to QEMU VMs (V(qemu)) or LXC containers (V(lxc)); V(all) lists both.
    type: str
    default: all
    choices:
      - all
      - qemu
      - lxc
  vmid:
    description:
      - Restrict the results to the guest with this VMID.
      - An unknown VMID gives an empty list; V(0) means no filter.
    type: int
extends_documentation_fragment:
  - ferrox.proxmox.connection
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
attributes:
  action:
    support: full
    details: The action plugin picks the binary built for the target's platform (C(uname -sm), or the controller's own platform on a local connection).
  async:
    support: full
    details: Like every binary module, C(async) needs Python on the target host for ansible-core's async wrapper.
  bypass_host_loop:
    support: none
  platform:
    support: full
    platforms: posix
    details: Binaries run on the host the task targets, usually the controller (C(delegate_to) C(localhost)) or a Proxmox VE node; the collection's README
      lists the platforms shipped.
  check_mode:
    support: full
    details: The module only reads, so check mode runs it normally.
  diff_mode:
    support: none
    details: The module changes nothing, so there is nothing to diff.
  action_group:
    description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - ferrox.proxmox.proxmox
notes:
  - "Unlike community.proxmox 1.6, an unreachable node does not fail the task: its guests are listed with the cluster's last known status (without
    RV(proxmox_vms[].config) and RV(proxmox_vms[].network)) and a warning names the node."
  - "Unlike community.proxmox 1.6, O(network=true) does not fail on a guest that is not running or a VM whose guest agent is missing or not running, or whose
    agent the caller may not read (Proxmox VE 9: C(VM.GuestAgent.Audit)); that guest gets no RV(proxmox_vms[].network) and a warning says why."
  - The results include only the guests the API user may audit (C(VM.Audit)); others are silently left out, as by the Proxmox VE API itself.
  - "Requests made: C(GET /nodes) only with O(node), one C(GET /cluster/resources) (none by name through the run's name index), one guest listing per node
    holding matching guests (C(GET .../status/current) when it holds one), and one call per guest for O(config) and for O(network) (O(network) of a running VM
    adds C(GET .../config) for its NICs' MACs unless O(config) read it; O(config=current) adds C(GET .../cloudinit) for a running VM with a cloud-init drive)."
  - "A guest looked up by O(name) alone (no O(vmid)) that an earlier task of the same C(ansible-playbook) run listed is found through the run's name index: one
    C(GET /nodes/{node}/{type}/{vmid}/status/current) confirms it (its name, its node) instead of a C(GET /cluster/resources) of the whole cluster. A guest
    renamed, moved or removed since, a name the index lacks (or, for one VM, holds twice), and an index older than its maximum age (60 seconds;
    C(FERROX_NAME_INDEX_MAX_AGE) in the controller's environment sets it, V(0) turns the index off) are looked up in a fresh listing; the listings of every
    module with this note refresh the index. Within that age a guest another tool gave the same name is not seen; creates, clones, migrations, removals and
    pool moves always list."
seealso:
  - module: ferrox.proxmox.proxmox_kvm
"""

EXAMPLES = r"""
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
"""

RETURN = r"""
proxmox_vms:
  description:
    - The matching guests, sorted by VMID.
    - Each item is the guest's record from the cluster resources (C(/cluster/resources)) overlaid with its node's guest listing; which keys are present depends
      on the guest's type and state and on the Proxmox VE version.
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
        - With O(config=current), for a running VM with a cloud-init drive, the cloud-init keys in its configuration that the drive does not hold yet (C(GET
          /nodes/<node>/qemu/<vmid>/cloudinit)), key to new value ("(delete)" for a removed key); the guest gets them when the VM next starts. Proxmox VE does
          not list a changed C(ipconfigN) there.
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
        - For QEMU VMs, the usable addresses of RV(proxmox_vms[].network) per NIC, matched to C(netN) of the VM's configuration by MAC (any case), the shape
          ferrox.proxmox.proxmox_kvm returns with O(ferrox.proxmox.proxmox_kvm#module:wait_for_ip); link-local, APIPA and loopback addresses and guest
          interfaces of no C(netN) are left out.
      returned: when O(network=true) and the VM's agent answered
      type: dict
      sample: {"net0": {"mac": "BC:24:11:12:34:56", "ipv4": ["192.0.2.10"], "ipv6": []}}
"""

from ansible.module_utils import basic
from ansible.module_utils.basic import env_fallback

ARGUMENT_SPEC = {
    'api_host': {'type': 'str', 'fallback': (env_fallback, ['PROXMOX_HOST'])},
    'api_port': {'type': 'int', 'fallback': (env_fallback, ['PROXMOX_PORT'])},
    'api_user': {'type': 'str', 'default': 'root@pam', 'fallback': (env_fallback, ['PROXMOX_USER'])},
    'api_password': {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ['PROXMOX_PASSWORD'])},
    'api_token_id': {'type': 'str', 'no_log': False, 'fallback': (env_fallback, ['PROXMOX_TOKEN_ID'])},
    'api_token_secret': {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ['PROXMOX_TOKEN_SECRET'])},
    'api_otp': {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ['PROXMOX_OTP'])},
    'validate_certs': {'type': 'bool', 'default': True, 'fallback': (env_fallback, ['PROXMOX_VALIDATE_CERTS'])},
    'ca_path': {'type': 'path', 'fallback': (env_fallback, ['PROXMOX_CA_PATH'])},
    'api_cert_fingerprint': {'type': 'str', 'fallback': (env_fallback, ['PROXMOX_CERT_FINGERPRINT'])},
    'api_timeout': {'type': 'int', 'default': 5, 'fallback': (env_fallback, ['PROXMOX_API_TIMEOUT'])},
    'node': {'type': 'str'},
    'type': {'type': 'str', 'default': 'all', 'choices': ['all', 'qemu', 'lxc']},
    'vmid': {'type': 'int'},
    'name': {'type': 'str'},
    'config': {'type': 'str', 'default': 'none', 'choices': ['none', 'current', 'pending']},
    'network': {'type': 'bool', 'default': False},
}

NOT_THE_MODULE = (
    'plugins/modules/proxmox_vm_info.py holds only the documentation and argument spec of ferrox.proxmox.proxmox_vm_info; the module is a '
    'binary, run by the action plugin ferrox.proxmox.proxmox_vm_info. Something ran this file instead: call the module by its name '
    '(ferrox.proxmox.proxmox_vm_info) and do not replace its action plugin.'
)


def main():
    # AnsibleModule is looked up when called: the argument checks replace it to read the spec.
    module = basic.AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg=NOT_THE_MODULE)


if __name__ == '__main__':
    main()
