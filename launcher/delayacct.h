/* SPDX-License-Identifier: MIT */
/*
 * kernel.task_delayacct: the switch without which the kernel keeps no
 * block I/O, swap-in, reclaim, thrashing, compaction, write-protect copy or
 * IRQ delays for a task. It is read when a task is created: a task started
 * while it was off never gets those counters, so it must be on before the
 * command is forked.
 */
#ifndef TSARUN_DELAYACCT_H
#define TSARUN_DELAYACCT_H

#define DELAYACCT_SYSCTL "/proc/sys/kernel/task_delayacct"

/* The switch's value: 0 or 1, or -1 when the kernel has none (or it cannot be read). */
int delayacct_read(void);

#endif /* TSARUN_DELAYACCT_H */
