# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation and argument spec only: the action plugin plugins/action/proxmox_pool_member.py runs
# the module binary, plugins/modules/__bin/<platform>/ferrox, for the task's target platform.

from __future__ import annotations

DOCUMENTATION = r"""
module: proxmox_pool_member
short_description: Add or delete members from Proxmox VE cluster pools
version_added: "0.2.0"
description:
  - Add VMs and storages to a Proxmox VE resource pool, or remove them.
  - "Option-compatible with both shapes of C(community.proxmox.proxmox_pool_member): 1.6's O(member) and O(type), and 2.0's O(members) and O(exclusive); see
    the notes for where it differs."
author:
  - ferrox.proxmox contributors (!UNKNOWN)
options:
  allow_move:
    description:
      - Whether a VM in another pool is moved into this one. Without it, such a VM fails the task before any write, naming its pool.
    type: bool
    default: false
  exclusive:
    description:
      - "With V(true), the pool's members become exactly the members given: members not given are removed."
    type: bool
    default: false
  member:
    description:
      - "One member: a storage ID with O(type=storage), else a VMID or the name of exactly one guest: community.proxmox 1.6's shape."
      - Give either O(member) or O(members), never both.
    type: str
  members:
    description:
      - "The members, each a dict with either C(vm) (a VMID or a VM name) or C(storage) (a storage ID): community.proxmox 2.0's shape."
      - Give either O(members) or O(member), never both.
    type: list
    elements: dict
    suboptions:
      storage:
        description:
          - A storage ID.
        type: str
      vm:
        description:
          - A VMID or the name of exactly one guest.
        type: str
  poolid:
    description:
      - The pool ID.
    type: str
    required: true
    aliases:
      - name
  state:
    description:
      - Whether the members are in the pool. Ignored with O(exclusive=true).
    type: str
    default: present
    choices:
      - present
      - absent
  type:
    description:
      - What O(member) names. Used only with O(member).
    type: str
    default: vm
    choices:
      - vm
      - storage
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
    details: Reads the pool and reports exactly what a real run would change, writing nothing; a VM planned by an earlier task of the check run can be a
      member, and later tasks see the members (VMs and storages) it plans into the pool or out of it.
  diff_mode:
    support: full
    details: Shows the pool's members before and after.
  action_group:
    description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - ferrox.proxmox.proxmox
notes:
  - A task gives either O(member) (with O(type)) or O(members), never both; the result has 1.6's keys (RV(member)) or 2.0's (RV(members)) accordingly.
  - Unlike community.proxmox 2.0, a VM already in the pool is no change (2.0.0 added it again and failed with Proxmox VE's C(VM N is already a pool member));
    unlike 1.6.0, a storage can be added.
  - A VM in another pool fails before any write, naming that pool and O(allow_move); with O(allow_move=true) it is moved (C(allow-move), Proxmox VE 8.0.6 and
    later).
  - A VMID or storage that does not exist fails before any write (Proxmox VE itself would add it). A VM name must match exactly one guest.
  - A nested pool (V(parent/child), Proxmox VE 8.1 and later) is named by C(/pools?poolid=); any other pool by C(/pools/{poolid}), which every Proxmox VE
    release serves, as community.proxmox 1.6 did (2.0 fails on clusters older than 8.1).
  - In check mode a VM an earlier task of the same check run plans (a create) can be added, by VMID or name; later tasks see it in the pool.
  - "Privileges (as Proxmox VE checks them): C(Pool.Allocate) on V(/pool/<poolid>); for each VM added or removed C(Permissions.Modify) or C(VM.Allocate) on
    V(/vms/<vmid>), and C(Pool.Allocate) on the pool a moved VM leaves; for each storage C(Permissions.Modify) or C(Datastore.Allocate) on V(/storage/<id>). A
    task the caller would be refused fails before any write, check mode included."
  - "Requests made: C(GET /cluster/resources), one pool read; a change adds one C(PUT) to add members and one to remove them."
seealso:
  - module: ferrox.proxmox.proxmox_pool
  - module: ferrox.proxmox.proxmox_kvm
"""

EXAMPLES = r"""
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
"""

RETURN = r"""
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
    'poolid': {'type': 'str', 'required': True, 'aliases': ['name']},
    'member': {'type': 'str'},
    'type': {'type': 'str', 'default': 'vm', 'choices': ['vm', 'storage']},
    'members': {'type': 'list', 'elements': 'dict'},
    'state': {'type': 'str', 'default': 'present', 'choices': ['present', 'absent']},
    'exclusive': {'type': 'bool', 'default': False},
    'allow_move': {'type': 'bool', 'default': False},
}

NOT_THE_MODULE = (
    'plugins/modules/proxmox_pool_member.py holds only the documentation and argument spec of ferrox.proxmox.proxmox_pool_member; the module is '
    'a binary, run by the action plugin ferrox.proxmox.proxmox_pool_member. Something ran this file instead: call the module by its name '
    '(ferrox.proxmox.proxmox_pool_member) and do not replace its action plugin.'
)


def main():
    # AnsibleModule is looked up when called: the argument checks replace it to read the spec.
    module = basic.AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        supports_check_mode=True,
        mutually_exclusive=[['member', 'members']],
        required_one_of=[['member', 'members']],
    )
    module.fail_json(msg=NOT_THE_MODULE)


if __name__ == '__main__':
    main()
