# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run's login tickets, kept on the controller: one login per run, identity and cluster.

The first task of a run that logs in with ``api_password`` (and ``api_otp``) on a cluster
returns its ticket and CSRF token (``_ferrox_ticket`` in its result, taken out here
before anything shows the result); a later task of the same run, user and password on
the same cluster gets it in ``_ferrox_ticket`` and sends it instead of logging in. How
the binary uses, renews and replaces it lives in ``common/run/src/ticket.rs`` and
``common/client/src/client/ticket_reuse.rs``; this file only stores, chooses and hands out.

By cluster, not by ``api_host``: a TOTP code's last accepted step is kept cluster-wide
(``tfa.cfg`` in pmxcfs), so two spellings of one cluster (``127.0.0.1`` and
``localhost``, two nodes' names) must share one login. The host string cannot tell;
PVE can: after a login the binary reports the certificate fingerprints of the
cluster's nodes (``GET /nodes``), and a ticket is accepted exactly by the nodes of the
cluster that made it. Each cluster gets the run's name of the endpoint where its first
ticket was got, and ``endpoints`` maps every ``host:port`` the run has seen to its
cluster. At an endpoint not mapped yet, the task gets the identity's tickets of every
known cluster with their nodes' certificates as ``candidates``; the binary sends one
only where the endpoint's certificate is one of them, and reports the cluster PVE
accepted it for (``cluster`` in the result), or logs in when none is (a cluster the run
has not met). The cluster name of the login answer is not needed (PVE shows it only
with Sys.Audit on ``/``, never for a single node, and two clusters may share one).

Where: ``ferrox-tickets.json`` beside the check-mode plan and ``ferrox-names.json``, in
ansible-core's per-run temp dir, which ansible-core removes when the run ends. Mode
0600, replaced atomically under the plan's lock. ``{"tickets": {user: {cluster:
entry}}, "endpoints": {"host:port": cluster}, "certs": {cluster: [fingerprint]}}``; an entry also holds a salted SHA-256 of
the password it was got with, so a task with another password (or user) never gets it.
The user is ``api_user`` as the task spells it; the binary may answer with PVE's
spelling of it (a realm set ``case-sensitive: 0``), which differs only in case.

How long: a kept ticket at least ``FERROX_TICKET_RENEW_AFTER`` seconds old (3600 by
default, half of PVE's two-hour ticket lifetime) is renewed by the next task that uses
it; ``0`` turns reuse off (every task logs in, as community.proxmox does).

One code, one login: while a task has no ticket of its endpoint's cluster, its run is
serialized with every other such task of the same user (``handover``: a per-user
``fcntl.flock`` on a lock file beside the store, held around the module run), whatever
the endpoint: until a task has shown which cluster an endpoint is, two endpoints may be
one cluster. The tasks that waited re-read the store and use the ticket (or try it). A
TOTP code (``api_otp``) logs in once per cluster on PVE 8+ (a reused code is refused and
counted towards locking the user's TOTP), so with reuse off a task with ``api_otp`` is
refused before any login, and a code a first login sent without getting a ticket is
not sent again by any task of the user in the run (``ferrox-spent-codes.json``).

Async tasks get the run's kept ticket (and the candidates) but never leave one
(``leave: false``): their result is read later by ``async_status``, never by this plugin,
so a ticket in it would be shown. An async task with ``api_otp`` and no kept ticket of its
endpoint's cluster is refused: its login would use the code and keep nothing for the
tasks after it.
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
    """Who a task logs in as with a password (``user``, ``endpoint``, ``password``); None
    when it does not log in with a password."""
    value = {}
    for option, variables in _OPTIONS.items():
        given = args.get(option)
        value[option] = _from_env(variables) if given in (None, '') else given
    if not all(value[o] for o in ('api_host', 'api_user', 'api_password')):
        return None
    endpoint = '%s:%s' % (value['api_host'], value['api_port'] or _wire.DEFAULT_PORT)
    return {'user': str(value['api_user']), 'endpoint': endpoint, 'password': str(value['api_password'])}


def otp_value(args):
    """The task's second factor (``api_otp`` or ``PROXMOX_OTP``), or None."""
    given = args.get(OTP_OPTION)
    value = _from_env(_wire.ENV_FALLBACKS[OTP_OPTION]) if given in (None, '') else given
    return str(value) if value else None


def otp_given(args):
    """Whether the task logs in with a second factor."""
    return otp_value(args) is not None


def _code_spent(directory, who, code):
    """Whether a first login of this run already sent ``code`` for ``who``'s user (at any
    endpoint) and got no ticket."""
    entry = run_dir.read_json(SPENT_FILE, directory)
    entry = entry.get(who['user']) if isinstance(entry, dict) else None
    try:
        return bool(entry) and entry['code'] == _fingerprint(entry['salt'], who['user'], code)
    except (KeyError, TypeError):
        return False


def _mark_spent(directory, who, code):
    """Records that ``code`` was sent for ``who``'s user without a ticket coming back: the
    forks waiting for this login, at this endpoint or another, do not send it again."""
    salt = secrets.token_hex(16)
    with plan_store.locked(directory):
        spent = run_dir.read_json(SPENT_FILE, directory)
        spent = spent if isinstance(spent, dict) else {}
        spent[who['user']] = {'salt': salt, 'code': _fingerprint(salt, who['user'], code)}
        run_dir.write_json(SPENT_FILE, spent, directory)


def _login_lock(directory, user):
    """The user's lock for a login on a cluster the run has no ticket of (one file per
    user, whatever the endpoint)."""
    return run_dir.locked(LOCK_PREFIX + hashlib.sha256(user.encode('utf-8')).hexdigest()[:16] + '.lock', directory)


@contextlib.contextmanager
def handover(args, wrap_async=False, directory=None):
    """Yields ``(ticket, refusal)`` for the ``with`` block that runs the task's module:
    what the binary gets in ``_ferrox_ticket`` (None: no reuse for this task), or why the
    task must not run. While no ticket of the endpoint's cluster is kept for the task's
    user the block holds the user's login lock, so one cluster's first login is its only
    one: store what the task reported (``store``) before leaving the block. Raises
    ValueError as ``renew_after``."""
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
        with _login_lock(directory, who['user']):
            # Another fork may have logged in, or placed this endpoint, while this one waited.
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
    kept = kept if isinstance(kept, dict) else {}
    parts = {part: kept.get(part) for part in ('tickets', 'endpoints', 'certs')}
    return {part: value if isinstance(value, dict) else {} for part, value in parts.items()}


def _entry_key(user, cluster):
    return '%s\0%s' % (user, cluster)


def _usable(entry, user, cluster, password):
    """The kept ticket as the binary takes it, when it was got with this password."""
    try:
        if entry['pw'] != _fingerprint(entry['salt'], _entry_key(user, cluster), password):
            return None
        return {
            'ticket': entry['ticket'],
            'csrf': entry['csrf'],
            'user': user,
            'age': max(0.0, time.time() - float(entry['at'])),
            'cluster': cluster,
        }
    except (KeyError, TypeError, ValueError):
        return None


def for_task(args, directory=None):
    """What the binary gets in ``_ferrox_ticket``; None: no reuse for this task. ``kept``:
    the ticket of the endpoint's cluster; ``candidates``: while the endpoint's cluster is
    not known, the identity's tickets of the clusters that are."""
    limit = renew_after()
    who = identity(args)
    if limit == 0 or who is None:
        return None
    store = _read(directory)
    mine = store['tickets'].get(who['user'])
    mine = mine if isinstance(mine, dict) else {}
    usable = {}
    for cluster, entry in sorted(mine.items()):
        ticket = _usable(entry, who['user'], cluster, who['password'])
        if ticket is not None:
            usable[cluster] = ticket
    cluster = store['endpoints'].get(who['endpoint'])
    kept = usable.get(cluster) if isinstance(cluster, str) else None
    if kept is not None:
        kept['endpoint'] = who['endpoint']
    candidates = []
    for other, ticket in usable.items():
        certs = store['certs'].get(other)
        # A ticket is sent only where the endpoint shows one of its cluster's certificates.
        if cluster is None and isinstance(certs, list) and certs:
            candidates.append(dict(ticket, certs=[c for c in certs if isinstance(c, str)]))
    return {'renew_after': limit, 'kept': kept, 'candidates': candidates}


def store(args, got, directory=None):
    """Keeps what a task reported (``_ferrox_ticket`` in its result): a ticket it got,
    under its cluster (the one it names, else the one its endpoint is known to be, else a
    new one named after the endpoint), and the cluster its endpoint belongs to."""
    who = identity(args)
    if who is None or not isinstance(got, dict):
        return
    named = got.get('cluster') if isinstance(got.get('cluster'), str) else None
    has_ticket = all(isinstance(got.get(k), str) for k in ('ticket', 'csrf', 'user'))
    # PVE's spelling of the user may differ from api_user in case only.
    if has_ticket and got['user'].lower() != who['user'].lower():
        has_ticket = False
    if not has_ticket and named is None:
        return
    with plan_store.locked(directory):
        kept = _read(directory)
        known = {c for clusters in kept['tickets'].values() if isinstance(clusters, dict) for c in clusters}
        if named is not None and named not in known and not has_ticket:
            return
        cluster = named or kept['endpoints'].get(who['endpoint']) or who['endpoint']
        if has_ticket:
            salt = secrets.token_hex(16)
            mine = kept['tickets'].setdefault(who['user'], {})
            mine[cluster] = {
                'ticket': got['ticket'],
                'csrf': got['csrf'],
                'at': time.time(),
                'salt': salt,
                'pw': _fingerprint(salt, _entry_key(who['user'], cluster), who['password']),
            }
        kept['endpoints'][who['endpoint']] = cluster
        certs = got.get('certs')
        if isinstance(certs, list):
            known_certs = kept['certs'].get(cluster)
            known_certs = known_certs if isinstance(known_certs, list) else []
            kept['certs'][cluster] = sorted(set(known_certs) | {c for c in certs if isinstance(c, str)})
        run_dir.write_json(TICKET_FILE, kept, directory)
