# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation and argument spec only: the action plugin plugins/action/proxmox_snap_info.py runs
# the module binary, plugins/modules/__bin/<platform>/ferrox, for the task's target platform.

from __future__ import annotations

DOCUMENTATION = r"""
module: proxmox_snap_info
short_description: List the snapshots of a QEMU VM or LXC container in Proxmox VE
version_added: "0.2.0"
description:
  - List the snapshots of a QEMU VM or an LXC container, or return one of them.
  - Option- and result-compatible with C(community.proxmox.proxmox_snap_info).
author:
  - ferrox.proxmox contributors (!UNKNOWN)
options:
  hostname:
    description:
      - The name of the guest. Used only when O(vmid) is not given; must match exactly one QEMU VM.
    type: str
  snapname:
    description:
      - Return only this snapshot, as RV(snapshot).
    type: str
  vmid:
    description:
      - The VMID of the QEMU VM or LXC container. Takes precedence over O(hostname).
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
    details: The module only reads, so check mode runs it normally (the list includes what earlier check-mode tasks of the run would take or remove).
  diff_mode:
    support: none
    details: The module changes nothing, so there is nothing to diff.
  action_group:
    description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - ferrox.proxmox.proxmox
notes:
  - RV(snapshots) is Proxmox VE's list as it returns it, ending with its C(current) entry (the VM as it is now, with its C(parent)); a snapshot a task is
    making or removing carries C(snapstate).
  - "A name O(snapname) does not find is no failure: RV(snapshots) is empty and the message says so, as in community.proxmox."
  - Unlike community.proxmox, O(vmid) or O(hostname) is required; O(hostname) matches QEMU VMs only (a container is found by O(vmid)).
  - "Requests made: one C(GET /cluster/resources) (by name through the run's name index, one C(GET .../status/current) instead) and one snapshot list."
  - "A guest looked up by O(hostname) alone (no O(vmid)) that an earlier task of the same C(ansible-playbook) run listed is found through the run's name index:
    one C(GET /nodes/{node}/{type}/{vmid}/status/current) confirms it (its name, its node) instead of a C(GET /cluster/resources) of the whole cluster. A guest
    renamed, moved or removed since, a name the index lacks (or, for one VM, holds twice), and an index older than its maximum age (60 seconds;
    C(FERROX_NAME_INDEX_MAX_AGE) in the controller's environment sets it, V(0) turns the index off) are looked up in a fresh listing; the listings of every
    module with this note refresh the index. Within that age a guest another tool gave the same name is not seen; creates, clones, migrations, removals and
    pool moves always list."
seealso:
  - module: ferrox.proxmox.proxmox_snap
"""

EXAMPLES = r"""
- name: List the snapshots of a VM
  ferrox.proxmox.proxmox_snap_info:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
    vmid: 100
  register: snaps

- name: Fail unless the pre-upgrade snapshot exists
  ferrox.proxmox.proxmox_snap_info:
    hostname: web01
    snapname: pre-upgrade
  register: pre
  failed_when: pre.snapshot is not defined
"""

RETURN = r"""
snapshot:
  description: The snapshot O(snapname) names (Proxmox VE's list entry).
  returned: when O(snapname) is given and the snapshot exists
  type: dict
  sample: {"name": "pre-upgrade", "description": "", "snaptime": 1767225600, "vmstate": 0, "parent": "nightly"}
snapshots:
  description: The snapshots, Proxmox VE's list entries, ending with C(current); empty when O(snapname) finds none.
  returned: when O(snapname) is not given, or finds nothing
  type: list
  elements: dict
  sample:
    - {"name": "pre-upgrade", "description": "", "snaptime": 1767225600, "vmstate": 0}
    - {"name": "current", "description": "You are here!", "parent": "pre-upgrade", "running": 1}
msg:
  description: Empty, or C(Snapshot 'NAME' not found).
  returned: always
  type: str
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
    'hostname': {'type': 'str'},
    'vmid': {'type': 'int'},
    'snapname': {'type': 'str'},
}

NOT_THE_MODULE = (
    'plugins/modules/proxmox_snap_info.py holds only the documentation and argument spec of ferrox.proxmox.proxmox_snap_info; the module is a '
    'binary, run by the action plugin ferrox.proxmox.proxmox_snap_info. Something ran this file instead: call the module by its name '
    '(ferrox.proxmox.proxmox_snap_info) and do not replace its action plugin.'
)


def main():
    # AnsibleModule is looked up when called: the argument checks replace it to read the spec.
    module = basic.AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, required_one_of=[['hostname', 'vmid']])
    module.fail_json(msg=NOT_THE_MODULE)


if __name__ == '__main__':
    main()
