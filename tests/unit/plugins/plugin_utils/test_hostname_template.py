# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""hostname_template.py: a hostname template rendered by substitution gives what Ansible's
templar gives, and every template or value it cannot be sure of is left to the templar."""

from __future__ import annotations

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import hostname_template

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 templates every string
    def trust_as_template(text):
        return text

# A guest's /cluster/resources entry, and an extra variable.
GUEST = {'name': 'fleet-7', 'vmid': 10007, 'node': 'pve2', 'type': 'qemu', 'status': 'running',
         'template': 0, 'cpu': 0.0123, 'tags': 'fleet;batch', 'suffix': '.lab'}


def ansible(template, variables):
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(template))


@pytest.mark.parametrize('template', [
    '{{ name }}-{{ vmid }}',
    '{{name}}.{{ node }}',
    'vm{{ vmid }}',
    '{{ vmid }}{{ template }}',
    '{{ name }}{{ suffix }}',
    '{{ type }}-{{ status }}-{{ tags }}',
    ' {{ name }} ',
])
def test_plain_references_render_as_ansible_does(template):
    substitution = hostname_template.parse(template)
    assert substitution is not None
    assert substitution.render(GUEST) == ansible(template, GUEST)


@pytest.mark.parametrize('template', [
    '{{ name | lower }}',
    "{{ name }}{{ suffix | default('.pve') }}",
    '{{ vmid + 1 }}',
    '{% if vmid %}a{% endif %}{{ name }}',
    '{# c #}{{ name }}',
    '{{ name }}\n',
    '{{ name }}',
    'plain',
    '{{ name }}}}',
])
def test_anything_else_is_the_templars(template):
    assert hostname_template.parse(template) is None


@pytest.mark.parametrize('variables', [
    {'name': 'web'},                          # vmid missing: the templar's error
    {'name': 'web', 'vmid': 0.5},             # a float's text is Jinja's
    {'name': 'web', 'vmid': True},            # a boolean's text is Jinja's
    {'name': 'web', 'vmid': None},
    {'name': '{{ other }}', 'vmid': 1},       # may be templated again
])
def test_values_it_cannot_be_sure_of_are_the_templars(variables):
    assert hostname_template.parse('{{ name }}-{{ vmid }}').render(variables) is None
