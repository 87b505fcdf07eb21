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
``common/client/src/client/ticket_reuse.rs``; this file only stores, chooses and hands out.

Where: ``ferrox-tickets.json`` beside the check-mode plan and ``ferrox-names.json``, in
ansible-core's per-run temp dir, which ansible-core removes when the run ends. Mode
0600, replaced atomically under the plan's lock. Keyed by ``user@host:port``; an entry
also holds a salted SHA-256 of the password it was got with, so a task with another
password (or user, host or port) never gets it.

How long: a kept ticket at least ``FERROX_TICKET_RENEW_AFTER`` seconds old (3600 by
default, half of PVE's two-hour ticket lifetime) is renewed by the next task that uses
it; ``0`` turns reuse off (every task logs in, as community.proxmox does).

One code, one login: the first password login of an identity in a run is serialized
across forks (``handover``: a per-identity ``fcntl.flock`` on a lock file beside the
store, held around the first task's module run while no ticket is kept); the tasks that
waited on it re-read the store and use its ticket. A TOTP code (``api_otp``) logs in
once on PVE 8+ (a reused code is refused and counted towards locking the user's TOTP),
so with reuse off a task with ``api_otp`` is refused before any login.

Async tasks get the run's kept ticket but never leave one (``leave: false``): their
result is read later by ``async_status``, never by this plugin, so a ticket in it would
be shown. An async task with ``api_otp`` and no kept ticket is refused: its login would
use the code and keep nothing for the tasks after it.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import secrets
import time

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import _wire, plan_store, run_dir

TICKET_ARG = _wire.TICKET_ARG
TICKET_KEY = _wire.TICKET_KEY
RENEW_ENV = _wire.RENEW_AFTER_ENV
DEFAULT_RENEW_AFTER = _wire.DEFAULT_RENEW_AFTER
TICKET_FILE = 'ferrox-tickets.json'
# Codes a first login of the run sent without getting a ticket, per identity (salted).
SPENT_FILE = 'ferrox-spent-codes.json'
# The connection options that make a password identity, with the environment variables
# the binary falls back to.
_OPTIONS = {option: _wire.ENV_FALLBACKS[option] for option in ('api_host', 'api_port', 'api_user', 'api_password')}
OTP_OPTION = 'api_otp'
LOCK_PREFIX = 'ferrox-login-'

REUSE_OFF_WITH_OTP = (
    'api_otp cannot be used with %s=0: a TOTP code logs in once (PVE 8 and later refuse it the second time '
    'and count that towards locking the user\'s TOTP), and with ticket reuse off every task would log in with '
    'it. Unset %s (or set it above 0) so the run logs in once and its tasks share the ticket, or use an API '
    'token (api_token_id, api_token_secret)'
)
CODE_ALREADY_SPENT = (
    'api_otp: an earlier task of this run logged in as %s with this code and got no ticket, so the code is not '
    'sent again (a TOTP code logs in once, and PVE counts every refused code towards locking the user\'s TOTP '
    'after 8): see that task\'s failure for why, then run again with a fresh code, or use an API token '
    '(api_token_id, api_token_secret)'
)
ASYNC_FIRST_WITH_OTP = (
    'An async task cannot be the first to log in with api_otp: its login would use the TOTP code (it logs in '
    'once) and keep no ticket for the tasks after it. Run a task without async first (for example '
    'proxmox_vm_info) so the run logs in once, or use an API token (api_token_id, api_token_secret)'
)


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
    return run_dir.path(TICKET_FILE, directory)


def _from_env(variables):
    """The first of ``variables`` set in the controller's environment, as the binary reads them."""
    return next((os.environ[v] for v in variables if v in os.environ), None)


def identity(args):
    """Who a task logs in as with a password (``key``, ``user``, ``endpoint``,
    ``password``); None when it does not log in with a password."""
    value = {}
    for option, variables in _OPTIONS.items():
        given = args.get(option)
        value[option] = _from_env(variables) if given in (None, '') else given
    if not all(value[o] for o in ('api_host', 'api_user', 'api_password')):
        return None
    endpoint = '%s:%s' % (value['api_host'], value['api_port'] or _wire.DEFAULT_PORT)
    user = str(value['api_user'])
    return {'key': '%s@%s' % (user, endpoint), 'user': user, 'endpoint': endpoint, 'password': str(value['api_password'])}


def otp_value(args):
    """The task's second factor (``api_otp`` or ``PROXMOX_OTP``), or None."""
    given = args.get(OTP_OPTION)
    value = _from_env(_wire.ENV_FALLBACKS[OTP_OPTION]) if given in (None, '') else given
    return str(value) if value else None


def otp_given(args):
    """Whether the task logs in with a second factor."""
    return otp_value(args) is not None


def _code_spent(directory, who, code):
    """Whether a first login of this run already sent ``code`` for ``who`` and got no ticket."""
    entry = run_dir.read_json(SPENT_FILE, directory)
    entry = entry.get(who['key']) if isinstance(entry, dict) else None
    try:
        return bool(entry) and entry['code'] == _fingerprint(entry['salt'], who['key'], code)
    except (KeyError, TypeError):
        return False


def _mark_spent(directory, who, code):
    """Records that ``code`` was sent for ``who`` without a ticket coming back: the forks
    waiting for this login do not send it again."""
    salt = secrets.token_hex(16)
    with plan_store.locked(directory):
        spent = run_dir.read_json(SPENT_FILE, directory)
        spent = spent if isinstance(spent, dict) else {}
        spent[who['key']] = {'salt': salt, 'code': _fingerprint(salt, who['key'], code)}
        run_dir.write_json(SPENT_FILE, spent, directory)


def _login_lock(directory, key):
    """The identity's lock for its first login (one file per identity)."""
    return run_dir.locked(LOCK_PREFIX + hashlib.sha256(key.encode('utf-8')).hexdigest()[:16] + '.lock', directory)


@contextlib.contextmanager
def handover(args, wrap_async=False, directory=None):
    """Yields ``(ticket, refusal)`` for the ``with`` block that runs the task's module:
    what the binary gets in ``_ferrox_ticket`` (None: no reuse for this task), or why the
    task must not run. While no ticket is kept for the task's identity the block holds the
    identity's login lock, so the run's first login is its only one: store the ticket the
    task got (``store``) before leaving the block. Raises ValueError as ``renew_after``."""
    limit = renew_after()
    who = identity(args)
    if who is None:
        yield None, None
        return
    if limit == 0:
        yield None, (REUSE_OFF_WITH_OTP % (RENEW_ENV, RENEW_ENV) if otp_given(args) else None)
        return
    directory = run_dir.directory_of(directory)
    ticket = for_task(args, directory)
    if ticket['kept'] is None:
        with _login_lock(directory, who['key']):
            # Another fork may have logged in while this one waited.
            ticket = for_task(args, directory)
            if ticket['kept'] is None:
                code = otp_value(args)
                if wrap_async and code:
                    yield None, ASYNC_FIRST_WITH_OTP
                    return
                if code and _code_spent(directory, who, code):
                    yield None, CODE_ALREADY_SPENT % who['user']
                    return
                ticket['leave'] = not wrap_async
                yield ticket, None
                if code and for_task(args, directory)['kept'] is None:
                    _mark_spent(directory, who, code)
                return
    ticket['leave'] = not wrap_async
    yield ticket, None


def _fingerprint(salt, key, password):
    return hashlib.sha256(('%s\0%s\0%s' % (salt, key, password)).encode('utf-8')).hexdigest()


def _read(directory=None):
    kept = run_dir.read_json(TICKET_FILE, directory)
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
    with plan_store.locked(directory):
        kept = _read(directory)
        kept[key] = entry
        run_dir.write_json(TICKET_FILE, kept, directory)
