# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Test-only connection: the local connection under another name, so the action
plugins treat the target as remote and detect its platform with `uname -sm`."""

from __future__ import annotations

DOCUMENTATION = r"""
name: ferrox_remote_like
short_description: The local connection, seen by ferrox.proxmox as a remote one
description:
  - Runs commands on the controller like ansible.builtin.local, under another transport name.
author:
  - ferrox.proxmox contributors (!UNKNOWN)
"""

from ansible.plugins.connection.local import Connection as LocalConnection


class Connection(LocalConnection):
    transport = 'ferrox_remote_like'
