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

import math
import os
import time

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import _wire, plan_store, run_dir

NAMES_ARG = _wire.NAMES_ARG
NAMES_KEY = _wire.NAMES_KEY
MAX_AGE_ENV = _wire.MAX_AGE_ENV
DEFAULT_MAX_AGE = _wire.DEFAULT_MAX_AGE
INDEX_FILE = 'ferrox-names.json'
# The modules that look guests up by name; the listing of each builds the index.
MODULES = _wire.NAME_INDEX_MODULES


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
    return run_dir.path(INDEX_FILE, directory)


def read_index(directory=None):
    """The stored index, by cluster; empty when there is none or it is unreadable."""
    index = run_dir.read_json(INDEX_FILE, directory)
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
        run_dir.write_json(INDEX_FILE, index, directory)
