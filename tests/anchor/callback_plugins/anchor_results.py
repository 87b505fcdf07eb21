# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Records every task result, with its wall time, as one JSON line.

Used by the anchor tests and the comparison benchmark: the file named by
ANCHOR_RESULTS_FILE gets {"name", "host", "outcome", "changed", "seconds", "start",
"end", "result"} per task and host. `seconds` runs from the task's start on that host to
its result, so it is the module's wall time as Ansible sees it (transfer + run + parse);
`start`/`end` are the same instants as Unix times, to measure a batch of parallel hosts.
"""

from __future__ import annotations

DOCUMENTATION = """
name: anchor_results
type: aggregate
short_description: write one JSON line per task result (with wall time) to ANCHOR_RESULTS_FILE
description:
  - Test-only callback of ferrox.proxmox's anchor tests and benchmark.
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
    CALLBACK_NAME = "anchor_results"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._path = os.environ.get("ANCHOR_RESULTS_FILE")
        self._started = {}

    def v2_runner_on_start(self, host, task):
        self._started[(host.get_name(), task._uuid)] = (time.monotonic(), time.time())

    def _record(self, result, outcome):
        if not self._path:
            return
        task = result._task
        host = result._host.get_name()
        started = self._started.pop((host, task._uuid), None)
        seconds = None if started is None else round(time.monotonic() - started[0], 3)
        payload = _plain(dict(result._result))
        line = {
            "name": str(task.get_name()),
            "host": host,
            "outcome": outcome,
            "changed": bool(payload.get("changed", False)),
            "seconds": seconds,
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
