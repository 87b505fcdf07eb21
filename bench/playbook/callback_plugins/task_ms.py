# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/run's timer: one line `<task name>\t<ms>` per task result, from the task's
start to its result as the strategy sees them, written to $FERROX_TASK_MS_FILE."""

from __future__ import annotations

import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = r"""
name: task_ms
type: aggregate
short_description: Per-task wall time for bench/run
description:
  - Writes the milliseconds from each task's start to its result into E(FERROX_TASK_MS_FILE).
author:
  - ferrox.proxmox contributors (!UNKNOWN)
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'task_ms'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._start = None
        self._out = open(os.environ['FERROX_TASK_MS_FILE'], 'a')

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._start = time.monotonic()

    def _record(self, result):
        ms = (time.monotonic() - self._start) * 1000.0
        self._out.write('%s\t%.1f\t%s\n' % (result._task.get_name(), ms, 'failed' if result.is_failed() else 'ok'))
        self._out.flush()

    v2_runner_on_ok = _record
    v2_runner_on_failed = _record
