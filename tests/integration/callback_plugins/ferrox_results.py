# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Records every task result as one JSON line, for the integration test harness.

The harness (tests/integration/src/lib.rs), the anchor tests and the comparison
benchmark enable this callback and read the file named by FERROX_RESULTS_FILE after the
play: {"name", "host", "outcome", "changed", "seconds", "start", "end", "result"} per task
and host. `seconds` runs from the task's start on that host to its result (the module's
wall time as Ansible sees it); `start`/`end` are the same instants as Unix times, to
measure a batch of parallel hosts. The normal screen output is unchanged, so a failing
test still shows what ansible-playbook printed.
"""

from __future__ import annotations

DOCUMENTATION = """
name: ferrox_results
type: aggregate
short_description: write one JSON line per task result to FERROX_RESULTS_FILE
description:
  - Test-only callback of ferrox.proxmox's integration harness.
requirements:
  - enabled through callbacks_enabled
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase


def _plain(value):
    """A JSON-serialisable copy (tagged/unsafe strings become plain strings)."""
    return json.loads(json.dumps(value, default=str))


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "ferrox_results"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._path = os.environ.get("FERROX_RESULTS_FILE")
        self._started = {}

    def v2_runner_on_start(self, host, task):
        self._started[(host.get_name(), task._uuid)] = (time.monotonic(), time.time())

    def _record(self, result, outcome):
        if not self._path:
            return
        raw = getattr(result, "_result", None)
        if raw is None:
            raw = getattr(result, "result", {})
        task = getattr(result, "_task", None) or getattr(result, "task", None)
        name = task.get_name() if task is not None else ""
        host_obj = getattr(result, "_host", None) or getattr(result, "host", None)
        host = host_obj.get_name() if host_obj is not None else ""
        started = self._started.pop((host, getattr(task, "_uuid", None)), None)
        payload = _plain(dict(raw))
        line = {
            "name": str(name),
            "host": host,
            "outcome": outcome,
            "changed": bool(payload.get("changed", False)),
            "seconds": None if started is None else round(time.monotonic() - started[0], 3),
            "start": None if started is None else started[1],
            "end": time.time(),
            "result": payload,
        }
        with open(self._path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def v2_runner_on_ok(self, result):
        self._record(result, "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, "failed")

    def v2_runner_on_skipped(self, result):
        self._record(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._record(result, "unreachable")
