/* SPDX-License-Identifier: MIT */
/*
 * The --bash source. bash_probe__new() runs before the spawner is forked:
 * it finds the builtin and the injector (build tree or $(LIBDIR)), makes a
 * private directory with the record socket, sets the environment every
 * bash of the tree inherits (BASH_ENV and TSARUN_BASH_*), and builds the
 * command line (bash SCRIPT ARG... or bash -c CMDS ARG...). During the run
 * the probe reads the records as they come (fd()/on_ready()) into a
 * struct bashprof; collect() finishes it against the eBPF tree and hands
 * it to the run (r->bash), which then owns it.
 */
#ifndef TSARUN_BASHPROBE_H
#define TSARUN_BASHPROBE_H

#include <stdbool.h>
#include <stddef.h>

struct bash_probe;
struct probe;
struct target_user;

/* What --bash was given (options.h holds them for the run). */
struct bash_probe_opts {
	char *const *argv; /* SCRIPT ARG..., or CMDS ARG... with command */
	int argc;
	bool command;	  /* -c: argv[0] is a command string */
	bool no_follow;	  /* --bash-no-follow */
	bool recalibrate; /* --bash-recalibrate */
	bool quiet;	  /* -q: no notes on stderr */
};

struct bash_probe *bash_probe__new(const struct bash_probe_opts *o, const struct target_user *u,
				   char *err, size_t errlen);
void bash_probe__free(struct bash_probe *b);

/* The command to spawn: bash and its arguments, NULL-terminated. */
char *const *bash_probe__argv(const struct bash_probe *b);
int bash_probe__argc(const struct bash_probe *b);

void bash_probe__as_probe(struct bash_probe *b, struct probe *p);

/* The work directory's descriptor and its parent's, for the sandbox (sandbox.h). */
void bash_probe__work_dir(const struct bash_probe *b, int *dirfd, int *parent);

/*
 * Where the builtin and the injector are: 0 with both paths (PATH_MAX each),
 * -ENOENT when neither TSARUN_BASH_LIBDIR, the build tree nor the installed
 * library directory has them; bash_probe_missing() then says so.
 */
int bash_probe_find_files(char *so_path, char *env_path);
const char *bash_probe_missing(void);

#endif /* TSARUN_BASHPROBE_H */
