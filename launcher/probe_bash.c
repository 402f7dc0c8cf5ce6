// SPDX-License-Identifier: MIT
/* The --bash source: environment, socket, record reading (probe_bash.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/fscreds.h"
#include "lib/workdir.h"

#include "probe_bash.h"
#include "bashprof.h"
#include "probe.h"
#include "run.h"
#include "textsafe.h"
#include "tsa_wire.h"
#include "user.h"
#include "watchdog.h"

#ifndef TSARUN_LIBDIR
#define TSARUN_LIBDIR "/usr/local/lib/tsarun"
#endif

/* The files made in the work directory, '\0'-separated, for its removal. */
static const char work_files[] = "records\0fallback\0";

struct bash_probe {
	struct workdir wd; /* private, the script's user's (lib/workdir.h) */
	struct fscreds owner;
	bool change;
	char sock_path[108];
	char fallback_path[PATH_MAX + 16];
	char so_path[PATH_MAX];
	char env_path[PATH_MAX];
	int fd;
	uid_t uid; /* the script's user, who owns the fallback file */
	char **argv;
	int argc;
	struct bashprof *prof;
	char buf[TSA_WIRE_MAX_CHUNK + 64];
	char shebang[256]; /* the script's #! line, split in place (its options point here) */
};

#define SHEBANG_MAX_OPTS 8

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static char *next_word(char **s)
{
	char *w = *s + strspn(*s, " \t"), *e;

	if (!*w)
		return NULL;
	e = w + strcspn(w, " \t");
	if (*e)
		*e++ = '\0';
	*s = e;
	return w;
}

/*
 * bash in posix mode reads no BASH_ENV: `#!/bin/bash --posix` (or `-o
 * posix` split by `env -S`; the kernel's one word "-o posix" is bash's to
 * refuse) profiled nothing. bash runs without it and
 * the injector turns posix mode on as its last step (TSA_ENV_POSIX), which
 * is the same mode before the script's first line: $SHELLOPTS, $- and
 * POSIXLY_CORRECT=y as `bash --posix` has them. Returns how many options
 * are left.
 */
static int posix_from_opts(const char **opts, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		if (!strcmp(opts[i], "--posix")) {
			setenv(TSA_ENV_POSIX, "--posix", 0); /* POSIXLY_CORRECT's value wins */
			continue;
		}
		if (!strcmp(opts[i], "-o") && i + 1 < n && !strcmp(opts[i + 1], "posix")) {
			setenv(TSA_ENV_POSIX, "--posix", 0);
			i++;
			continue;
		}
		opts[k++] = opts[i];
	}
	return k;
}

/*
 * -v echoes every line bash reads, the injector's first (which turns -v
 * off for the start-up) among them: `#!/bin/bash -v` printed a line of
 * tsarun's before the script's own. bash runs without it and the injector
 * turns it on as its last step (TSA_ENV_VERBOSE), before the script's
 * first line, which bash echoes as `bash -v` would. Short options only
 * (`-v`, `-ev`; `-o verbose` and `--verbose` split by `env -S`), each as
 * its own word or one cluster; `+v` is left as it is. Returns how many
 * options are left.
 */
static int verbose_from_opts(const char **opts, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		char *w = (char *)opts[i];

		if (!strcmp(w, "--verbose") ||
		    (!strcmp(w, "-o") && i + 1 < n && !strcmp(opts[i + 1], "verbose"))) {
			setenv(TSA_ENV_VERBOSE, "1", 1);
			if (w[1] == 'o')
				i++; /* and its "verbose" */
			continue;
		}
		if (w[0] == '-' && w[1] && w[1] != '-' && strchr(w, 'v') && !strchr(w, 'o') &&
		    !strchr(w, 'O') && strspn(w + 1, "abefhiklmnprstuvxBCDEHPT") == strlen(w + 1)) {
			char *d = w + 1;

			for (const char *c = w + 1; *c; c++)
				if (*c != 'v')
					*d++ = *c;
			*d = '\0';
			setenv(TSA_ENV_VERBOSE, "1", 1);
			if (!w[1])
				continue;
		}
		opts[k++] = w;
	}
	return k;
}

/*
 * What the script's #! line asks for. `bash SCRIPT` ignores the line, so
 * bash's options on it (`#!/bin/bash -e`, or `#!/usr/bin/env -S bash -eu`)
 * would be lost: they are returned in opts, as the kernel or env would pass
 * them (the kernel: the rest of the line as one word). A script for another
 * interpreter is refused; one for sh runs under bash, with a note. Returns
 * the number of options, or -1 with err set.
 */
static int read_shebang(struct bash_probe *b, const char *script, const char **opts, bool quiet,
			char *err, size_t errlen)
{
	char *line = b->shebang, *rest, *interp, *name;
	int fd = open(script, O_RDONLY | O_CLOEXEC | O_NONBLOCK), n = 0;
	struct stat st;
	ssize_t len;

	if (fd < 0)
		return 0; /* bash says why */
	/* Only a file: reading a pipe (--bash /dev/stdin) would take the script's first bytes. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	len = read(fd, line, sizeof(b->shebang) - 1);
	close(fd);
	if (len < 2 || line[0] != '#' || line[1] != '!')
		return 0;
	line[len] = '\0';
	line[strcspn(line, "\n")] = '\0';
	rest = line + 2;
	interp = next_word(&rest);
	if (!interp)
		return 0;
	rest += strspn(rest, " \t");
	for (char *e = rest + strlen(rest); e > rest && (e[-1] == ' ' || e[-1] == '\t');)
		*--e = '\0';
	name = interp;
	if (!strcmp(base_name(interp), "env")) {
		bool split = !strncmp(rest, "-S", 2);

		if (split)
			rest += 2;
		name = next_word(&rest);
		if (!name)
			return 0;
		while (split && n < SHEBANG_MAX_OPTS && (opts[n] = next_word(&rest)))
			n++;
	} else if (*rest) {
		opts[n++] = rest;
	}
	if (!strcmp(base_name(name), "bash"))
		return verbose_from_opts(opts, posix_from_opts(opts, n));
	if (!strcmp(base_name(name), "sh") || !strcmp(base_name(name), "dash")) {
		if (!quiet) {
			/* The script's name and its #! line are its own text: escaped. */
			fputs("tsarun: note: ", stderr);
			textsafe_fput(stderr, textsafe_term, script, TEXTSAFE_NUL);
			textsafe_term_line(stderr, " asks for ", name,
					   "; --bash runs it with bash");
		}
		return 0;
	}
	snprintf(err, errlen,
		 "%s is a script for %s (its #! line), not for bash: profile it with "
		 "`tsarun -- %s`",
		 script, name, script);
	return -1;
}

/* The builtin and the injector: beside the binary (build tree), else installed. */
static int find_files(struct bash_probe *b)
{
	return bash_probe_find_files(b->so_path, b->env_path);
}

int bash_probe_find_files(char *so_path, char *env_path)
{
	char exe[PATH_MAX], *slash;
	const char *dirs[4];
	char here[PATH_MAX + 16], installed[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int nd = 0;

	if (getenv("TSARUN_BASH_LIBDIR"))
		dirs[nd++] = getenv("TSARUN_BASH_LIBDIR");
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(here, sizeof(here), "%s/shell", exe);
			dirs[nd++] = here;
			/* PREFIX/bin/tsarun -> PREFIX/lib/tsarun, wherever PREFIX is. */
			snprintf(installed, sizeof(installed), "%s/../lib/tsarun", exe);
			dirs[nd++] = installed;
		}
	}
	dirs[nd++] = TSARUN_LIBDIR;
	for (int i = 0; i < nd; i++) {
		snprintf(so_path, PATH_MAX, "%s/tsarun-trap.so", dirs[i]);
		snprintf(env_path, PATH_MAX, "%s/tsarun-env.bash", dirs[i]);
		if (!access(env_path, R_OK) && !access(so_path, R_OK))
			return 0;
	}
	return -ENOENT;
}

const char *bash_probe_missing(void)
{
	return "cannot find tsarun-trap.so and tsarun-env.bash (looked beside the binary and "
	       "in " TSARUN_LIBDIR "; set TSARUN_BASH_LIBDIR, or make install)";
}

/* bash expands BASH_ENV before using it: the path must mean itself. */
static bool plain_path(const char *p)
{
	return !strpbrk(p, "$`\\\"'~ \t\n");
}

/*
 * The record socket, bound in the work directory through its descriptor
 * (never its path again) and with the script user's credentials, so that
 * the socket is that user's as made: nothing to chown.
 */
static int make_socket(struct bash_probe *b)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct fscreds_save sv;
	int size = 8 << 20, err;

	b->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (b->fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/records", b->wd.fd);
	err = fscreds_enter(b->change ? &b->owner : NULL, &sv);
	if (!err && bind(b->fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = -errno;
	fscreds_leave(&sv);
	if (err) {
		close(b->fd);
		b->fd = -1;
		return err;
	}
	/* Room for bursts while the event loop is busy; root may exceed rmem_max. */
	if (setsockopt(b->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(b->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	return 0;
}

static int set_env(struct bash_probe *b, const struct bash_probe_opts *o)
{
	const char *user_env = getenv("BASH_ENV");

	if (user_env && *user_env && strcmp(user_env, b->env_path)) {
		if (setenv(TSA_ENV_USER_ENV, user_env, 1))
			return -errno;
	} else {
		unsetenv(TSA_ENV_USER_ENV);
	}
	if (setenv("BASH_ENV", b->env_path, 1) || setenv(TSA_ENV_SOCK, b->sock_path, 1) ||
	    setenv(TSA_ENV_SO, b->so_path, 1) ||
	    setenv("TSARUN_BASH_FALLBACK", b->fallback_path, 1))
		return -errno;
	/*
	 * POSIXLY_CORRECT in the environment starts bash in posix mode, which
	 * reads no BASH_ENV: the injector exports it again and turns the mode
	 * on (see posix_from_opts). A nested bash inherits it and is not
	 * followed: the report counts bash processes that sent nothing.
	 */
	unsetenv(TSA_ENV_POSIX);
	unsetenv(TSA_ENV_VERBOSE);
	if (getenv("POSIXLY_CORRECT")) {
		char *v;
		int ret = 0;

		if (asprintf(&v, "=%s", getenv("POSIXLY_CORRECT")) < 0)
			return -ENOMEM;
		if (setenv(TSA_ENV_POSIX, v, 1) || unsetenv("POSIXLY_CORRECT"))
			ret = -errno;
		free(v);
		if (ret)
			return ret;
	}
	/* A tsarun inside a profiled script starts a tree of its own. */
	unsetenv(TSA_ENV_ROOT);
	unsetenv(TSA_ENV_CAL);
	if (o->no_follow)
		setenv(TSA_ENV_NOFOLLOW, "1", 1);
	else
		unsetenv(TSA_ENV_NOFOLLOW);
	if (o->recalibrate)
		setenv(TSA_ENV_RECAL, "1", 1);
	else
		unsetenv(TSA_ENV_RECAL);
	return 0;
}

struct bash_probe *bash_probe__new(const struct bash_probe_opts *o, const struct target_user *u,
				   char *err, size_t errlen)
{
	struct bash_probe *b = calloc(1, sizeof(*b));
	const char *opts[SHEBANG_MAX_OPTS];
	struct fscreds_save sv;
	char note[256];
	int ret, fd, nopts = 0;

	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	b->fd = -1;
	b->wd.fd = b->wd.parent = -1;
	b->uid = u && u->change ? u->uid : geteuid();
	b->change = u && u->change;
	if (b->change)
		b->owner = (struct fscreds){
		    .uid = u->uid, .gid = u->gid, .groups = u->groups, .ngroups = u->ngroups};
	if (find_files(b)) {
		snprintf(err, errlen, "%s", bash_probe_missing());
		goto out_free;
	}
	if (!plain_path(b->env_path)) {
		snprintf(err, errlen,
			 "the injector's path '%s' has characters bash would expand in BASH_ENV; "
			 "install tsarun elsewhere",
			 b->env_path);
		goto out_free;
	}
	/* In $TMPDIR, the script's user's; its socket's address must fit in sun_path. */
	if (workdir_make(&b->wd, "tsarun-bash", b->change ? &b->owner : NULL,
			 sizeof(b->sock_path) - sizeof("/records"), note, sizeof(note), err,
			 errlen))
		goto out_free;
	if (note[0] && !o->quiet)
		textsafe_term_line(stderr, "tsarun: note: --bash: ", note, "");
	/* Removed by the watchdog should this process die first. */
	watchdog_register_dir(b->wd.parent, b->wd.name, b->wd.fd, work_files,
			      b->change ? u->uid : geteuid(), b->change ? u->gid : getegid());
	snprintf(b->sock_path, sizeof(b->sock_path), "%s/records", b->wd.path);
	snprintf(b->fallback_path, sizeof(b->fallback_path), "%s/fallback", b->wd.path);
	ret = make_socket(b);
	if (ret) {
		snprintf(err, errlen, "cannot create the record socket '%s': %s", b->sock_path,
			 strerror(-ret));
		goto out_dir;
	}
	if (!fscreds_enter(b->change ? &b->owner : NULL, &sv)) {
		fd = openat(b->wd.fd, "fallback",
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
		fscreds_leave(&sv);
	}
	ret = set_env(b, o);
	if (ret) {
		snprintf(err, errlen, "cannot set the environment: %s", strerror(-ret));
		goto out_dir;
	}
	if (!o->command && o->argc) {
		nopts = read_shebang(b, o->argv[0], opts, o->quiet, err, errlen);
		if (nopts < 0)
			goto out_dir;
	}
	b->argc = o->argc + 1 + (o->command ? 1 : 0) + nopts;
	b->argv = calloc((size_t)b->argc + 1, sizeof(*b->argv));
	b->prof = bashprof__new();
	if (!b->argv || !b->prof) {
		snprintf(err, errlen, "out of memory");
		goto out_dir;
	}
	b->argv[0] = "bash";
	if (o->command) {
		b->argv[1] = "-c";
		for (int i = 0; i < o->argc; i++)
			b->argv[2 + i] = o->argv[i];
	} else {
		for (int i = 0; i < nopts; i++)
			b->argv[1 + i] = (char *)opts[i];
		for (int i = 0; i < o->argc; i++)
			b->argv[1 + nopts + i] = o->argv[i];
	}
	return b;

out_dir:
	bash_probe__free(b);
	return NULL;
out_free:
	free(b);
	return NULL;
}

void bash_probe__free(struct bash_probe *b)
{
	if (!b)
		return;
	if (b->fd >= 0)
		close(b->fd);
	/* Through its descriptor: a directory the script swapped for a link is not followed. */
	if (b->wd.fd >= 0) {
		workdir_remove(&b->wd, work_files, b->change ? &b->owner : NULL);
		watchdog_forget_dir();
	}
	bashprof__free(b->prof);
	free(b->argv);
	free(b);
}

void bash_probe__work_dir(const struct bash_probe *b, int *dirfd, int *parent)
{
	*dirfd = b->wd.fd;
	*parent = b->wd.parent;
}

char *const *bash_probe__argv(const struct bash_probe *b)
{
	return b->argv;
}

int bash_probe__argc(const struct bash_probe *b)
{
	return b->argc;
}

static int probe_fd(struct probe *p)
{
	struct bash_probe *b = p->ctx;

	return b->fd;
}

static int drain(struct bash_probe *b)
{
	for (;;) {
		ssize_t n = recv(b->fd, b->buf, sizeof(b->buf), MSG_DONTWAIT | MSG_TRUNC);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		/* A datagram larger than any chunk was cut: bashprof counts it as bad. */
		bashprof__feed(b->prof, b->buf,
			       (size_t)n > sizeof(b->buf) ? sizeof(b->buf) : (size_t)n);
		if ((size_t)n > sizeof(b->buf))
			bashprof__feed(b->prof, b->buf, 0);
	}
}

static int probe_ready(struct probe *p)
{
	return drain(p->ctx);
}

/* The pure-bash trap's lines: "PID EPOCHREALTIME LINENO DEPTH COMMAND". */
static void read_fallback(struct bash_probe *b, uint64_t origin_ns)
{
	/*
	 * The directory belongs to the script's user, who could put a link to
	 * any file there for root to read into the artifact: only a regular
	 * file of that user's (or root's), never through a symbolic link.
	 */
	int fd = openat(b->wd.fd, "fallback", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct timespec real, mono;
	struct stat st;
	FILE *f;

	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_uid != b->uid && st.st_uid != 0) ||
	    !(f = fdopen(fd, "r"))) {
		close(fd);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	bashprof__feed_fallback(b->prof, f,
				((int64_t)real.tv_sec - (int64_t)mono.tv_sec) * 1000000000ll +
				    ((int64_t)real.tv_nsec - (int64_t)mono.tv_nsec));
	fclose(f);
	(void)origin_ns;
}

static int probe_collect(struct probe *p, struct run *r)
{
	struct bash_probe *b = p->ctx;
	int ret = drain(b);

	read_fallback(b, r->start_mono_ns);
	bashprof__finish(b->prof, r->nprocs ? r : NULL, r->start_mono_ns);
	r->bash = b->prof;
	/* The next run (-r) gets a profile of its own. */
	b->prof = bashprof__new();
	if (!b->prof)
		return -ENOMEM;
	return ret;
}

void bash_probe__as_probe(struct bash_probe *b, struct probe *p)
{
	memset(p, 0, sizeof(*p));
	p->name = "bash";
	p->ctx = b;
	p->fd = probe_fd;
	p->on_ready = probe_ready;
	p->collect = probe_collect;
}
