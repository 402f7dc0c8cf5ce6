// SPDX-License-Identifier: MIT
/*
 * Output files (outfile.h): directories opened once and resolved the way
 * systemd's chase() does it, a new file per write committed by rename, and
 * descriptors written without ever blocking.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "fscreds.h"
#include "outfile.h"
#include "vec.h"

#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* How many symbolic links one resolution follows, as the kernel's own limit. */
#define MAX_HOPS 40

/* Directories: one descriptor per directory, shared by the files planned in it. */
struct outdir {
	int fd;	       /* O_RDONLY|O_DIRECTORY, or O_PATH when the user may not read it */
	bool readable; /* fd can be fsynced */
	dev_t dev;
	ino_t ino;
	int refs;
	char *path;
};

static struct outdir **dirs;
static size_t ndirs, dirs_cap;
static int cancel_fd = -1;
static outfile_temp_hook temp_hook;

enum kind {
	K_NONE = 0,
	K_NEW,		/* a new file renamed over the path (there was nothing, a link or a file) */
	K_IN_PLACE_REG, /* a regular file the user may write, in a directory the user may not */
	K_FD_OWN,	/* a descriptor of our own: non-blocking (terminal, FIFO, null) */
	K_FD_SHARED,	/* a description shared with others (a pipe that could not be reopened) */
	K_FD_SOCKET,	/* a socket: send(MSG_DONTWAIT) */
	K_FD_REGULAR,	/* a regular file behind a descriptor: written at its offset */
	K_APPEND,	/* appended to, opened when written */
	K_STREAM,	/* OUTFILE_STREAM: opened at plan, handed over */
};

struct outfile {
	char *path;
	char *base; /* the name in dir */
	enum outfile_mode mode;
	enum kind kind;
	const char *what, *hint;
	struct outdir *dir;
	int fd;	      /* the new file, or the planned descriptor */
	int named_fd; /* "-" or /dev/fd/N: which one, else -1 */
	bool tmpfile; /* fd is an O_TMPFILE, not yet linked */
	char *tmpname;
	FILE *f;
	bool done;
	bool give;
	uid_t give_uid;
	gid_t give_gid;
	int werr; /* the first write error on a descriptor (errno): stdio keeps only its flag */
	bool keep_old; /* a regular file was there when planned: keep it as base.old */
	bool old_kept;
};

void outfile_set_cancel_fd(int fd)
{
	cancel_fd = fd;
}

int outfile_cancel_fd(void)
{
	return cancel_fd;
}

void outfile_set_temp_hook(outfile_temp_hook hook)
{
	temp_hook = hook;
}

size_t outfile_dirs(int *fds, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < ndirs && n < max; i++)
		fds[n++] = dirs[i]->fd;
	return n;
}

/* "cannot write WHAT 'PATH': REASON HINT" */
static void say(char *err, size_t errlen, const char *what, const char *path, const char *hint,
		const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "cannot write %s%s'%s': %s%s", what ? what : "", what ? " " : "",
		 path, reason, hint ? hint : "");
}

/*
 * May this process follow a symbolic link that st describes? One that
 * neither root nor the user it acts for owns was put there by someone
 * else (a shared directory, even one that fs.protected_symlinks does not
 * cover), to send the write elsewhere. An unprivileged process follows
 * any: it can only write where it may anyway.
 */
static bool link_allowed(const struct stat *st)
{
	const struct fscreds *c = fscreds_default();
	uid_t self = c ? c->uid : geteuid();

	if (geteuid() != 0)
		return true;
	return st->st_uid == 0 || st->st_uid == self;
}

static int open_root(void)
{
	return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static int dup_start(int start)
{
	if (start == AT_FDCWD)
		return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fcntl(start, F_DUPFD_CLOEXEC, 3);
}

/*
 * Resolve the directory path from start, one component at a time (O_PATH,
 * O_NOFOLLOW, fstat), following only links link_allowed() accepts, making
 * missing components when create. Returns an O_PATH descriptor, or -errno
 * with why set for what the error itself does not say.
 */
static int walk(int start, const char *path, bool create, char *why, size_t whylen)
{
	char *buf = strdup(path), *p, *next, shown[PATH_MAX];
	int fd, nfd, hops = 0, ret = 0;
	struct stat st;

	why[0] = '\0';
	if (!buf)
		return -ENOMEM;
	fd = path[0] == '/' ? open_root() : dup_start(start);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	snprintf(shown, sizeof(shown), "%s", path[0] == '/' ? "" : ".");
	for (p = buf; ret == 0;) {
		char *comp;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		comp = p;
		next = strchr(p, '/');
		if (next)
			*next++ = '\0';
		else
			next = p + strlen(p);
		p = next;
		if (!strcmp(comp, "."))
			continue;
		if (strlen(shown) + strlen(comp) + 2 < sizeof(shown)) {
			strcat(shown, "/");
			strcat(shown, comp);
		}
		nfd = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0755) && errno != EEXIST) {
				ret = -errno;
				break;
			}
			nfd = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0 || fstat(nfd, &st)) {
			ret = -errno;
			if (nfd >= 0)
				close(nfd);
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			close(fd);
			fd = nfd;
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			close(nfd);
			ret = -ENOTDIR;
			break;
		}
		/* A symbolic link: whose, and where to. */
		if (!link_allowed(&st)) {
			snprintf(why, whylen,
				 "'%s' is a symbolic link of uid %u's, neither root's nor the "
				 "user's tsarun writes for: tsarun does not follow it",
				 shown + (path[0] == '/' ? 0 : 2), (unsigned)st.st_uid);
			close(nfd);
			ret = -ELOOP;
			break;
		}
		if (++hops > MAX_HOPS) {
			close(nfd);
			ret = -ELOOP;
			break;
		}
		{
			char target[PATH_MAX], *nb;
			ssize_t n = readlinkat(nfd, "", target, sizeof(target) - 1);

			close(nfd);
			if (n < 0) {
				ret = -errno;
				break;
			}
			target[n] = '\0';
			if (asprintf(&nb, "%s/%s", target, next) < 0) {
				ret = -ENOMEM;
				break;
			}
			free(buf);
			buf = p = nb;
			if (target[0] == '/') {
				close(fd);
				fd = open_root();
				if (fd < 0)
					ret = -errno;
			}
		}
	}
	if (ret && fd >= 0) {
		close(fd);
		fd = -1;
	}
out:
	free(buf);
	return ret ? ret : fd;
}

/* The fast way, where the kernel has it: no link anywhere in the path, in one call. */
static int open_no_links(int start, const char *path)
{
	struct open_how how = {
	    .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, start, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

static struct outdir *dir_register(int pathfd, const char *path, int *err)
{
	struct outdir *d, **nd;
	struct stat st;
	int fd;

	if (fstat(pathfd, &st)) {
		*err = -errno;
		close(pathfd);
		return NULL;
	}
	for (size_t i = 0; i < ndirs; i++)
		if (dirs[i]->dev == st.st_dev && dirs[i]->ino == st.st_ino) {
			close(pathfd);
			dirs[i]->refs++;
			return dirs[i];
		}
	nd = vec_grow(dirs, &dirs_cap, ndirs + 1, sizeof(*nd), 8);
	if (!nd) {
		close(pathfd);
		*err = -ENOMEM;
		return NULL;
	}
	dirs = nd;
	d = calloc(1, sizeof(*d));
	if (!d) {
		close(pathfd);
		*err = -ENOMEM;
		return NULL;
	}
	/* A directory that can be read can be fsynced after the rename. */
	fd = openat(pathfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		close(pathfd);
		d->readable = true;
	} else {
		fd = pathfd;
	}
	d->fd = fd;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->refs = 1;
	d->path = strdup(path);
	dirs[ndirs++] = d;
	return d;
}

int outdir_resolve(int start, const char *path, bool create, char *why, size_t whylen)
{
	struct fscreds_save sv;
	int fd, ret;

	why[0] = '\0';
	ret = fscreds_enter(NULL, &sv);
	if (ret) {
		snprintf(why, whylen, "cannot take the user's rights: %s", strerror(-ret));
		return ret;
	}
	fd = open_no_links(start, path);
	if (fd == -ELOOP || fd == -ENOSYS || fd == -EINVAL || fd == -E2BIG || fd == -EPERM ||
	    fd == -EXDEV || fd == -EAGAIN || (fd == -ENOENT && create))
		fd = walk(start, path, create, why, whylen);
	fscreds_leave(&sv);
	if (fd < 0 && !why[0])
		snprintf(why, whylen, "%s", strerror(-fd));
	return fd;
}

struct outdir *outdir__open(const struct outdir *base, const char *path, bool create, char *err,
			    size_t errlen)
{
	int fd = outdir_resolve(base ? base->fd : AT_FDCWD, path, create, err, errlen), ret = 0;
	struct outdir *d;

	if (fd < 0)
		return NULL;
	d = dir_register(fd, path, &ret);
	if (!d)
		snprintf(err, errlen, "%s", strerror(-ret));
	return d;
}

void outdir__free(struct outdir *d)
{
	if (!d || --d->refs > 0)
		return;
	for (size_t i = 0; i < ndirs; i++)
		if (dirs[i] == d) {
			dirs[i] = dirs[--ndirs];
			break;
		}
	close(d->fd);
	free(d->path);
	free(d);
}

int outdir__fd(const struct outdir *d)
{
	return d->fd;
}

const char *outdir__path(const struct outdir *d)
{
	return d->path;
}

/* "/dev/stdout", "/dev/fd/3": which descriptor; -1 for any other path. */
static int descriptor_name(const char *path)
{
	static const char *const prefixes[] = {"/dev/fd/", "/proc/self/fd/"};
	char *end;
	long n;

	if (!strcmp(path, "/dev/stdin"))
		return 0;
	if (!strcmp(path, "/dev/stdout"))
		return 1;
	if (!strcmp(path, "/dev/stderr"))
		return 2;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t len = strlen(prefixes[i]);

		if (strncmp(path, prefixes[i], len) || path[len] < '0' || path[len] > '9')
			continue;
		n = strtol(path + len, &end, 10);
		if (!*end && n >= 0 && n < INT_MAX)
			return (int)n;
	}
	return -1;
}

static bool is_null(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 3;
}

static const char *type_name(mode_t m)
{
	return S_ISFIFO(m)   ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISDIR(m)  ? "a directory"
			     : "not a regular file";
}

/* A descriptor tsarun was given ("-", /dev/stdout, /dev/fd/N). */
static int plan_descriptor(struct outfile *of, int n, char *err, size_t errlen)
{
	int fl = fcntl(n, F_GETFL), fd;
	struct fscreds_save sv;
	struct stat st;
	char proc[32];

	of->named_fd = n;
	if (fl < 0) {
		say(err, errlen, of->what, of->path, of->hint,
		    "it names descriptor %d, which tsarun was not given", n);
		return -EBADF;
	}
	if ((fl & O_ACCMODE) == O_RDONLY) {
		say(err, errlen, of->what, of->path, of->hint,
		    "descriptor %d is not open for writing", n);
		return -EBADF;
	}
	if (fstat(n, &st))
		return -errno;
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
		of->kind = K_FD_REGULAR;
	} else if (S_ISSOCK(st.st_mode)) {
		of->kind = K_FD_SOCKET;
	} else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
		/*
		 * A description of our own, non-blocking: O_NONBLOCK on the one
		 * tsarun was given would reach the command's writes too.
		 */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", n);
		if (fscreds_enter(NULL, &sv) == 0) {
			fd = open(proc, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
			fscreds_leave(&sv);
			if (fd >= 0) {
				of->fd = fd;
				of->kind = K_FD_OWN;
				return 0;
			}
		}
		of->kind = K_FD_SHARED;
	} else {
		say(err, errlen, of->what, of->path, of->hint, "descriptor %d is %s", n,
		    type_name(st.st_mode));
		return -EINVAL;
	}
	of->fd = fcntl(n, F_DUPFD_CLOEXEC, 3);
	return of->fd < 0 ? -errno : 0;
}

/*
 * Open base in the planned directory as the user, without following a link
 * (flags get O_NOFOLLOW, O_NOCTTY, O_CLOEXEC). Returns the descriptor or -errno.
 */
static int open_in_dir(const struct outfile *of, int flags, mode_t mode)
{
	struct fscreds_save sv;
	int fd, ret = fscreds_enter(NULL, &sv);

	if (ret)
		return ret;
	fd = openat(of->dir->fd, of->base, flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);
	if (fd < 0)
		fd = -errno;
	fscreds_leave(&sv);
	return fd;
}

/* A terminal or the null device, opened as the user: in place. */
static int plan_char_device(struct outfile *of, char *err, size_t errlen)
{
	int fd = open_in_dir(of, O_WRONLY | O_NONBLOCK, 0);
	struct stat st;

	if (fd < 0) {
		say(err, errlen, of->what, of->path, of->hint, "%s", strerror(-fd));
		return fd;
	}
	if (fstat(fd, &st) || !(is_null(&st) || isatty(fd))) {
		close(fd);
		say(err, errlen, of->what, of->path, of->hint,
		    "a character device other than a terminal or the null device: tsarun does "
		    "not write into it (name a regular file, or - for standard output)");
		return -EINVAL;
	}
	of->fd = fd;
	of->kind = K_FD_OWN;
	return 0;
}

/* Can the user make a file in the planned directory? 0 or -errno. */
static int dir_writable(const struct outfile *of)
{
	struct fscreds_save sv;
	int ret = fscreds_enter(NULL, &sv);

	if (ret)
		return ret;
	if (faccessat(of->dir->fd, ".", W_OK | X_OK, AT_EACCESS))
		ret = -errno;
	fscreds_leave(&sv);
	return ret;
}

static int create_new(struct outfile *of);

static int plan_replace(struct outfile *of, const struct stat *st, bool exists, char *err,
			size_t errlen)
{
	int ret, fd;

	if (exists && S_ISDIR(st->st_mode)) {
		say(err, errlen, of->what, of->path, of->hint, "%s", strerror(EISDIR));
		return -EISDIR;
	}
	if (exists && S_ISCHR(st->st_mode))
		return plan_char_device(of, err, errlen);
	if (exists && !S_ISREG(st->st_mode) && !S_ISLNK(st->st_mode)) {
		say(err, errlen, of->what, of->path, of->hint,
		    "%s, not a regular file: tsarun writes a whole file only by replacing a "
		    "regular one (name - for standard output, or /dev/fd/N for a descriptor)",
		    type_name(st->st_mode));
		return -EINVAL;
	}
	of->kind = K_NEW;
	ret = dir_writable(of);
	if (!ret && of->give) {
		/* Made and given now, while nothing of the command's has been read. */
		ret = create_new(of);
		if (!ret && fchown(of->fd, of->give_uid, of->give_gid))
			ret = -errno;
		if (ret) {
			say(err, errlen, of->what, of->path, of->hint, "%s", strerror(-ret));
			return ret;
		}
	}
	if (!ret || !exists || !S_ISREG(st->st_mode) || ret == -EROFS) {
		if (ret)
			say(err, errlen, of->what, of->path, of->hint, "%s", strerror(-ret));
		return ret;
	}
	/* The directory is not the user's to write, the file may be: in place. */
	fd = open_in_dir(of, O_WRONLY | O_NONBLOCK, 0);
	if (fd >= 0) {
		struct stat now;

		if (!fstat(fd, &now) && S_ISREG(now.st_mode)) {
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
			of->fd = fd;
			of->kind = K_IN_PLACE_REG;
			return 0;
		}
		close(fd);
	}
	say(err, errlen, of->what, of->path, of->hint, "%s", strerror(-ret));
	return ret;
}

static int plan_stream(struct outfile *of, const struct stat *st, bool exists, unsigned wait_ms,
		       char *err, size_t errlen)
{
	struct stat now;
	int fd;

	if (exists && S_ISLNK(st->st_mode)) {
		say(err, errlen, of->what, of->path, of->hint,
		    "it is a symbolic link: name the file itself (tsarun never writes through a "
		    "link there)");
		return -ELOOP;
	}
	if (exists && S_ISDIR(st->st_mode)) {
		say(err, errlen, of->what, of->path, of->hint, "%s", strerror(EISDIR));
		return -EISDIR;
	}
	if (exists && S_ISCHR(st->st_mode))
		return plan_char_device(of, err, errlen);
	if (exists && !S_ISREG(st->st_mode) && !S_ISFIFO(st->st_mode)) {
		say(err, errlen, of->what, of->path, of->hint,
		    "%s: a stream goes to a regular file, a FIFO or a terminal",
		    type_name(st->st_mode));
		return -EINVAL;
	}
	if (!exists) {
		fd = open_in_dir(of, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd == -EEXIST) {
			say(err, errlen, of->what, of->path, of->hint,
			    "it appeared while tsarun was opening it");
			return -EEXIST;
		}
	} else if (S_ISREG(st->st_mode)) {
		fd = open_in_dir(of, O_WRONLY | O_TRUNC | O_NONBLOCK, 0);
	} else {
		/* A FIFO: with a reader, now or within wait_ms; never blocked on. */
		struct timespec nap = {.tv_nsec = 10 * 1000000};

		for (unsigned waited = 0;; waited += 10) {
			fd = open_in_dir(of, O_WRONLY | O_NONBLOCK, 0);
			if (fd != -ENXIO || waited >= wait_ms)
				break;
			nanosleep(&nap, NULL);
		}
		if (fd == -ENXIO) {
			say(err, errlen, of->what, of->path, of->hint,
			    "a FIFO with no reader (tsarun waited %u ms for one, and does not wait "
			    "longer: start the reader first)",
			    wait_ms);
			return fd;
		}
	}
	if (fd < 0) {
		say(err, errlen, of->what, of->path, of->hint, "%s", strerror(-fd));
		return fd;
	}
	if (fstat(fd, &now) || (!S_ISREG(now.st_mode) && !S_ISFIFO(now.st_mode))) {
		close(fd);
		say(err, errlen, of->what, of->path, of->hint, "it changed while tsarun opened it");
		return -EINVAL;
	}
	if (S_ISREG(now.st_mode))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (!exists && of->give && fchown(fd, of->give_uid, of->give_gid)) {
		int ret = -errno;

		close(fd);
		unlinkat(of->dir->fd, of->base, 0);
		say(err, errlen, of->what, of->path, of->hint, "%s", strerror(-ret));
		return ret;
	}
	of->fd = fd;
	of->kind = K_STREAM;
	return 0;
}

struct outfile *outfile__plan(const char *path, const struct outfile_opts *o, char *err,
			      size_t errlen)
{
	struct outfile *of = calloc(1, sizeof(*of));
	const char *slash, *base;
	struct fscreds_save sv;
	struct stat st;
	bool exists;
	int ret = 0, n;

	if (!of || !(of->path = strdup(path))) {
		free(of);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	of->mode = o->mode;
	of->what = o->what;
	of->hint = o->hint;
	of->give = o->give && geteuid() == 0;
	of->give_uid = o->give_uid;
	of->give_gid = o->give_gid;
	of->fd = -1;
	of->named_fd = -1;
	if (o->dash && !strcmp(path, "-"))
		n = o->dash == OUTFILE_DASH_STDOUT ? 1 : 2;
	else
		n = o->no_descriptors ? -1 : descriptor_name(path);
	if (n >= 0) {
		ret = plan_descriptor(of, n, err, errlen);
		if (ret && !err[0])
			say(err, errlen, of->what, of->path, of->hint, "%s", strerror(-ret));
		if (!ret && o->mode == OUTFILE_STREAM && of->kind == K_FD_REGULAR)
			of->kind = K_STREAM;
		goto out;
	}
	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		say(err, errlen, of->what, of->path, of->hint, "%s", strerror(EISDIR));
		ret = -EISDIR;
		goto out;
	}
	of->base = strdup(base);
	{
		char *dir =
		    slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
		char why[600];

		if (!of->base || !dir) {
			free(dir);
			snprintf(err, errlen, "out of memory");
			ret = -ENOMEM;
			goto out;
		}
		of->dir = outdir__open(o->base, dir, false, why, sizeof(why));
		free(dir);
		if (!of->dir) {
			say(err, errlen, of->what, of->path, of->hint, "%s", why);
			ret = -ENOENT;
			goto out;
		}
	}
	if (o->mode == OUTFILE_APPEND) {
		of->kind = K_APPEND;
		goto out;
	}
	ret = fscreds_enter(NULL, &sv);
	if (ret) {
		say(err, errlen, of->what, of->path, of->hint, "cannot take the user's rights: %s",
		    strerror(-ret));
		goto out;
	}
	exists = !fstatat(of->dir->fd, of->base, &st, AT_SYMLINK_NOFOLLOW);
	ret = exists || errno == ENOENT ? 0 : -errno;
	fscreds_leave(&sv);
	if (ret) {
		say(err, errlen, of->what, of->path, of->hint, "%s", strerror(-ret));
		goto out;
	}
	if (o->mode == OUTFILE_STREAM)
		ret = plan_stream(of, &st, exists, o->wait_reader_ms, err, errlen);
	else
		ret = plan_replace(of, &st, exists, err, errlen);
	if (!ret && o->keep_old && exists && S_ISREG(st.st_mode) && of->kind == K_NEW &&
	    strlen(of->base) + 4 <= NAME_MAX)
		of->keep_old = true;
out:
	if (ret) {
		outfile__free(of);
		return NULL;
	}
	return of;
}

bool outfile__keeps_old(const struct outfile *of)
{
	return of && of->keep_old;
}

bool outfile__kept_old(const struct outfile *of)
{
	return of && of->old_kept;
}

bool outfile__in_place(const struct outfile *of)
{
	return of->kind != K_NEW && of->kind != K_IN_PLACE_REG && of->kind != K_APPEND &&
	       !(of->kind == K_STREAM && of->dir);
}

const struct outdir *outfile__dir(const struct outfile *of)
{
	return outfile__in_place(of) ? NULL : of->dir;
}

const char *outfile__path(const struct outfile *of)
{
	return of->path;
}

int outfile__named_fd(const struct outfile *of)
{
	return of->named_fd;
}

int outfile__lstat(const struct outfile *of, struct stat *st)
{
	struct fscreds_save sv;
	int ret;

	if (!of->dir)
		return -EINVAL;
	ret = fscreds_enter(NULL, &sv);
	if (ret)
		return ret;
	if (fstatat(of->dir->fd, of->base, st, AT_SYMLINK_NOFOLLOW))
		ret = -errno;
	fscreds_leave(&sv);
	return ret;
}

bool outfile__shared(const struct outfile *of)
{
	return of->kind == K_FD_SHARED || of->kind == K_FD_SOCKET;
}

int outfile__take_fd(struct outfile *of)
{
	int fd = of->fd;

	of->fd = -1;
	of->done = true;
	return fd;
}

static int random_name(char *buf, size_t len, const char *base)
{
	static const char chars[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[8];
	char suffix[9];

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec t;

		clock_gettime(CLOCK_MONOTONIC, &t);
		for (size_t i = 0; i < sizeof(r); i++)
			r[i] = (unsigned char)((uint64_t)t.tv_nsec >> (i * 3)) ^ (unsigned char)i;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		suffix[i] = chars[r[i] % (sizeof(chars) - 1)];
	suffix[8] = '\0';
	return snprintf(buf, len, ".%.200s.%s", base, suffix) < (int)len ? 0 : -ENAMETOOLONG;
}

/* The new file, in the planned directory, as the user, mode 0644 whatever the umask. */
static int create_new(struct outfile *of)
{
	struct fscreds_save sv;
	char name[NAME_MAX + 1];
	int ret = fscreds_enter(NULL, &sv), fd = -1;
	mode_t mask;

	if (ret)
		return ret;
	mask = umask(022);
	fd = openat(of->dir->fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (fd >= 0) {
		of->tmpfile = true;
	} else if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
		/* No O_TMPFILE on this file system: a hidden name, never through a link. */
		for (int tries = 0; tries < 16; tries++) {
			ret = random_name(name, sizeof(name), of->base);
			if (ret)
				break;
			fd = openat(of->dir->fd, name,
				    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (fd >= 0 || errno != EEXIST)
				break;
		}
		if (fd >= 0) {
			of->tmpname = strdup(name);
			if (temp_hook)
				temp_hook(of->dir->fd, name, true);
		}
	}
	if (fd < 0 && !ret)
		ret = -errno;
	umask(mask);
	fscreds_leave(&sv);
	if (fd >= 0)
		of->fd = fd;
	return fd >= 0 ? 0 : ret;
}

/* Wait for room on of->fd, or for the cancel descriptor. 0, or -1 with errno (EINTR). */
static int wait_room(const struct outfile *of)
{
	struct pollfd p[2] = {{.fd = of->fd, .events = POLLOUT},
			      {.fd = cancel_fd, .events = POLLIN}};

	for (;;) {
		int n = poll(p, cancel_fd >= 0 ? 2 : 1, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (cancel_fd >= 0 && (p[1].revents & POLLIN)) {
			errno = EINTR;
			return -1;
		}
		if (p[0].revents)
			return 0; /* room, or an error the write will say */
	}
}

/* The FILE * of a descriptor: written whole, never blocked on. */
static ssize_t fd_write(void *cookie, const char *buf, size_t size)
{
	struct outfile *of = cookie;
	size_t done = 0;

	while (done < size) {
		size_t chunk = size - done;
		ssize_t n;

		if (of->kind == K_FD_SHARED) {
			/* Blocking: a write of PIPE_BUF when poll says there is room never waits. */
			if (wait_room(of))
				break;
			if (chunk > PIPE_BUF)
				chunk = PIPE_BUF;
		}
		if (of->kind == K_FD_SOCKET)
			n = send(of->fd, buf + done, chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			n = write(of->fd, buf + done, chunk);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		    of->kind != K_FD_REGULAR) {
			if (wait_room(of))
				break;
			continue;
		}
		if (n == 0)
			errno = EIO;
		break;
	}
	if (done < size && !of->werr)
		of->werr = errno ? errno : EIO;
	return done ? (ssize_t)done : -1;
}

FILE *outfile__open(struct outfile *of, char *err, size_t errlen)
{
	int ret = 0, fd;

	if (of->f)
		return of->f;
	switch (of->kind) {
	case K_NEW:
		if (of->fd < 0)
			ret = create_new(of);
		break;
	case K_IN_PLACE_REG:
		if (lseek(of->fd, 0, SEEK_SET) < 0)
			ret = -errno;
		break;
	case K_APPEND: {
		struct stat st;

		/* What is there, said as such before the open (which would only say EACCES). */
		if (!outfile__lstat(of, &st) && S_ISLNK(st.st_mode))
			fd = -ELOOP;
		else if (!outfile__lstat(of, &st) && !S_ISREG(st.st_mode))
			fd = -ENXIO;
		else
			fd = open_in_dir(of, O_WRONLY | O_APPEND | O_NONBLOCK, 0);
		if (fd == -ENOENT) {
			struct fscreds_save sv;

			if (!fscreds_enter(NULL, &sv)) {
				mode_t mask = umask(022);

				fd = openat(of->dir->fd, of->base,
					    O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW |
						O_NOCTTY | O_CLOEXEC,
					    0644);
				if (fd < 0)
					fd = -errno;
				umask(mask);
				fscreds_leave(&sv);
			}
		}
		if (fd == -ELOOP) {
			say(err, errlen, of->what, of->path, of->hint,
			    "it is a symbolic link, and tsarun appends only to the file itself, "
			    "never through a link");
			return NULL;
		}
		if (fd == -ENXIO) { /* a FIFO with no reader, a socket */
			say(err, errlen, of->what, of->path, of->hint,
			    "not a regular file, and tsarun appends only to regular files");
			return NULL;
		}
		if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
			close(fd);
			say(err, errlen, of->what, of->path, of->hint,
			    "not a regular file, and tsarun appends only to regular files");
			return NULL;
		}
		if (fd >= 0) {
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
			of->fd = fd;
		}
		ret = fd < 0 ? fd : 0;
		break;
	}
	case K_FD_OWN:
	case K_FD_SHARED:
	case K_FD_SOCKET:
	case K_FD_REGULAR:
		of->f = fopencookie(of, "w", (cookie_io_functions_t){.write = fd_write});
		if (!of->f)
			ret = -errno;
		break;
	default:
		ret = -EINVAL;
		break;
	}
	if (!ret && !of->f) {
		fd = fcntl(of->fd, F_DUPFD_CLOEXEC, 3);
		of->f = fd >= 0 ? fdopen(fd, of->kind == K_APPEND ? "a" : "w") : NULL;
		if (!of->f) {
			ret = -errno;
			if (fd >= 0)
				close(fd);
		}
	}
	if (ret) {
		say(err, errlen, of->what, of->path, of->hint, "%s", strerror(-ret));
		outfile__abort(of);
		return NULL;
	}
	return of->f;
}

/* Give the O_TMPFILE a name in its directory (random, hidden), then rename it over base. */
/*
 * The file the new one replaces, kept as base.old (perf keeps perf.data.old
 * so): a second name made by a link under a random name, then renamed, so
 * that the path always names a whole file. Only a regular file, never
 * through a link; a failure keeps nothing and costs nothing else.
 */
static void keep_previous(struct outfile *of)
{
	char name[NAME_MAX + 1], old[NAME_MAX + 1];
	struct stat st;
	int ret = -EEXIST;

	if (fstatat(of->dir->fd, of->base, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
		return;
	snprintf(old, sizeof(old), "%s.old", of->base);
	for (int tries = 0; tries < 16 && ret == -EEXIST; tries++) {
		ret = random_name(name, sizeof(name), of->base);
		if (!ret)
			ret = linkat(of->dir->fd, of->base, of->dir->fd, name, 0) ? -errno : 0;
	}
	if (ret)
		return;
	if (temp_hook)
		temp_hook(of->dir->fd, name, true);
	if (renameat(of->dir->fd, name, of->dir->fd, old))
		unlinkat(of->dir->fd, name, 0);
	else
		of->old_kept = true;
	if (temp_hook)
		temp_hook(of->dir->fd, name, false);
}

static int link_and_rename(struct outfile *of)
{
	char name[NAME_MAX + 1], proc[32];
	int ret = -EEXIST;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", of->fd);
	for (int tries = 0; tries < 16 && ret == -EEXIST; tries++) {
		ret = random_name(name, sizeof(name), of->base);
		if (ret)
			break;
		ret = linkat(AT_FDCWD, proc, of->dir->fd, name, AT_SYMLINK_FOLLOW) ? -errno : 0;
		if (ret == -ENOENT) /* no /proc: the way that needs CAP_DAC_READ_SEARCH */
			ret = linkat(of->fd, "", of->dir->fd, name, AT_EMPTY_PATH) ? -errno : 0;
	}
	if (ret)
		return ret;
	if (temp_hook)
		temp_hook(of->dir->fd, name, true);
	if (renameat(of->dir->fd, name, of->dir->fd, of->base)) {
		ret = -errno;
		unlinkat(of->dir->fd, name, 0);
	}
	if (temp_hook)
		temp_hook(of->dir->fd, name, false);
	return ret;
}

int outfile__commit(struct outfile *of, char *err, size_t errlen)
{
	struct fscreds_save sv;
	int ret = 0;

	if (of->done)
		return 0;
	if (!of->f && of->kind != K_STREAM && !outfile__open(of, err, errlen))
		return -EIO;
	if (of->f) {
		errno = 0;
		/* A full disk shows only when the buffer goes out: say so, do not truncate quietly. */
		if (fflush(of->f) || ferror(of->f))
			ret = errno ? -errno : -EIO;
		if (fclose(of->f) && !ret)
			ret = errno ? -errno : -EIO;
		of->f = NULL;
		if (ret && of->werr)
			ret = -of->werr;
	}
	if (!ret && (of->kind == K_NEW || of->kind == K_IN_PLACE_REG) && fsync(of->fd) &&
	    errno != EINVAL && errno != EROFS)
		ret = -errno;
	if (!ret && of->kind == K_IN_PLACE_REG) {
		off_t end = lseek(of->fd, 0, SEEK_CUR);

		if (end < 0 || ftruncate(of->fd, end))
			ret = -errno;
	}
	if (!ret && of->kind == K_NEW) {
		ret = fscreds_enter(NULL, &sv);
		if (!ret && of->keep_old)
			keep_previous(of);
		if (!ret && of->tmpfile) {
			ret = link_and_rename(of);
		} else if (!ret) {
			struct stat mine, there;

			/* Made before the run (given): still ours under that name? */
			if (fstat(of->fd, &mine) ||
			    fstatat(of->dir->fd, of->tmpname, &there, AT_SYMLINK_NOFOLLOW) ||
			    mine.st_dev != there.st_dev || mine.st_ino != there.st_ino)
				ret = -ESTALE;
			else if (renameat(of->dir->fd, of->tmpname, of->dir->fd, of->base))
				ret = -errno;
			else if (temp_hook)
				temp_hook(of->dir->fd, of->tmpname, false);
			if (!ret) {
				free(of->tmpname);
				of->tmpname = NULL;
			}
		}
		fscreds_leave(&sv);
		if (!ret && of->dir->readable && fsync(of->dir->fd) && errno != EINVAL &&
		    errno != EROFS)
			ret = -errno;
	}
	if (ret) {
		say(err, errlen, of->what, of->path, of->hint, "%s", strerror(-ret));
		outfile__abort(of);
		return ret;
	}
	if (of->fd >= 0)
		close(of->fd);
	of->fd = -1;
	of->done = true;
	return 0;
}

void outfile__abort(struct outfile *of)
{
	struct fscreds_save sv;

	if (!of || of->done)
		return;
	if (of->f)
		fclose(of->f);
	of->f = NULL;
	if (of->tmpname && !fscreds_enter(NULL, &sv)) {
		unlinkat(of->dir->fd, of->tmpname, 0);
		fscreds_leave(&sv);
		if (temp_hook)
			temp_hook(of->dir->fd, of->tmpname, false);
	}
	free(of->tmpname);
	of->tmpname = NULL;
	if (of->fd >= 0)
		close(of->fd);
	of->fd = -1;
	of->done = true;
}

void outfile__free(struct outfile *of)
{
	if (!of)
		return;
	outfile__abort(of);
	outdir__free(of->dir);
	free(of->base);
	free(of->path);
	free(of);
}
