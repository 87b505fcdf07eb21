# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ferrox.proxmox.proxmox inventory plugin: a thin shim.

The API work is done by the collection's binary for the controller's platform
(``plugins/modules/__bin/<platform>/ferrox inventory -``, crate ``modules/proxmox_inventory``):
it gets the options as JSON on stdin (secrets never in argv) and prints JSON lines
(nodes, guests with their host variables, pools, warnings). This file parses the
options, runs it, and hands each line to Ansible's inventory and ``constructed`` as it
comes (the inventory is built while the binary reads the guests' facts), then to the cache.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: proxmox
short_description: Proxmox VE inventory source, fast
version_added: "0.1.0"
author:
  - ferrox.proxmox contributors (!UNKNOWN)
description:
  - Get inventory hosts (QEMU VMs and LXC containers, and the nodes) from a Proxmox VE cluster.
  - Uses a configuration file as an inventory source; it must end in C(.proxmox.yml) or C(.proxmox.yaml).
  - "Option-compatible with the C(community.proxmox.proxmox) inventory plugin of community.proxmox 2.0.0 and of its main branch
    (O(exclude_vms), O(facts_concurrency), O(api_timeout), O(hostname), O(qemu_hostname), O(lxc_hostname)), and with 1.6's
    given O(exclude_templates=true) (the same options, environment variables, hosts, groups and C(proxmox_*) host variables
    with the same values): change only O(plugin) in an existing inventory file. The differences are listed in the notes."
  - The API is read by the collection's binary for the controller's platform, with one C(/cluster/resources)
    listing instead of one per node, and the per-guest reads of O(want_facts) made O(concurrency) at a time.
extends_documentation_fragment:
  - constructed
  - inventory_cache
options:
  plugin:
    description: The name of this plugin; it must be V(ferrox.proxmox.proxmox) for this plugin to read the file.
    required: true
    choices: ['ferrox.proxmox.proxmox']
    type: str
  url:
    description:
      - URL of the Proxmox VE API of any node of the cluster, C(https://host[:port]) (port 8006 when not given).
      - Only HTTPS, as the Proxmox VE API serves; community.proxmox's default C(http://localhost:8006) never reached a Proxmox VE node.
      - If not set in the inventory file, the value of the E(PROXMOX_URL) environment variable is used.
      - Templating is applied to the value, as in community.proxmox.
    default: 'https://localhost:8006'
    type: str
    env:
      - name: PROXMOX_URL
  user:
    description:
      - User to authenticate as, with its realm (C(root@pam)); with token authentication, the user owning the token.
      - If not set in the inventory file, the value of the E(PROXMOX_USER) environment variable is used.
    required: true
    type: str
    env:
      - name: PROXMOX_USER
  password:
    description:
      - Password of O(user). If you do not set a password, set O(token_id) and O(token_secret) instead.
      - If not set in the inventory file, the value of the E(PROXMOX_PASSWORD) environment variable is used.
    type: str
    env:
      - name: PROXMOX_PASSWORD
  token_id:
    description:
      - Name of the API token of O(user) (C(automation), not C(ansible@pve!automation)). Needs O(token_secret).
      - The token needs C(VM.Audit) (guests), C(Sys.Audit) (nodes' addresses), C(Pool.Audit) (pools) and, for the agent's
        interfaces, C(VM.GuestAgent.Audit) (Proxmox VE 9; C(VM.Monitor) before) on what it should see.
      - If not set in the inventory file, the value of the E(PROXMOX_TOKEN_ID) environment variable is used.
    type: str
    env:
      - name: PROXMOX_TOKEN_ID
  token_secret:
    description:
      - Secret (a UUID) of the API token O(token_id).
      - If not set in the inventory file, the value of the E(PROXMOX_TOKEN_SECRET) environment variable is used.
    type: str
    env:
      - name: PROXMOX_TOKEN_SECRET
  validate_certs:
    description:
      - Whether to verify the TLS certificate of the API (default V(true), as in community.proxmox).
      - For Proxmox VE's self-signed certificate, prefer O(cert_fingerprint) or O(ca_path) to turning verification off.
    type: boolean
    default: true
  ca_path:
    description:
      - PEM file with the CA certificate(s) to trust for the API's certificate instead of the built-in web PKI roots (Mozilla's)
        (community.proxmox used E(REQUESTS_CA_BUNDLE) for this, which this plugin does not read).
      - If not set in the inventory file, the value of the E(PROXMOX_CA_PATH) environment variable is used.
    type: path
    env:
      - name: PROXMOX_CA_PATH
  cert_fingerprint:
    description:
      - "SHA-256 fingerprint of the API's TLS certificate (C(AB:CD:...), as Proxmox VE shows it under Node > System > Certificates).
        When set, the certificate is trusted if and only if its fingerprint matches: the usual answer for a node's self-signed certificate."
      - If not set in the inventory file, the value of the E(PROXMOX_CERT_FINGERPRINT) environment variable is used.
    type: str
    env:
      - name: PROXMOX_CERT_FINGERPRINT
  timeout:
    description:
      - Timeout in seconds of each HTTP request to the API.
      - O(api_timeout) is community.proxmox's name for the same limit. Give either; giving both with different values is an error.
    type: int
    default: 30
  api_timeout:
    description:
      - community.proxmox's name (main branch) for O(timeout), the same limit in seconds per API request; from 1.
      - "When it is not given, O(timeout) applies, default V(30): community.proxmox's default of V(5) is not taken, as it is
        only a limit (it changes no host or variable) and a busy cluster's listing can take longer."
      - Giving it and O(timeout) with different values is an error.
    type: int
  concurrency:
    description:
      - How many per-guest reads (O(want_facts)) run at once, each on its own connection. From 1 to 64.
      - Raise it for a cluster far away (the reads wait on the network, not on Proxmox VE); lower it to spare a busy node.
      - O(facts_concurrency) is community.proxmox's name for the same number. Give either; giving both with different values is an error.
    type: int
    default: 8
  facts_concurrency:
    description:
      - "community.proxmox's name (main branch) for O(concurrency): how many guests' facts are read at once; from 1 to 64, V(1) reads them one by one."
      - "When it is not given, O(concurrency) applies, default V(8): community.proxmox's default of V(1) is not taken, as the number
        changes no host or variable, only how long the inventory takes."
      - Giving it and O(concurrency) with different values is an error.
    type: int
  group_prefix:
    description: Prefix to apply to Proxmox groups.
    default: proxmox_
    type: str
  facts_prefix:
    description: Prefix to apply to LXC/QEMU config facts.
    default: proxmox_
    type: str
  want_facts:
    description:
      - Gather LXC/QEMU configuration facts (C(status/current), C(config), snapshots, the agent's or container's interfaces).
      - Adds, for running guests whose interfaces were read, C(proxmox_ip_addresses) (the usable addresses, see the notes)
        and C(proxmox_ip_address) (the one to connect to).
      - When V(true), more details about QEMU VM status are possible, besides the running and stopped states; see O(qemu_extended_statuses).
    default: false
    type: bool
  want_post_filter_facts:
    description:
      - Whether to collect facts after host filtering (in contrast to pulling all facts of all hosts before filtering as with O(want_facts) set to V(true)).
      - When O(want_facts) is set to V(true) facts are collected before filtering and this parameter is ignored.
    type: bool
    default: false
  qemu_extended_statuses:
    description:
      - Requires O(want_facts). Differentiates the C(paused) and C(prelaunch) statuses of QEMU VMs.
      - This introduces the groups [prefixed with O(group_prefix)] C(prelaunch) and C(paused).
    default: false
    type: bool
  want_proxmox_nodes_ansible_host:
    description:
      - Whether to set C(ansible_host) for Proxmox nodes.
      - When V(true), uses the first interface (by name) with an address and a gateway. This can be different from what you expect.
    type: bool
    default: false
  exclude_nodes:
    description: Exclude proxmox nodes and the nodes-group from the inventory output.
    type: bool
    default: false
  exclude_vms:
    description:
      - "Exclude LXC containers and QEMU virtual machines (templates included) from the inventory output: the nodes only,
        without the per-node C(<node>_lxc)/C(<node>_qemu) and pool groups (as community.proxmox's main branch)."
      - No guest is listed, so the API is asked for the nodes only.
    type: bool
    default: false
  exclude_templates:
    description:
      - "V(false) (the default, as community.proxmox 2.x): templates are hosts, in the group C(all_templates) [prefixed with O(group_prefix)]
        and in pool groups, but not in the node, type and status groups; every guest has the variable C(proxmox_template) (V(true) for a template)."
      - "V(true): community.proxmox 1.6's inventory: templates are not hosts, and there is no C(all_templates) group and no C(proxmox_template) variable.
        Set it in an inventory file written for 1.6 whose plays target C(all) and must not reach templates, which cannot run."
      - "The default follows community.proxmox's current release (2.0.0, shipped in ansible 14), so that a file written for it moves over
        changing only O(plugin); 1.6's shape stays one option away. community.proxmox has no such option."
    type: bool
    default: false
  hostname:
    description:
      - A template for the inventory hostname of Proxmox nodes, QEMU VMs and LXC containers (community.proxmox main branch).
      - For QEMU VMs and LXC containers it is only used when O(qemu_hostname) or O(lxc_hostname) is not set.
      - If no template applies, the Proxmox name is used.
      - "For nodes, the available variables are the node's entry of C(/cluster/status): C(name), C(level), C(nodeid), C(online),
        C(local), C(ip), C(id) and C(type)."
      - For QEMU VMs and LXC containers, the available variables are the fields of the guest's C(/cluster/resources) entry,
        for example C(name), C(vmid), C(node), C(type), C(status) and C(template); extra variables (C(-e)) too.
      - Groups and pools keep naming the node by its Proxmox name (C(<node>_qemu)); filters see the guest's Proxmox name.
    type: str
  qemu_hostname:
    description:
      - A template for the inventory hostname of QEMU VMs, overriding O(hostname) for them (community.proxmox main branch).
      - If neither this nor O(hostname) is provided, the Proxmox name is used.
      - The available variables are the fields of the guest's C(/cluster/resources) entry,
        for example C(name), C(vmid), C(node), C(type), C(status) and C(template).
    type: str
  lxc_hostname:
    description:
      - A template for the inventory hostname of LXC containers, overriding O(hostname) for them (community.proxmox main branch).
      - If neither this nor O(hostname) is provided, the Proxmox name is used.
      - The available variables are the fields of the guest's C(/cluster/resources) entry,
        for example C(name), C(vmid), C(node), C(type), C(status) and C(template).
    type: str
  filters:
    description:
      - A list of Jinja templates that allow filtering hosts.
      - If strict mode is enabled, any error during host filter compositing will lead to an AnsibleError being raised, otherwise the host will be ignored.
      - Facts collected when O(want_facts) is set to V(true) can be used in the filters.
      - When O(want_facts) is set to V(false) full facts are not available and filters can only use
        proxmox_vmid, proxmox_name, proxmox_status, proxmox_vmtype, proxmox_tags, proxmox_node, proxmox_template.
    type: list
    elements: str
    default: []
notes:
  - "Differences from community.proxmox 1.6: O(url) must be C(https://host[:port]) (no path) and defaults to C(https://localhost:8006);
    O(ca_path), O(cert_fingerprint), O(timeout), O(concurrency) and O(exclude_templates) are new."
  - "An option the plugin does not know fails the inventory, naming it (community.proxmox ignored it silently)."
  - "Differences from community.proxmox's main branch (unreleased): with O(want_proxmox_nodes_ansible_host), a node's C(ansible_host) is
    chosen from its network interfaces as in 1.6 and 2.0.0 (main takes the C(ip) of C(/cluster/status), and sets it for offline nodes too);
    a guest whose facts cannot be read gets a warning naming it, not main's C(proxmox_fact_gathering_failed)/C(proxmox_fact_gathering_error) variables."
  - "Where community.proxmox failed the whole inventory, this plugin warns, naming the guest, and keeps the guest with the facts it could read:
    a guest whose agent does not answer or may not be asked (no C(VM.GuestAgent.Audit)), a guest removed while being read,
    a container whose interfaces cannot be read. A status outside C(running)/C(stopped) (with O(qemu_extended_statuses), for example
    C(suspended)) gets its group instead of failing the inventory."
  - "New host variables, only for running guests whose interfaces were read: C(proxmox_ip_addresses), the usable addresses
    (not loopback, link-local or APIPA 169.254/16) of the interfaces that are the guest's C(netN) (matched by MAC), by C(netN), IPv4 before IPv6;
    and C(proxmox_ip_address), the first IPv4 address of the lowest C(netN) that has one, else the first IPv6 address (the rule of
    M(ferrox.proxmox.proxmox_kvm)'s O(ferrox.proxmox.proxmox_kvm#module:wait_for_ip)). Use C(compose: {ansible_host: proxmox_ip_address}) to connect to it."
  - "Fewer requests, the same variables: the agent is asked only for running VMs (community.proxmox also asked stopped ones, which cannot answer);
    C(status/current) is read only for running VMs, for their C(proxmox_qmpstatus) (C(paused), C(prelaunch), ...); for the other guests
    C(proxmox_status) (and a stopped VM's C(proxmox_qmpstatus), which Proxmox VE answers equal to it) is the cluster listing's, the status
    their groups are chosen by."
  - "The cache (O(cache)) holds this plugin's result, not the API's answers: a cache written by community.proxmox is not read."
"""

EXAMPLES = r"""
# my.proxmox.yml: every guest, reachable at the address its agent reports
plugin: ferrox.proxmox.proxmox
url: https://pve1.example.com:8006
user: ansible@pve
token_id: inventory
token_secret: "{{ lookup('ansible.builtin.env', 'PVE_TOKEN_SECRET') }}"
cert_fingerprint: "AB:CD:..."   # the node's self-signed certificate
want_facts: true
compose:
  ansible_host: proxmox_ip_address
keyed_groups:
  - key: proxmox_tags_parsed
    separator: ""
    prefix: tag_
filters:
  - proxmox_vmtype == 'qemu' or proxmox_status == 'running'
"""

import difflib
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import tempfile
import threading

from ansible.errors import AnsibleError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable
from ansible.utils.display import Display
from ansible.utils.unsafe_proxy import wrap_var
from ansible.utils.vars import combine_vars

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import hostname_template
from ansible_collections.ferrox.proxmox.plugins.plugin_utils.binary_module import (
    BIN_ROOT,
    BINARY,
    missing_platform_message,
    platform_name,
    shipped_platforms,
)

display = Display()

NAME = 'ferrox.proxmox.proxmox'
# Options whose values are templated before use (as community.proxmox does).
TEMPLATED = ('url', 'user', 'password', 'token_id', 'token_secret')
# ferrox's option and community.proxmox's name for the same setting: the binary takes
# each only when the inventory file gives it, and refuses two different values.
PAIRED = (('timeout', 'api_timeout'), ('concurrency', 'facts_concurrency'))
# How many warnings are shown one by one before the rest are summed up.
WARNINGS_SHOWN = 20


def to_safe(word):
    """community.proxmox's to_safe: spaces dropped, other characters outside [A-Za-z0-9_] become _."""
    return re.sub(r"[^A-Za-z0-9\_]", "_", word.replace(" ", ""))


def binary_path():
    """The binary for the controller's platform, or an AnsibleError naming the platform."""
    target = platform_name(platform.system(), platform.machine())
    path = os.path.join(BIN_ROOT, target, BINARY)
    if not os.path.isfile(path):
        raise AnsibleError(missing_platform_message(
            'proxmox inventory plugin', target, 'the controller, which runs inventory plugins', shipped_platforms()))
    return path


def stream_binary(config):
    """Runs ``ferrox inventory -`` with ``config`` on stdin and yields its records (dicts) as
    it prints them, so the inventory is built while the binary still reads the API (the
    guests' facts take most of its time). Raises AnsibleError for the binary's error record,
    or when it ended before its ``done`` record."""
    path = binary_path()
    copy_dir = None
    if not os.access(path, os.X_OK):
        # An installation that lost the executable bit: run a private copy.
        copy_dir = tempfile.mkdtemp(prefix='ferrox-inventory-')
        copy = os.path.join(copy_dir, BINARY)
        shutil.copyfile(path, copy)
        os.chmod(copy, stat.S_IRWXU)
        path = copy
    try:
        proc = subprocess.Popen([path, 'inventory', '-'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        if copy_dir:
            shutil.rmtree(copy_dir, ignore_errors=True)
        raise AnsibleError('%s: cannot run %s: %s' % (NAME, path, e))
    # Read on a thread of its own, so a full stderr pipe never stops the binary.
    err = []
    err_reader = threading.Thread(target=lambda: err.append(proc.stderr.read()))
    err_reader.daemon = True
    err_reader.start()
    last = None
    try:
        try:
            proc.stdin.write(json.dumps(config).encode('utf-8'))
            proc.stdin.close()
        except OSError:
            pass  # it ended at once: its exit code and stderr say why, below
        for raw in proc.stdout:
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError:
                raise AnsibleError('%s: the binary printed something that is not JSON: %r' % (NAME, raw[:200]))
            if 'error' in record:
                raise AnsibleError('%s: %s' % (NAME, record['error']))
            last = record
            yield record
    finally:
        if proc.poll() is None and (last is None or 'done' not in last):
            proc.kill()
        proc.stdout.close()
        returncode = proc.wait()
        err_reader.join()
        if copy_dir:
            shutil.rmtree(copy_dir, ignore_errors=True)
    if returncode != 0 or last is None or 'done' not in last:
        raise AnsibleError('%s: %s ended with exit code %s before the inventory was complete: %s'
                           % (NAME, path, returncode, b''.join(err).decode('utf-8', 'replace').strip()[-2000:]))


def run_binary(config):
    """The binary's records (dicts), all of them: see :func:`stream_binary`."""
    return list(stream_binary(config))


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    """Host inventory of a Proxmox VE cluster, read by the collection's binary."""

    NAME = NAME

    def verify_file(self, path):
        valid = False
        if super(InventoryModule, self).verify_file(path):
            if path.endswith(('proxmox.yaml', 'proxmox.yml')):
                valid = True
            else:
                self.display.vvv('Skipping due to inventory source not ending in "proxmox.yaml" nor "proxmox.yml"')
        return valid

    def _fact(self, name):
        return to_safe('%s%s' % (self.facts_prefix, name.lower()))

    def _group(self, name):
        return to_safe('%s%s' % (self.group_prefix, name.lower()))

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path)
        # Extra variables (-e) are template variables, as in community.proxmox.
        self.templar.available_variables = self._vars
        config_data = self._read_config_data(path) or {}
        self._refuse_unknown(config_data, path)

        values = {}
        for o in TEMPLATED:
            v = self.get_option(o)
            if self.templar.is_template(v):
                v = self.templar.template(v)
            values[o] = v
        if values['password'] is None and (values['token_id'] is None or values['token_secret'] is None):
            raise AnsibleError('You must specify either a password or both token_id and token_secret.')
        if self.get_option('qemu_extended_statuses') and not self.get_option('want_facts'):
            raise AnsibleError('You must set want_facts to True if you want to use qemu_extended_statuses.')

        self.exclude_nodes = self.get_option('exclude_nodes')
        self.host_filters = self.get_option('filters')
        self.group_prefix = self.get_option('group_prefix')
        self.facts_prefix = self.get_option('facts_prefix')
        self.strict = self.get_option('strict')
        self.want_facts = self.get_option('want_facts')
        self.post_filter_facts = not self.want_facts and self.get_option('want_post_filter_facts')
        self.exclude_templates = self.get_option('exclude_templates')
        self.exclude_vms = self.get_option('exclude_vms')
        self.hostname_templates = dict(
            (kind, self.get_option('%s_hostname' % kind) or self.get_option('hostname')) for kind in ('qemu', 'lxc'))
        self.hostname_templates['node'] = self.get_option('hostname')
        # Read once: text and plain references are rendered without the templar.
        self.hostname_substitutions = dict(
            (kind, hostname_template.parse(template)) for kind, template in self.hostname_templates.items())

        self.binary_config = {
            'url': values['url'],
            'user': values['user'],
            'password': values['password'],
            'token_id': values['token_id'],
            'token_secret': values['token_secret'],
            'validate_certs': self.get_option('validate_certs'),
            'ca_path': self.get_option('ca_path'),
            'cert_fingerprint': self.get_option('cert_fingerprint'),
            'want_facts': self.want_facts,
            'want_proxmox_nodes_ansible_host': self.get_option('want_proxmox_nodes_ansible_host'),
            'exclude_nodes': self.exclude_nodes,
            'facts_prefix': self.facts_prefix,
            'exclude_templates': self.exclude_templates,
            'exclude_vms': self.exclude_vms,
            'want_resources': any(self.hostname_templates.values()),
        }
        for pair in PAIRED:
            for o in pair:
                if o in config_data:
                    self.binary_config[o] = self.get_option(o)

        cache_key = self.get_cache_key(path)
        use_cache = cache and self.get_option('cache')
        update_cache = not cache and self.get_option('cache')
        records = None
        if use_cache:
            try:
                records = self._cache[cache_key]
            except KeyError:
                update_cache = True
        if records is None and not self.post_filter_facts:
            # Built as the binary prints it; what it printed is what the cache keeps.
            records = self._populate_or_forget(stream_binary(self.binary_config))
        else:
            if records is None:
                records = self._read_cluster()
            self._populate(records)
        if update_cache:
            self._cache[cache_key] = records

    def _refuse_unknown(self, config_data, path):
        known = set(self._options or {}) | {'plugin'}
        unknown = sorted(k for k in config_data if k not in known)
        if not unknown:
            return
        hints = []
        for k in unknown:
            close = difflib.get_close_matches(k, sorted(known), n=1)
            hints.append('%s (did you mean %s?)' % (k, close[0]) if close else k)
        raise AnsibleError(
            '%s: unknown option(s) in %s: %s. Remove them or correct their names; the options are listed by '
            '`ansible-doc -t inventory %s`.' % (NAME, path, ', '.join(hints), NAME))

    def _read_cluster(self):
        """The binary's records; with want_post_filter_facts, the guests' facts are read after
        filtering, for the guests the filters keep (a second run)."""
        records = run_binary(self.binary_config)
        if not self.post_filter_facts:
            return records
        kept = []
        for r in records:
            g = r.get('guest')
            if g is not None and self._can_add_host(g['name'], wrap_var(g['vars'])):
                kept.append(g['vars'].get(self._fact('vmid')))
        if not kept:
            return records
        config = dict(self.binary_config, facts_for=kept)
        with_facts = {}
        for r in run_binary(config):
            if 'guest' in r:
                with_facts[r['guest']['vars'].get(self._fact('vmid'))] = r['guest']['vars']
            elif 'warning' in r:
                records.insert(-1, r)
        for r in records:
            g = r.get('guest')
            if g is not None and g['vars'].get(self._fact('vmid')) in with_facts:
                g['post_filter_vars'] = with_facts[g['vars'].get(self._fact('vmid'))]
        return records

    def _can_add_host(self, name, properties):
        for host_filter in self.host_filters:
            try:
                if not self._compose(host_filter, properties):
                    return False
            except Exception as e:  # pylint: disable=broad-except
                message = 'Could not evaluate host filter %s for host %s - %s' % (host_filter, name, e)
                if self.strict:
                    raise AnsibleError(message)
                display.warning(message)
        return True

    def _add_host(self, name, variables):
        self.inventory.add_host(name)
        for k, v in variables.items():
            self.inventory.set_variable(name, k, v)
        variables = self.inventory.get_host(name).get_vars()
        self._set_composite_vars(self.get_option('compose'), variables, name, strict=self.strict)
        self._add_host_to_composed_groups(self.get_option('groups'), variables, name, strict=self.strict)
        self._add_host_to_keyed_groups(self.get_option('keyed_groups'), variables, name, strict=self.strict)

    def _child(self, group, host):
        # community.proxmox failed on a status without a group (add_child to an unknown group).
        self.inventory.add_group(group)
        self.inventory.add_child(group, host)

    def _populate_or_forget(self, records):
        """``_populate`` on records as they come, returned as a list; if they end in an error,
        the hosts and groups this source added are taken out again: an inventory source
        that fails leaves nothing behind, as when the error came before any host."""
        hosts_before = set(self.inventory.hosts)
        groups_before = set(self.inventory.groups)
        kept = []

        def keeping():
            for record in records:
                kept.append(record)
                yield record

        try:
            self._populate(keeping())
        except Exception:
            for name in set(self.inventory.hosts) - hosts_before:
                self.inventory.remove_host(self.inventory.hosts[name])
            for name in set(self.inventory.groups) - groups_before:
                self.inventory.remove_group(self.inventory.groups[name])
                if name in self.inventory.groups:
                    # ansible-core before 2.19 takes the group's name, not the group.
                    self.inventory.remove_group(name)
            raise
        return kept

    def _populate(self, records):
        default_groups = ['lxc', 'qemu', 'running', 'stopped']
        if not self.exclude_templates:
            default_groups.append('templates')
        if self.get_option('qemu_extended_statuses'):
            default_groups.extend(['prelaunch', 'paused'])
        for group in default_groups:
            self.inventory.add_group(self._group('all_%s' % group))
        nodes_group = self._group('nodes')
        if not self.exclude_nodes:
            self.inventory.add_group(nodes_group)
        want_nodes_host = self.get_option('want_proxmox_nodes_ansible_host')

        warnings = []
        # Proxmox name -> inventory hostname (they differ with the hostname templates).
        added = {}
        for record in records:
            if 'warning' in record:
                warnings.append(record['warning'])
            elif 'node' in record:
                self._add_node(record['node'], nodes_group, want_nodes_host)
            elif 'guest' in record:
                name = self._handle_guest(record['guest'])
                if name is not None:
                    added[record['guest']['name']] = name
            elif 'pool' in record:
                pool = record['pool']
                group = self._group('pool_%s' % pool['id'])
                self.inventory.add_group(group)
                for member in pool['members']:
                    if member in added:
                        self.inventory.add_child(group, added[member])
            elif 'done' in record:
                display.vvv('%s: %s guests, %s API requests' % (NAME, record['done'].get('guests'), record['done'].get('requests')))
        for w in warnings[:WARNINGS_SHOWN]:
            display.warning('%s: %s' % (NAME, w))
        if len(warnings) > WARNINGS_SHOWN:
            display.warning('%s: %d more warnings like these (run ansible-inventory -vvv to list them all)' % (NAME, len(warnings) - WARNINGS_SHOWN))
            for w in warnings[WARNINGS_SHOWN:]:
                display.vvv('%s: %s' % (NAME, w))

    def _hostname(self, kind, resource, default):
        """The inventory hostname: the hostname template for ``kind`` (community.proxmox main's
        hostname, qemu_hostname, lxc_hostname) on ``resource`` and the extra variables, else ``default``."""
        template = self.hostname_templates.get(kind)
        if not template:
            return default
        variables = combine_vars(resource or {}, self._vars)
        substitution = self.hostname_substitutions.get(kind)
        name = substitution.render(variables) if substitution is not None else None
        if name is not None:
            return name
        self.templar.available_variables = combine_vars(wrap_var(resource or {}), self._vars)
        return self.templar.template(template)

    def _add_node(self, node, nodes_group, want_nodes_host):
        name = self._hostname('node', node.get('resource'), node['name'])
        if not self.exclude_nodes:
            self.inventory.add_host(name)
            if node.get('type') == 'node':
                self.inventory.add_child(nodes_group, name)
        if not node.get('online'):
            return
        if want_nodes_host and not self.exclude_nodes:
            self.inventory.set_variable(name, 'ansible_host', wrap_var(node.get('ansible_host')))
        if not self.exclude_nodes:
            variables = self.inventory.get_host(name).get_vars()
            self._set_composite_vars(self.get_option('compose'), variables, name, strict=self.strict)
        if not self.exclude_vms:
            for kind in ('lxc', 'qemu'):
                self.inventory.add_group(self._group('%s_%s' % (node['name'], kind)))

    def _handle_guest(self, guest):
        name = guest['name']
        properties = wrap_var(guest['vars'])
        if not self._can_add_host(name, properties):
            return None
        if 'post_filter_vars' in guest:
            properties = wrap_var(guest['post_filter_vars'])
        kind, node = guest['type'], guest['node']
        name = self._hostname(kind, guest.get('resource'), name)
        self._add_host(name, properties)
        if guest.get('template'):
            # community.proxmox 2.x: a template is in no node, type or status group.
            self.inventory.add_child(self._group('all_templates'), name)
            return name
        self.inventory.add_child(self._group('all_%s' % kind), name)
        self._child(self._group('%s_%s' % (node, kind)), name)
        status = guest['status']
        if status == 'running' and self.want_facts and kind == 'qemu' and self.get_option('qemu_extended_statuses'):
            status = properties.get(self._fact('qmpstatus'), status)
        self._child(self._group('all_%s' % status), name)
        return name
