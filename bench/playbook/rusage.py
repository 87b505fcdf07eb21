# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/cluster-size's meter: runs `BINARY ARGS_FILE` RUNS times and prints the median
wall ms, the median CPU ms (user + system, from wait4's microsecond rusage: /usr/bin/time
rounds to 10 ms) and the largest peak RSS in KiB, separated by spaces. Fails when a run
reports failure. Each run goes through /usr/bin/time, whose %M is the binary's own peak
(a child forked from Python would report Python's), and whose wait4 rusage includes the
binary's CPU time."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time


def main() -> None:
    binary, args_file, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    walls, cpus, rss = [], [], 0
    rss_file = args_file + '.rss'
    for _ in range(runs):
        start = time.monotonic()
        proc = subprocess.Popen(['/usr/bin/time', '-f', '%M', '-o', rss_file, binary, args_file], stdout=subprocess.PIPE)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = status
        walls.append((time.monotonic() - start) * 1000.0)
        cpus.append((usage.ru_utime + usage.ru_stime) * 1000.0)
        with open(rss_file) as f:
            rss = max(rss, int(f.read().split()[-1]))
        result = json.loads(out)
        if status != 0 or result.get('failed'):
            sys.exit('%s failed: %s' % (binary, result.get('msg')))
    print('%.1f %.1f %d' % (statistics.median(walls), statistics.median(cpus), rss))


if __name__ == '__main__':
    main()
