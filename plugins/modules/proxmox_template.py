# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation and argument spec only: the action plugin plugins/action/proxmox_template.py runs
# the module binary, plugins/modules/__bin/<platform>/ferrox, for the task's target platform.

from __future__ import annotations

DOCUMENTATION = r"""
module: proxmox_template
short_description: Management of OS templates, ISO images and import images in Proxmox VE
version_added: "0.2.0"
description:
  - "Upload, download or delete a file on a Proxmox VE storage: an ISO image, an LXC container template, or a disk image or OVA to import (V(import))."
  - Option-compatible with C(community.proxmox.proxmox_template); see the notes for where it does more.
author:
  - ferrox.proxmox contributors (!UNKNOWN)
options:
  checksum:
    description:
      - The checksum the file must have; Proxmox VE computes it on the node after the upload or download and removes a file that does not match.
      - If specified, O(checksum_algorithm) must also be specified.
    type: str
  checksum_algorithm:
    description:
      - Algorithm of O(checksum). If specified, O(checksum) must also be specified.
    type: str
    choices:
      - md5
      - sha1
      - sha224
      - sha256
      - sha384
      - sha512
  content_type:
    description:
      - "Content type of the file: V(vztmpl) for LXC container templates, V(iso) for ISO disc images, V(import) for disk images (qcow2, raw, vmdk) and Open
        Virtual Appliances (OVA) that O(ferrox.proxmox.proxmox_disk#module:import_from) can import."
      - V(import) takes an OVA (C(.ova)) from Proxmox VE 8.3 and disk images (C(.qcow2), C(.raw), C(.vmdk)) from 8.4; on an older node the task fails naming
        its version. The storage's C(content) must include the type.
    type: str
    default: vztmpl
    choices:
      - vztmpl
      - iso
      - import
  force:
    description:
      - "Only with O(state=present): an existing file of that name is replaced. An upload (O(src)) overwrites it, as Proxmox VE's upload does; a download
        (O(url), an appliance template) removes it first, since Proxmox VE's C(download-url) refuses to overwrite (this needs C(Datastore.Allocate))."
      - "Without it, an existing file is left alone (V(ok)), unless O(checksum) is given and the existing file cannot have that checksum (its size differs from
        the source's): then the task fails naming both sizes and the checksum."
    type: bool
    default: false
  node:
    description:
      - The Proxmox VE node whose storage holds the file (and which downloads it for O(url)).
    type: str
  src:
    description:
      - Path of a file to upload, on the host the module runs on. The file name on the storage is the path's last component.
      - The file is streamed to Proxmox VE, never read into memory whole.
      - Exactly one of O(src) or O(url) is required for O(state=present), unless O(template) names an appliance template to download (C(pveam)).
    type: path
  state:
    description:
      - Whether the file is on the storage.
    type: str
    default: present
    choices:
      - present
      - absent
  storage:
    description:
      - The storage that holds the file.
    type: str
    default: local
  template:
    description:
      - The file name on the storage (no C(/)).
      - Required for O(state=absent) to delete a file.
      - Required for O(state=present) to download an appliance container template (C(pveam)), without O(src) and O(url).
      - "With O(url), the name the downloaded file gets (default: the URL's last path segment)."
    type: str
  timeout:
    description:
      - Seconds to wait for the upload, download or removal task to finish.
    type: int
    default: 30
  url:
    description:
      - "URL of a file the node downloads itself (C(download-url)): the file never passes through the host the module runs on."
      - Without O(template), the file name is the one Proxmox VE's C(query-url-metadata) reports, else the URL's last path segment.
      - C(query-url-metadata) is a C(HEAD) request; a URL that refuses it (a server answering 405, an object storage link signed for C(GET)) is still
        downloaded, named by O(template) or its path; check mode then warns that the size is not known before the download.
      - Exactly one of O(src) or O(url) is required for O(state=present), unless O(template) names an appliance template to download (C(pveam)).
    type: str
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
    details: Asks the node whether the URL answers, checks the storage and the privileges, and reports exactly what a real run would do, writing nothing. Later
      tasks of the same check run see the file on the storage.
  diff_mode:
    support: none
    details: The file is reported in RV(volid); there is no diff.
  action_group:
    description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - ferrox.proxmox.proxmox
notes:
  - "With O(url), the node downloads the file itself (C(download-url)): it never passes through the host the task runs on. With O(src), the file is streamed
    from disk: memory use does not grow with its size."
  - A file of that name already on the storage is left alone (V(ok)). With O(checksum), Proxmox VE verifies the checksum of the uploaded or downloaded file and
    removes it on a mismatch.
  - Proxmox VE's content listing reports no checksum of a stored file, only its size. So with O(checksum), an existing file whose size differs from the
    source's (the URL's C(Content-Length), the O(src) file's length) is refused, naming both sizes. With O(url) and an existing file of the same size, the node
    computes the file's checksum itself (C(download-url) with the checksum, which downloads nothing when the file is there) and the task fails naming both
    checksums when they differ; a check run, which starts no task, says the real run verifies it. O(force=true) replaces the file instead.
  - "Check mode asks the node about the URL (C(query-url-metadata): its name and size; a URL that refuses that C(HEAD) request gets a warning, not a failure),
    checks that the storage takes the content type and the privileges Proxmox VE will demand, and reports what a real run would do. Later ferrox.proxmox tasks
    of the same check run see the file on the storage (a disk's C(import_from), an ISO on C(ide2)), without C(check_mode_assume)."
  - "Privileges: C(Datastore.AllocateTemplate) on C(/storage/<storage>) for an upload or download; a download also needs C(Sys.Audit) and C(Sys.Modify) on
    C(/), or C(Sys.AccessNetwork) on C(/nodes/<node>); removal, and O(force=true) replacing a downloaded file, need C(Datastore.Allocate) on the storage.
    Reading the storage needs C(Datastore.Audit) or C(Datastore.AllocateSpace) there."
  - The result's RV(transfer) gives the bytes and seconds of the transfer. Ansible shows a module's output only when it ends, so progress is reported then
    (with C(-v)), not while the file moves.
  - "Requests of a download: the node's storages, C(query-url-metadata), the storage's content, C(POST download-url), the task's status until it ends, and the
    content read back."
seealso:
  - module: ferrox.proxmox.proxmox_disk
  - module: ferrox.proxmox.proxmox_kvm
"""

EXAMPLES = r"""
- name: Upload an installer ISO
  ferrox.proxmox.proxmox_template:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
    node: pve1
    storage: local
    content_type: iso
    src: /srv/isos/debian-13.1.0-amd64-netinst.iso

- name: Let the node download a cloud image to import, verified by its checksum
  ferrox.proxmox.proxmox_template:
    node: pve1
    storage: local
    content_type: import
    url: https://cloud.debian.org/images/cloud/trixie/latest/debian-13-genericcloud-amd64.qcow2
    checksum_algorithm: sha512
    checksum: "{{ debian_image_sha512 }}"

- name: Download an appliance container template from Proxmox VE's index
  ferrox.proxmox.proxmox_template:
    node: pve1
    storage: local
    content_type: vztmpl
    template: debian-12-standard_12.7-1_amd64.tar.zst

- name: Delete an ISO
  ferrox.proxmox.proxmox_template:
    node: pve1
    storage: local
    content_type: iso
    template: debian-13.1.0-amd64-netinst.iso
    state: absent
"""

RETURN = r"""
msg:
  description: What happened (community.proxmox's wording).
  returned: always
  type: str
  sample: template with volid=local:iso/debian-13.1.0-amd64-netinst.iso uploaded
volid:
  description: The file's volume id, C(storage:content/name); what C(import_from) or an C(ide2) value names.
  returned: success
  type: str
  sample: local:import/debian-13-genericcloud-amd64.qcow2
node:
  description: The node.
  returned: success
  type: str
  sample: pve1
storage:
  description: The storage.
  returned: success
  type: str
  sample: local
size:
  description: The file's size in bytes (in check mode, the source's, when it is known).
  returned: state present, success
  type: int
  sample: 347733504
checksum_verified:
  description: True when the node verified the checksum of a file already on the storage (O(url) with O(checksum)).
  returned: when such a file was verified
  type: bool
  sample: true
replaced:
  description: True when O(force=true) replaced an existing file.
  returned: when a file was replaced
  type: bool
  sample: true
transfer:
  description: The transfer, after an upload or download.
  returned: when a file was transferred
  type: dict
  contains:
    bytes:
      description: Bytes sent (upload) or stored (download).
      type: int
    seconds:
      description: Seconds from the start of the transfer to the end of Proxmox VE's task.
      type: float
    sending_seconds:
      description: Seconds the upload's request took (upload only).
      type: float
    upid:
      description: Proxmox VE's task.
      type: str
  sample: {"bytes": 347733504, "seconds": 4.2, "upid": "UPID:pve1:..."}
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
    'src': {'type': 'path'},
    'url': {'type': 'str'},
    'template': {'type': 'str'},
    'content_type': {'type': 'str', 'default': 'vztmpl', 'choices': ['vztmpl', 'iso', 'import']},
    'storage': {'type': 'str', 'default': 'local'},
    'timeout': {'type': 'int', 'default': 30},
    'force': {'type': 'bool', 'default': False},
    'state': {'type': 'str', 'default': 'present', 'choices': ['present', 'absent']},
    'checksum_algorithm': {'type': 'str', 'choices': ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512']},
    'checksum': {'type': 'str'},
}

NOT_THE_MODULE = (
    'plugins/modules/proxmox_template.py holds only the documentation and argument spec of ferrox.proxmox.proxmox_template; the module is a '
    'binary, run by the action plugin ferrox.proxmox.proxmox_template. Something ran this file instead: call the module by its name '
    '(ferrox.proxmox.proxmox_template) and do not replace its action plugin.'
)


def main():
    # AnsibleModule is looked up when called: the argument checks replace it to read the spec.
    module = basic.AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        supports_check_mode=True,
        mutually_exclusive=[['src', 'url']],
        required_together=[['checksum', 'checksum_algorithm']],
        required_if=[('state', 'absent', ['template'])],
    )
    module.fail_json(msg=NOT_THE_MODULE)


if __name__ == '__main__':
    main()
