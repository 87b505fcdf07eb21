# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The check-mode plan of one ``ansible-playbook`` run, kept on the controller.

Every check-mode task of ferrox.proxmox gets the plan (the effects the earlier check-mode
tasks of the run would have had) and returns its own effects, which are appended here.
The meaning of an effect lives in the module binaries (``common/dryrun``); this file
only stores, locks and appends.

Where: ``plan.json`` in ansible-core's per-run local temp dir (``C.DEFAULT_LOCAL_TMP``,
``<local_tmp>/ansible-local-<pid><random>``). The main process creates it, forked
workers (2.17 and 2.19 alike) inherit its path, and ansible-core removes it when the run
ends; a run that was killed leaves it behind under a name no later run uses, so it is
never read again.

Locking: ``fcntl.flock`` on ``plan.lock`` next to it, across the forks.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile

from ansible import constants as C

PLAN_FILE = 'ferrox-plan.json'
LOCK_FILE = 'ferrox-plan.lock'


def run_dir():
    """The per-run temp dir of this ``ansible-playbook`` process."""
    return C.DEFAULT_LOCAL_TMP


def plan_path(directory=None):
    return os.path.join(directory or run_dir(), PLAN_FILE)


def empty_plan():
    return {'effects': []}


def read_plan(directory=None):
    """The plan as stored, or an empty one (nothing planned yet)."""
    try:
        with open(plan_path(directory)) as f:
            plan = json.load(f)
    except (OSError, ValueError):
        return empty_plan()
    if not isinstance(plan, dict) or not isinstance(plan.get('effects'), list):
        return empty_plan()
    return plan


def write_plan(plan, directory=None):
    """Replaces the plan atomically (readers never see half a file)."""
    directory = directory or run_dir()
    fd, tmp = tempfile.mkstemp(prefix='.ferrox-plan-', dir=directory)
    with os.fdopen(fd, 'w') as f:
        json.dump(plan, f)
    os.replace(tmp, plan_path(directory))


@contextlib.contextmanager
def locked(directory=None):
    """Holds the plan's lock (shared by every fork of the run) for the ``with`` block."""
    directory = directory or run_dir()
    with open(os.path.join(directory, LOCK_FILE), 'a') as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def reserved(plan):
    """vmids the plan has taken for new VMs."""
    return {e.get('vmid') for e in plan.get('effects', []) if e.get('kind') == 'create'}


def conflicts(plan, effects):
    """vmids ``effects`` would take that the plan took meanwhile (another fork was first)."""
    return sorted(reserved({'effects': effects}) & reserved(plan))


def with_effects(plan, effects):
    return {'effects': list(plan.get('effects', [])) + list(effects)}
