# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs the proxmox_access_acl binary built for the task's target platform."""

from __future__ import annotations

from ansible_collections.ferrox.proxmox.plugins.modules.proxmox_access_acl import main as check_arguments
from ansible_collections.ferrox.proxmox.plugins.plugin_utils.binary_module import BinaryModuleAction


class ActionModule(BinaryModuleAction):
    MODULE = 'proxmox_access_acl'


def main():
    """ansible-lint's argument check (the args rule) loads the action plugin of a module
    name when there is one, and checks a task's arguments only through its main(): this
    one runs the argument spec of plugins/modules/proxmox_access_acl.py."""
    check_arguments()
