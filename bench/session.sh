#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/session.sh NICE CMD...: runs CMD in a session of its own (setsid) whose autogroup, and CMD,
# have the nice value NICE, as a separate user's job. Linux's scheduler shares the cores between
# sessions first (autogroups, /proc/sys/kernel/sched_autogroup_enabled) and only then between the
# processes of a session, so a process's own nice value only ranks it within its session; a
# negative NICE (root) lets a benchmark outrank the other users of a shared machine. Started with
# `&`, $! is the session's leader (exec all the way), whose process group can be ended as a whole.
n=$1
shift
exec setsid --wait bash -c \
  'echo "$1" > /proc/self/autogroup 2> /dev/null || true; shift; exec nice -n "$0" "$@"' \
  "$n" "$n" "$@"
