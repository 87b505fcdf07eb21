# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What real AnsibleModule answers for argument sets, for the validation-parity test.

stdin: {"module_name": str, "spec": <output of `cargo collection spec <module>`>,
        "cases": [<task arguments>, ...]}
stdout: {"version": <ansible-core version>, "messages": [<msg of the failure, or null>, ...]}

Each case is validated by constructing an AnsibleModule in-process with the module's
argument_spec and constraint lists, exactly as a Python module would.
"""

import io
import json
import sys
from contextlib import redirect_stdout

from ansible.module_utils import basic
from ansible.module_utils.basic import AnsibleModule, env_fallback
from ansible.release import __version__


def argument_spec(options):
    spec = {}
    for name, option in options.items():
        option = dict(option)
        env = option.pop("env_fallback", None)
        if env:
            option["fallback"] = (env_fallback, env)
        if "options" in option:
            option["options"] = argument_spec(option["options"])
        if "required_if" in option:
            option["required_if"] = [tuple(rule) for rule in option["required_if"]]
        spec[name] = option
    return spec


def answer(module_name, spec, case):
    args = dict(case, _ansible_module_name=module_name)
    basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode()
    if hasattr(basic, "_ANSIBLE_PROFILE"):
        basic._ANSIBLE_PROFILE = "legacy"
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            AnsibleModule(
                argument_spec=argument_spec(spec["argument_spec"]),
                mutually_exclusive=spec.get("mutually_exclusive", []),
                required_together=spec.get("required_together", []),
                required_one_of=spec.get("required_one_of", []),
                required_if=[tuple(rule) for rule in spec.get("required_if", [])],
                required_by=spec.get("required_by", {}),
                supports_check_mode=True,
            )
    except SystemExit:
        text = out.getvalue()
        return json.loads(text[text.index("{"):]).get("msg")
    return None


def main():
    request = json.load(sys.stdin)
    messages = [answer(request["module_name"], request["spec"], case) for case in request["cases"]]
    json.dump({"version": __version__, "messages": messages}, sys.stdout)


if __name__ == "__main__":
    main()
