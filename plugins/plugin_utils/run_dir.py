# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run's own directory on the controller, shared by the forks of one ``ansible-playbook``.

The check-mode plan (``plan_store.py``), the name index (``name_index.py``) and the login
ticket (``ticket_store.py``) each keep one JSON file here. This file is how all three read
one, replace one atomically (readers never see half a file; created 0600 and kept so), and
lock across forks.

Where: ansible-core's per-run local temp dir (``C.DEFAULT_LOCAL_TMP``,
``<local_tmp>/ansible-local-<pid><random>``). The main process creates it, forked workers
inherit its path, and ansible-core removes it when the run ends; a run that was killed
leaves it behind under a name no later run uses, so it is never read again.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile

from ansible import constants as C


def directory_of(directory=None):
    """``directory``, or the per-run temp dir of this ``ansible-playbook`` process."""
    return directory or C.DEFAULT_LOCAL_TMP


def path(name, directory=None):
    return os.path.join(directory_of(directory), name)


def read_json(name, directory=None):
    """The JSON value stored under ``name``; None when there is none or it is unreadable."""
    try:
        with open(path(name, directory)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def write_json(name, value, directory=None):
    """Replaces the file ``name`` with ``value`` atomically; mkstemp creates it 0600 and
    os.replace keeps that mode."""
    directory = directory_of(directory)
    fd, tmp = tempfile.mkstemp(prefix='.%s-' % name, dir=directory)
    with os.fdopen(fd, 'w') as f:
        json.dump(value, f)
    os.replace(tmp, os.path.join(directory, name))


@contextlib.contextmanager
def locked(name, directory=None):
    """Holds the lock file ``name`` (created 0600) exclusively for the ``with`` block,
    across every fork of the run."""
    fd = os.open(path(name, directory), os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, 'r+') as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
