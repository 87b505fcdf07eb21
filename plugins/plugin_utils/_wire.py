# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the action plugins and the module binary agree on, generated from the Rust
sources by ``cargo collection docs`` (``collection/src/wire.rs``); ``cargo collection
docs --check`` fails when this file differs. Do not edit: change the Rust constant.
"""

from __future__ import annotations

# The module binary's file name (modules/ferrox).
BINARY = 'ferrox'

# Every module the binary runs, in meta/runtime.yml's order.
MODULES = (
    'proxmox_kvm',
    'proxmox_disk',
    'proxmox_nic',
    'proxmox_vm_info',
    'proxmox_template',
    'proxmox_snap',
    'proxmox_snap_info',
    'proxmox_user_info',
    'proxmox_access_acl',
    'proxmox_pool_member',
    'proxmox_pool',
)

# The modules that look guests up by name through the run's name index.
NAME_INDEX_MODULES = ('proxmox_kvm', 'proxmox_disk', 'proxmox_nic', 'proxmox_vm_info', 'proxmox_snap', 'proxmox_snap_info')

# The platforms the tarball ships a binary for.
RELEASED_PLATFORMS = ('linux_x86_64', 'linux_aarch64', 'darwin_arm64', 'darwin_x86_64')

# Every private argument and result key starts with it.
PRIVATE_PREFIX = '_ferrox_'

# The argument naming the module the binary runs.
MODULE_ARG = '_ferrox_module'

# The argument carrying the shim's protocol version.
PROTOCOL_ARG = '_ferrox_protocol'

# The protocol version shim and binary speak.
PROTOCOL_VERSION = 1

# The argument carrying the check-mode plan.
PLAN_ARG = '_ferrox_plan'

# The result key carrying a check-mode task's planned effects.
EFFECTS_KEY = '_ferrox_plan_effects'

# The argument carrying the run's name index.
NAMES_ARG = '_ferrox_names'

# The result key carrying a fresh name index.
NAMES_KEY = '_ferrox_names'

# Seconds a name index is trusted (0: off).
MAX_AGE_ENV = 'FERROX_NAME_INDEX_MAX_AGE'

# Its default.
DEFAULT_MAX_AGE = 60.0

# The argument carrying the run's placements (proxmox_kvm's placement).
PLACEMENTS_ARG = '_ferrox_placements'

# The result key carrying the placement a task made.
PLACEMENT_KEY = '_ferrox_placement'

# The argument carrying the run's login ticket.
TICKET_ARG = '_ferrox_ticket'

# The result key carrying a ticket the task got.
TICKET_KEY = '_ferrox_ticket'

# The result key carrying the task's lines of progress, printed under -v.
PROGRESS_KEY = '_ferrox_progress'

# Seconds after which a kept ticket is renewed (0: no reuse).
RENEW_AFTER_ENV = 'FERROX_TICKET_RENEW_AFTER'

# Its default.
DEFAULT_RENEW_AFTER = 3600.0

# PVE's API port when api_port is not given.
DEFAULT_PORT = 8006

# Each connection option's environment variables, in the order the binary reads them.
ENV_FALLBACKS = {
    'api_host': ('PROXMOX_HOST',),
    'api_port': ('PROXMOX_PORT',),
    'api_user': ('PROXMOX_USER',),
    'api_password': ('PROXMOX_PASSWORD',),
    'api_token_id': ('PROXMOX_TOKEN_ID',),
    'api_token_secret': ('PROXMOX_TOKEN_SECRET',),
    'api_otp': ('PROXMOX_OTP',),
    'validate_certs': ('PROXMOX_VALIDATE_CERTS',),
    'ca_path': ('PROXMOX_CA_PATH',),
    'api_cert_fingerprint': ('PROXMOX_CERT_FINGERPRINT',),
    'api_timeout': ('PROXMOX_API_TIMEOUT',),
}
