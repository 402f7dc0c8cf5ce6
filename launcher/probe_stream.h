/* SPDX-License-Identifier: MIT */
/*
 * --interval DUR for a command's run: every DUR, one JSON line (analyze/
 * stream.h) with where each thread's time went in that interval, flushed
 * to the --stream file as it is made (tail -f works); a last line when the
 * run ends, from the run's closing account, so that every thread's
 * intervals sum to its figures in the artifact.
 *
 * It is a probe (probe.h) placed after every source, so that its collect()
 * sees the run's threads as the artifact will have them. At each tick it
 * reads the running accounts: with eBPF, a snapshot of the live threads
 * (the survivors' iterator) and the exit records that came through the
 * ring buffer since the last tick; with procfs alone, the accounts of its
 * last sample. Taskstats alone sees a thread only at its exit: the lines
 * then say so instead of giving figures.
 */
#ifndef TSARUN_STREAMPROBE_H
#define TSARUN_STREAMPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct probe;
struct sched_probe;
struct proc_probe;
struct stream_probe;

/* Where and how the lines go. */
struct stream_probe_opts {
	int fd;		  /* taken: closed by stream_probe__free() unless it is 2, stderr */
	const char *name; /* it, in messages */
	bool shared;	  /* its description is the command's too: its flags are never changed */
	uint64_t interval_ns;
	/*
	 * How much may wait in memory for a reader that falls behind (a FIFO,
	 * a pipe, a socket, a terminal: written without blocking; a regular
	 * file is written whole).
	 */
	uint64_t backlog_bytes;
	size_t width; /* of stderr, for its warnings (0: whole lines) */
};

/* NULL with errno set. */
struct stream_probe *stream_probe__new(const struct stream_probe_opts *o, struct sched_probe *sched,
				       struct proc_probe *proc);
void stream_probe__free(struct stream_probe *sp);

/* A line could not be written: -errno (the message is on stderr), else 0 (also when the reader left: EPIPE). */
int stream_probe__error(const struct stream_probe *sp);

void stream_probe__as_probe(struct stream_probe *sp, struct probe *out);

#endif /* TSARUN_STREAMPROBE_H */
