// SPDX-License-Identifier: MIT
/*
 * lib/outfile and lib/fscreds: what is at a path when a file is planned,
 * and what a write may and may not go through. Each test works in a
 * directory of its own; the ones that act for another user need root and
 * say SKIP without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "lib/fscreds.h"
#include "lib/outfile.h"

static char dir[64];

/* dir/name, in one of four buffers: at() can be used twice in one call. */
static const char *at(const char *name)
{
	static char paths[4][256];
	static int next;
	char *p = paths[next++ % 4];

	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/tsarun-outfile.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

/* Entries in the test directory. */
static int entries(void)
{
	char cmd[128];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	f = popen(cmd, "r");
	if (f && fscanf(f, "%d", &n) != 1)
		n = -1;
	if (f)
		pclose(f);
	return n;
}

static struct outfile *plan(const char *name, enum outfile_mode mode, char *err)
{
	return outfile__plan(
	    at(name), &(struct outfile_opts){.mode = mode, .what = "the test file"}, err, 512);
}

static int write_all(struct outfile *of, const char *text, char *err)
{
	FILE *f = outfile__open(of, err, 512);
	int ret;

	if (!f) {
		print_message("# %s\n", err);
		return -EIO;
	}
	fputs(text, f);
	ret = outfile__commit(of, err, 512);
	if (ret)
		print_message("# %s\n", err);
	return ret;
}

static void slurp(const char *p, char *buf, size_t len)
{
	int fd = open(p, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, len - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
}

static void test_new_file_renamed_into_place(void **state)
{
	char err[512], buf[64];
	struct outfile *of = plan("a.json", OUTFILE_REPLACE, err);
	struct stat st;

	assert_non_null(of);
	assert_false(outfile__in_place(of));
	/* Nothing is made before it is written. */
	assert_int_equal(entries(), 0);
	assert_int_equal(write_all(of, "hello\n", err), 0);
	outfile__free(of);
	slurp(at("a.json"), buf, sizeof(buf));
	assert_string_equal(buf, "hello\n");
	assert_int_equal(stat(at("a.json"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* No temporary file left beside it. */
	assert_int_equal(entries(), 1);
}

static void test_replaces_file_and_link(void **state)
{
	char err[512], buf[64];
	struct outfile *of;
	struct stat before, after;

	/* A file: replaced by a new one (a new inode), atomically. */
	assert_int_equal(system("true"), 0);
	{
		FILE *f = fopen(at("r.txt"), "w");

		fputs("old", f);
		fclose(f);
	}
	assert_int_equal(stat(at("r.txt"), &before), 0);
	of = plan("r.txt", OUTFILE_REPLACE, err);
	assert_non_null(of);
	assert_int_equal(write_all(of, "new", err), 0);
	outfile__free(of);
	assert_int_equal(stat(at("r.txt"), &after), 0);
	assert_true(before.st_ino != after.st_ino);
	/* A link put there after the plan: replaced, its target untouched. */
	{
		FILE *f = fopen(at("victim"), "w");

		fputs("victim", f);
		fclose(f);
	}
	of = plan("l.txt", OUTFILE_REPLACE, err);
	assert_non_null(of);
	assert_int_equal(symlink(at("victim"), at("l.txt")) == 0 ? 0 : -1, 0);
	assert_int_equal(write_all(of, "mine", err), 0);
	outfile__free(of);
	slurp(at("victim"), buf, sizeof(buf));
	assert_string_equal(buf, "victim");
	assert_int_equal(lstat(at("l.txt"), &after), 0);
	assert_true(S_ISREG(after.st_mode));
}

/*
 * keep_old: the file replaced stays as PATH.old, as perf keeps perf.data.old,
 * and a second replacement keeps the first's; nothing is kept when nothing
 * was there, nor for a link (its target untouched, no .old made of it).
 */
static void test_keeps_the_previous_file(void **state)
{
	struct outfile_opts ko = {.mode = OUTFILE_REPLACE, .keep_old = true};
	char err[512], buf[64];
	struct outfile *of;
	struct stat st;

	of = outfile__plan(at("k.json"), &ko, err, sizeof(err));
	assert_non_null(of);
	assert_false(outfile__keeps_old(of)); /* nothing there yet */
	assert_int_equal(write_all(of, "first", err), 0);
	assert_false(outfile__kept_old(of));
	outfile__free(of);
	assert_int_equal(lstat(at("k.json.old"), &st), -1);
	for (int i = 0; i < 2; i++) {
		of = outfile__plan(at("k.json"), &ko, err, sizeof(err));
		assert_non_null(of);
		assert_true(outfile__keeps_old(of));
		assert_int_equal(write_all(of, i ? "third" : "second", err), 0);
		assert_true(outfile__kept_old(of));
		outfile__free(of);
		slurp(at("k.json"), buf, sizeof(buf));
		assert_string_equal(buf, i ? "third" : "second");
		slurp(at("k.json.old"), buf, sizeof(buf));
		assert_string_equal(buf, i ? "second" : "first");
	}
	assert_int_equal(entries(), 2); /* no temporary name left */
	/* Without keep_old, nothing is kept. */
	of = plan("k.json", OUTFILE_REPLACE, err);
	assert_int_equal(write_all(of, "fourth", err), 0);
	outfile__free(of);
	slurp(at("k.json.old"), buf, sizeof(buf));
	assert_string_equal(buf, "second");
	/* A link is no file of the user's to keep. */
	{
		FILE *f = fopen(at("victim"), "w");

		fputs("victim", f);
		fclose(f);
	}
	assert_int_equal(symlink(at("victim"), at("kl.json")), 0);
	of = outfile__plan(at("kl.json"), &ko, err, sizeof(err));
	assert_non_null(of);
	assert_false(outfile__keeps_old(of));
	assert_int_equal(write_all(of, "mine", err), 0);
	outfile__free(of);
	assert_int_equal(lstat(at("kl.json.old"), &st), -1);
	slurp(at("victim"), buf, sizeof(buf));
	assert_string_equal(buf, "victim");
}

static void test_refuses_fifo_and_directory(void **state)
{
	char err[512];
	struct timespec t0, t1;

	assert_int_equal(mkfifo(at("f"), 0644), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_null(plan("f", OUTFILE_REPLACE, err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_non_null(strstr(err, "a FIFO, not a regular file"));
	assert_non_null(strstr(err, "cannot write the test file '"));
	assert_true(t1.tv_sec - t0.tv_sec < 2); /* at once, no wait for a reader */
	assert_int_equal(mkdir(at("d"), 0755), 0);
	assert_null(plan("d", OUTFILE_REPLACE, err));
	assert_non_null(strstr(err, "Is a directory"));
	assert_null(outfile__plan(at("missing/x"), &(struct outfile_opts){0}, err, sizeof(err)));
	assert_non_null(strstr(err, "No such file or directory"));
}

static void test_null_device_in_place(void **state)
{
	char err[512];
	struct outfile *of =
	    outfile__plan("/dev/null", &(struct outfile_opts){0}, err, sizeof(err));
	struct stat st;

	assert_non_null(of);
	assert_true(outfile__in_place(of));
	assert_int_equal(write_all(of, "gone", err), 0);
	outfile__free(of);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

/* A pipe named as a descriptor: written through a description of its own, never blocked on. */
static void test_descriptor_never_blocks(void **state)
{
	char err[512], name[32], big[1 << 17];
	int p[2], sig[2], fl;
	struct outfile *of;
	FILE *f;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(sig), 0);
	snprintf(name, sizeof(name), "/dev/fd/%d", p[1]);
	of = outfile__plan(name, &(struct outfile_opts){0}, err, sizeof(err));
	assert_non_null(of);
	assert_true(outfile__in_place(of));
	assert_int_equal(outfile__named_fd(of), p[1]);
	/* The descriptor given is left as it was (the command's too). */
	fl = fcntl(p[1], F_GETFL);
	assert_false(fl & O_NONBLOCK);
	f = outfile__open(of, err, sizeof(err));
	assert_non_null(f);
	/* More than the pipe holds, no reader: the cancel descriptor ends the wait. */
	outfile_set_cancel_fd(sig[0]);
	assert_int_equal(write(sig[1], "x", 1), 1);
	memset(big, 'x', sizeof(big));
	fwrite(big, 1, sizeof(big), f);
	assert_int_not_equal(outfile__commit(of, err, sizeof(err)), 0);
	if (!strstr(err, "Interrupted"))
		fail_msg("%s", err);
	outfile_set_cancel_fd(-1);
	outfile__free(of);
	assert_false(fcntl(p[1], F_GETFL) & O_NONBLOCK);
	close(p[0]);
	close(p[1]);
	close(sig[0]);
	close(sig[1]);
}

static void test_abort_leaves_nothing(void **state)
{
	char err[512];
	struct outfile *of = plan("x.json", OUTFILE_REPLACE, err);
	FILE *f;

	assert_non_null(of);
	f = outfile__open(of, err, sizeof(err));
	assert_non_null(f);
	fputs("half", f);
	outfile__abort(of);
	outfile__free(of);
	assert_int_equal(entries(), 0);
}

static void test_stream_fifo_needs_a_reader(void **state)
{
	char err[512];
	struct outfile *of;
	pid_t pid;
	int fd, status;

	assert_int_equal(mkfifo(at("s"), 0644), 0);
	of = outfile__plan(at("s"),
			   &(struct outfile_opts){.mode = OUTFILE_STREAM, .wait_reader_ms = 50},
			   err, sizeof(err));
	assert_null(of);
	assert_non_null(strstr(err, "a FIFO with no reader"));
	/* With a reader: opened, non-blocking, handed over. */
	pid = fork();
	if (pid == 0) {
		char c;
		int r = open(at("s"), O_RDONLY);

		_exit(r >= 0 && read(r, &c, 1) == 1 && c == 'z' ? 0 : 1);
	}
	of = outfile__plan(at("s"),
			   &(struct outfile_opts){.mode = OUTFILE_STREAM, .wait_reader_ms = 2000},
			   err, sizeof(err));
	assert_non_null(of);
	fd = outfile__take_fd(of);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_int_equal(write(fd, "z", 1), 1);
	close(fd);
	outfile__free(of);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 0);
	/* A link there: refused, never written through. */
	assert_int_equal(symlink("/etc/passwd", at("sl")), 0);
	assert_null(outfile__plan(at("sl"), &(struct outfile_opts){.mode = OUTFILE_STREAM}, err,
				  sizeof(err)));
	assert_non_null(strstr(err, "symbolic link"));
}

static void test_append_not_through_a_link(void **state)
{
	char err[512], buf[64];
	struct outfile *of;
	FILE *f;

	f = fopen(at("sum"), "w");
	fputs("a\n", f);
	fclose(f);
	of = plan("sum", OUTFILE_APPEND, err);
	assert_non_null(of);
	assert_int_equal(write_all(of, "b\n", err), 0);
	outfile__free(of);
	slurp(at("sum"), buf, sizeof(buf));
	assert_string_equal(buf, "a\nb\n");
	/* Planned, then the file became a link: refused when opened. */
	of = plan("sum", OUTFILE_APPEND, err);
	assert_non_null(of);
	unlink(at("sum"));
	assert_int_equal(symlink(at("other"), at("sum")), 0);
	assert_null(outfile__open(of, err, sizeof(err)));
	assert_non_null(strstr(err, "symbolic link"));
	outfile__free(of);
	assert_int_equal(access(at("other"), F_OK), -1);
}

static void test_out_dir_made(void **state)
{
	char err[512];
	struct outdir *d = outdir__open(NULL, at("a/b/c"), true, err, sizeof(err));
	struct stat st;

	assert_non_null(d);
	assert_int_equal(stat(at("a/b/c"), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	outdir__free(d);
	/* A file where a directory is wanted. */
	assert_int_equal(close(open(at("file"), O_CREAT | O_WRONLY, 0644)), 0);
	assert_null(outdir__open(NULL, at("file/x"), true, err, sizeof(err)));
	assert_non_null(strstr(err, "Not a directory"));
}

/*
 * Root acting for a user: what it makes is the user's, the user's rights
 * decide, and a link in the path that neither root nor the user owns is
 * not followed.
 */
static void test_acts_for_the_user(void **state)
{
	const gid_t g = 65534;
	struct fscreds c = {.uid = 65534, .gid = 65534, .groups = &g, .ngroups = 1};
	char err[512], ud[300], other[300];
	struct outfile *of;
	struct stat st;

	if (geteuid() != 0) {
		print_message("# SKIP: acting for another user needs root\n");
		skip();
	}
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(ud, sizeof(ud), "%s/user", dir);
	assert_int_equal(mkdir(ud, 0755), 0);
	assert_int_equal(chown(ud, 65534, 65534), 0);
	assert_int_equal(fscreds_set_default(&c), 0);
	/* Made with the user's credentials: the user's, nothing to chown. */
	of = plan("user/a.json", OUTFILE_REPLACE, err);
	assert_non_null(of);
	assert_int_equal(write_all(of, "{}", err), 0);
	outfile__free(of);
	assert_int_equal(stat(at("user/a.json"), &st), 0);
	assert_int_equal(st.st_uid, 65534);
	/* Root's own directory: the user may not write there, so neither does root for it. */
	assert_null(plan("root.json", OUTFILE_REPLACE, err));
	assert_non_null(strstr(err, "Permission denied"));
	/* A link of another user's above the file: not followed. */
	snprintf(other, sizeof(other), "%s/user/link", dir);
	assert_int_equal(symlink(ud, other), 0);
	assert_int_equal(lchown(other, 1, 1), 0);
	assert_null(plan("user/link/b.json", OUTFILE_REPLACE, err));
	assert_non_null(strstr(err, "symbolic link of uid 1's"));
	/* The user's own link is. */
	assert_int_equal(lchown(other, 65534, 65534), 0);
	of = plan("user/link/b.json", OUTFILE_REPLACE, err);
	assert_non_null(of);
	outfile__free(of);
	/* An out-dir made for the user is the user's. */
	assert_non_null(outdir__open(NULL, at("user/new/deep"), true, err, sizeof(err)));
	assert_int_equal(stat(at("user/new/deep"), &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(stat(at("user/new"), &st), 0);
	assert_int_equal(st.st_uid, 65534);
	fscreds_set_default(NULL);
	/* The process's own rights are back. */
	assert_int_equal(geteuid(), 0);
	of = plan("root.json", OUTFILE_REPLACE, err);
	assert_non_null(of);
	outfile__free(of);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_new_file_renamed_into_place, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_keeps_the_previous_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_replaces_file_and_link, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refuses_fifo_and_directory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_null_device_in_place, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_descriptor_never_blocks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_abort_leaves_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stream_fifo_needs_a_reader, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_append_not_through_a_link, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_out_dir_made, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_acts_for_the_user, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("outfile", tests, NULL, NULL);
}
