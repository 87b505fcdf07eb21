# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run's index of VM names, kept on the controller.

A task that lists the cluster returns the index that listing gives (its nodes and
storages, and every QEMU VM by name, with its vmid and node); it is stored here, per
cluster and identity. A later task of the same run that names its VM by ``name`` alone
gets what the index holds for that name, and confirms the VM with one read of it instead
of listing the whole cluster. What the index means, and when a task falls back to a
fresh listing, lives in the module binaries (``common/run/src/name_index.rs``); this
file only stores, ages and hands out.

Where: ``ferrox-names.json`` beside the check-mode plan, in ansible-core's per-run temp
dir, shared by the forks. Written atomically; read without the lock.

How long an index is trusted: ``FERROX_NAME_INDEX_MAX_AGE`` seconds in the controller's
environment, 60 by default; ``0`` turns the index off.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import plan_store

NAMES_ARG = '_ferrox_names'
NAMES_KEY = '_ferrox_names'
MAX_AGE_ENV = 'FERROX_NAME_INDEX_MAX_AGE'
DEFAULT_MAX_AGE = 60.0
INDEX_FILE = 'ferrox-names.json'
# The modules that look guests up by name (proxmox_vm_info reads the index but does not
# build it: its listing lacks the nodes and storages the others need).
MODULES = ('proxmox_kvm', 'proxmox_disk', 'proxmox_nic', 'proxmox_vm_info')


def max_age():
    """Seconds an index is trusted; raises ValueError naming the variable when it is not a number."""
    raw = os.environ.get(MAX_AGE_ENV, '').strip()
    if not raw:
        return DEFAULT_MAX_AGE
    message = '%s must be a number of seconds (0 turns the name index off), got %r' % (MAX_AGE_ENV, raw)
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(message) from None
    if math.isnan(value) or value < 0:
        raise ValueError(message)
    return value


def index_path(directory=None):
    return os.path.join(directory or plan_store.run_dir(), INDEX_FILE)


def read_index(directory=None):
    """The stored index, by cluster; empty when there is none or it is unreadable."""
    try:
        with open(index_path(directory)) as f:
            index = json.load(f)
    except (OSError, ValueError):
        return {}
    return index if isinstance(index, dict) else {}


def for_task(module, args, directory=None):
    """What ``module`` gets in ``_ferrox_names`` for a task with ``args``; None: nothing
    (not a lookup by name alone, or the index is off)."""
    limit = max_age()
    name = args.get('name')
    if module not in MODULES or limit == 0 or not isinstance(name, str) or not name:
        return None
    if args.get('vmid') not in (None, '', 0, '0'):
        return None
    now = time.time()
    clusters = {}
    for key, entry in read_index(directory).items():
        try:
            clusters[key] = {
                'age': now - float(entry['at']),
                'nodes': entry['nodes'],
                'storages': entry['storages'],
                'guests': entry['names'].get(name, []),
            }
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return {'max_age': limit, 'clusters': clusters}


def store(fresh, directory=None):
    """Keeps the index a task's listing gave (``_ferrox_names`` in its result, with the
    listing's age in seconds)."""
    if not isinstance(fresh, dict) or not isinstance(fresh.get('cluster'), str):
        return
    directory = directory or plan_store.run_dir()
    try:
        age = max(0.0, float(fresh.get('age', 0)))
    except (TypeError, ValueError):
        return
    entry = {
        'at': time.time() - age,
        'nodes': fresh.get('nodes', []),
        'storages': fresh.get('storages', []),
        'names': fresh.get('names', {}),
    }
    with plan_store.locked(directory):
        index = read_index(directory)
        index[fresh['cluster']] = entry
        fd, tmp = tempfile.mkstemp(prefix='.ferrox-names-', dir=directory)
        with os.fdopen(fd, 'w') as f:
            json.dump(index, f)
        os.replace(tmp, index_path(directory))
