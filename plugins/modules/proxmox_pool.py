# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation and argument spec only: the action plugin plugins/action/proxmox_pool.py runs
# the module binary, plugins/modules/__bin/<platform>/ferrox, for the task's target platform.

from __future__ import annotations

DOCUMENTATION = r"""
module: proxmox_pool
short_description: Pool management for Proxmox VE cluster
version_added: "0.2.0"
description:
  - Create, describe or delete a resource pool of a Proxmox VE cluster.
  - For pool members see M(ferrox.proxmox.proxmox_pool_member).
  - Option-compatible with C(community.proxmox.proxmox_pool); see the notes for where it differs.
author:
  - ferrox.proxmox contributors (!UNKNOWN)
options:
  comment:
    description:
      - The pool's description. Set on an existing pool too (community.proxmox 1.6 ignored it then); unset leaves it as it is. Ignored with O(state=absent).
    type: str
  poolid:
    description:
      - The pool ID; V(parent/child) for a nested pool (Proxmox VE 8.1 and later).
    type: str
    required: true
    aliases:
      - name
  state:
    description:
      - Whether the pool exists. A pool is removed only when it has no members and no child pools.
    type: str
    default: present
    choices:
      - present
      - absent
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
    details: Reads the pool and reports exactly what a real run would change, writing nothing.
  diff_mode:
    support: full
    details: Shows whether the pool exists and its comment, before and after.
  action_group:
    description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - ferrox.proxmox.proxmox
notes:
  - Unlike community.proxmox 1.6, O(comment) is set on an existing pool too.
  - "A pool with members or child pools is not deleted: the task fails before any write and names them (community.proxmox's check did not see child pools)."
  - A nested pool (V(parent/child), Proxmox VE 8.1 and later) is named by C(/pools?poolid=); any other pool by C(/pools/{poolid}), which every Proxmox VE
    release serves.
  - "Privileges (as Proxmox VE checks them): C(Pool.Allocate) on V(/pool/<poolid>) to create, describe or delete the pool. A task the caller would be refused
    fails before any write, check mode included."
  - In check mode, later tasks of the same check run see the pool as this task leaves it (made, described or removed).
  - "Requests made: one pool read (a deletion also lists the pools, for child pools); a change adds one write."
seealso:
  - module: ferrox.proxmox.proxmox_pool_member
"""

EXAMPLES = r"""
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
"""

RETURN = r"""
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
    'comment': {'type': 'str'},
    'state': {'type': 'str', 'default': 'present', 'choices': ['present', 'absent']},
}

NOT_THE_MODULE = (
    'plugins/modules/proxmox_pool.py holds only the documentation and argument spec of ferrox.proxmox.proxmox_pool; the module is a binary, run '
    'by the action plugin ferrox.proxmox.proxmox_pool. Something ran this file instead: call the module by its name '
    '(ferrox.proxmox.proxmox_pool) and do not replace its action plugin.'
)


def main():
    # AnsibleModule is looked up when called: the argument checks replace it to read the spec.
    module = basic.AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg=NOT_THE_MODULE)


if __name__ == '__main__':
    main()
