# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run's login ticket, kept on the controller: one login per run and identity.

The first task of a run that logs in with ``api_password`` (and ``api_otp``) returns
its ticket and CSRF token (``_ferrox_ticket`` in its result, taken out here before
anything shows the result); a later task of the same run, endpoint, user and password
gets it in ``_ferrox_ticket`` and sends it instead of logging in. How the binary uses,
renews and replaces it lives in ``common/run/src/ticket.rs`` and
``common/client/src/client/reuse.rs``; this file only stores, chooses and hands out.

Where: ``ferrox-tickets.json`` beside the check-mode plan and ``ferrox-names.json``, in
ansible-core's per-run temp dir, which ansible-core removes when the run ends. Mode
0600, replaced atomically under the plan's lock. Keyed by ``user@host:port``; an entry
also holds a salted SHA-256 of the password it was got with, so a task with another
password (or user, host or port) never gets it.

How long: a kept ticket at least ``FERROX_TICKET_RENEW_AFTER`` seconds old (3600 by
default, half of PVE's two-hour ticket lifetime) is renewed by the next task that uses
it; ``0`` turns reuse off (every task logs in, as community.proxmox does).

Async tasks neither get nor leave a ticket: their result is read later by
``async_status``, never by this plugin, so a ticket in it would be shown.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
import tempfile
import time

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import plan_store

TICKET_ARG = '_ferrox_ticket'
TICKET_KEY = '_ferrox_ticket'
RENEW_ENV = 'FERROX_TICKET_RENEW_AFTER'
DEFAULT_RENEW_AFTER = 3600.0
TICKET_FILE = 'ferrox-tickets.json'
DEFAULT_PORT = 8006
# The connection options and the environment variables the binary falls back to
# (common/run/src/connection.rs).
_OPTIONS = {
    'api_host': 'PROXMOX_HOST',
    'api_port': 'PROXMOX_PORT',
    'api_user': 'PROXMOX_USER',
    'api_password': 'PROXMOX_PASSWORD',
}


def renew_after():
    """Seconds after which a kept ticket is renewed; raises ValueError naming the variable."""
    raw = os.environ.get(RENEW_ENV, '').strip()
    if not raw:
        return DEFAULT_RENEW_AFTER
    message = '%s must be a number of seconds (0 turns ticket reuse off), got %r' % (RENEW_ENV, raw)
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(message) from None
    if math.isnan(value) or math.isinf(value) or value < 0:
        raise ValueError(message)
    return value


def ticket_path(directory=None):
    return os.path.join(directory or plan_store.run_dir(), TICKET_FILE)


def identity(args):
    """Who a task logs in as with a password (``key``, ``user``, ``endpoint``,
    ``password``); None when it does not log in with a password."""
    value = {}
    for option, env in _OPTIONS.items():
        given = args.get(option)
        value[option] = os.environ.get(env) if given in (None, '') else given
    if not all(value[o] for o in ('api_host', 'api_user', 'api_password')):
        return None
    endpoint = '%s:%s' % (value['api_host'], value['api_port'] or DEFAULT_PORT)
    user = str(value['api_user'])
    return {'key': '%s@%s' % (user, endpoint), 'user': user, 'endpoint': endpoint, 'password': str(value['api_password'])}


def _fingerprint(salt, key, password):
    return hashlib.sha256(('%s\0%s\0%s' % (salt, key, password)).encode('utf-8')).hexdigest()


def _read(directory=None):
    try:
        with open(ticket_path(directory)) as f:
            kept = json.load(f)
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}


def for_task(args, directory=None):
    """What the binary gets in ``_ferrox_ticket``; None: no reuse for this task."""
    limit = renew_after()
    who = identity(args)
    if limit == 0 or who is None:
        return None
    key = who['key']
    entry = _read(directory).get(key)
    kept = None
    try:
        if entry and entry['pw'] == _fingerprint(entry['salt'], key, who['password']):
            kept = {
                'ticket': entry['ticket'],
                'csrf': entry['csrf'],
                'user': who['user'],
                'endpoint': who['endpoint'],
                'age': max(0.0, time.time() - float(entry['at'])),
            }
    except (KeyError, TypeError, ValueError):
        kept = None
    return {'renew_after': limit, 'kept': kept}


def store(args, got, directory=None):
    """Keeps the ticket a task got (``_ferrox_ticket`` in its result), for its identity."""
    who = identity(args)
    if who is None or not isinstance(got, dict):
        return
    if not all(isinstance(got.get(k), str) for k in ('ticket', 'csrf', 'user')) or got['user'] != who['user']:
        return
    key = who['key']
    salt = secrets.token_hex(16)
    entry = {
        'ticket': got['ticket'],
        'csrf': got['csrf'],
        'at': time.time(),
        'salt': salt,
        'pw': _fingerprint(salt, key, who['password']),
    }
    directory = directory or plan_store.run_dir()
    with plan_store.locked(directory):
        kept = _read(directory)
        kept[key] = entry
        # mkstemp creates the file 0600; os.replace keeps that mode.
        fd, tmp = tempfile.mkstemp(prefix='.ferrox-tickets-', dir=directory)
        with os.fdopen(fd, 'w') as f:
            json.dump(kept, f)
        os.replace(tmp, ticket_path(directory))
