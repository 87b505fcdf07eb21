# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The check-mode plan of one ``ansible-playbook`` run, kept on the controller.

Every check-mode task of ferrox.proxmox gets the plan (the effects the earlier check-mode
tasks of the run would have had) and returns its own effects, which are appended here.
The meaning of an effect lives in the module binaries (``common/dryrun``); this file
only stores, locks and appends.

Where and how: ``ferrox-plan.json`` in the run's directory, replaced atomically under
``ferrox-plan.lock`` (``run_dir.py``).
"""

from __future__ import annotations

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import run_dir

PLAN_FILE = 'ferrox-plan.json'
LOCK_FILE = 'ferrox-plan.lock'


def plan_path(directory=None):
    return run_dir.path(PLAN_FILE, directory)


def empty_plan():
    return {'effects': []}


def read_plan(directory=None):
    """The plan as stored, or an empty one (nothing planned yet)."""
    plan = run_dir.read_json(PLAN_FILE, directory)
    if not isinstance(plan, dict) or not isinstance(plan.get('effects'), list):
        return empty_plan()
    return plan


def write_plan(plan, directory=None):
    """Replaces the plan atomically (readers never see half a file)."""
    run_dir.write_json(PLAN_FILE, plan, directory)


def locked(directory=None):
    """Holds the plan's lock (shared by every fork of the run) for the ``with`` block; the
    name index and the ticket store write under it too."""
    return run_dir.locked(LOCK_FILE, directory)


def reserved(plan):
    """vmids the plan has taken for new VMs."""
    return {e.get('vmid') for e in plan.get('effects', []) if e.get('kind') == 'create'}


def conflicts(plan, effects):
    """vmids ``effects`` would take that the plan took meanwhile (another fork was first)."""
    return sorted(reserved({'effects': effects}) & reserved(plan))


def with_effects(plan, effects):
    return {'effects': list(plan.get('effects', [])) + list(effects)}
