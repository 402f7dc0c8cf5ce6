/* SPDX-License-Identifier: MIT */
/*
 * The procfs source: samples /proc/<pid>/task/<tid>/stat and schedstat of
 * every thread of the command's tree every --sample, and folds them into
 * accounts (analyze/sampling.h). It needs no privilege.
 *
 * The tree is found by scanning /proc for new processes whose parent is in
 * the tree (or is tsarun, the subreaper, for orphans): only a pid that was
 * not in the previous listing is read, so a scan costs one directory read
 * of /proc plus a stat read per new process, and the tree's own threads.
 * Not /proc/<pid>/task/<tid>/children: that file exists only with
 * CONFIG_PROC_CHILDREN (not on every kernel, e.g. not on this project's CI
 * machine), and the kernel documents it as missing children when the
 * parent is not frozen.
 *
 * When the eBPF source is active too, the samples are a cross-check of its
 * figures (matched by tid and start time), never added to them.
 */
#ifndef TSARUN_PROCPROBE_H
#define TSARUN_PROCPROBE_H

#include <stddef.h>
#include <stdint.h>

struct probe;
struct proc_probe;

#define PROC_SAMPLE_DEFAULT_NS 10000000ull /* 10 ms */

/* NULL with errno and a reason in err when /proc cannot be sampled here. */
struct proc_probe *proc_probe__new(uint64_t sample_ns, char *err, size_t errlen);
void proc_probe__free(struct proc_probe *p);

struct procfs_stat;
struct procfs_schedstat;

/*
 * Read one thread's stat and schedstat through its directory under taskfd
 * (/proc/PID/task), so that both are the same task's. 0 or -errno
 * (-ENOENT, -ESRCH: it has exited).
 */
int procprobe_read_thread(int taskfd, const char *tid, struct procfs_stat *st,
			  struct procfs_schedstat *ss);

struct thread_acct;

/*
 * --interval: every thread sampled so far this run, as accounted at its
 * last sample (times relative to origin), into *buf, the caller's array of
 * *cap entries (NULL and 0 at first), grown as needed; *n: how many.
 * Returns 0 or -ENOMEM.
 */
int proc_probe__accounts(const struct proc_probe *p, uint64_t origin, struct thread_acct **buf,
			 size_t *cap, size_t *n);

/* Present it to the supervisor; its collect must come after the eBPF probe's. */
void proc_probe__as_probe(struct proc_probe *p, struct probe *out);

#endif /* TSARUN_PROCPROBE_H */
