// SPDX-License-Identifier: MIT
/* Each check tries the real thing where it can (loads and attaches the probe). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact.h"
#include "probe_bash.h"
#include "delayacct.h"
#include "cmd_doctor.h"
#include "host.h"
#include "procfs.h"
#include "run.h"
#include "probe_sched.h"
#include "taskstats_client.h"

#define NCHECKS 11

static struct doctor_check *add(struct doctor_check *c, int *n, const char *name, bool ok,
				const char *status)
{
	struct doctor_check *d = &c[(*n)++];

	snprintf(d->name, sizeof(d->name), "%s", name);
	d->available = ok;
	snprintf(d->status, sizeof(d->status), "%s",
		 status ? status
		 : ok	? "available"
			: "unavailable");
	d->detail[0] = '\0';
	return d;
}

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

static void check_privileges(struct doctor_check *c, int *n)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2] = {0};
	struct doctor_check *d;
	bool bpf, perfmon, netadmin, sysadmin;

	if (syscall(SYS_capget, &hdr, data)) {
		d = add(c, n, "privileges", false, "unknown");
		snprintf(d->detail, sizeof(d->detail), "capget: %s", strerror(errno));
		return;
	}
	sysadmin = has_cap(data, 21);
	bpf = has_cap(data, 39) || sysadmin;
	perfmon = has_cap(data, 38) || sysadmin;
	netadmin = has_cap(data, 12);
	d = add(c, n, "privileges", bpf && perfmon && netadmin,
		geteuid() == 0 ? "root" : (bpf && perfmon ? "capable" : "unprivileged"));
	snprintf(d->detail, sizeof(d->detail),
		 "euid %d; CAP_BPF %s, CAP_PERFMON %s, CAP_NET_ADMIN %s%s", (int)geteuid(),
		 bpf ? "yes" : "no", perfmon ? "yes" : "no", netadmin ? "yes" : "no",
		 bpf && perfmon && netadmin
		     ? ""
		     : ": without them tsarun samples procfs only; run it as root (sudo tsarun)");
}

/* The kernels tsarun supports, and this one. */
static void check_kernel(struct doctor_check *c, int *n, const struct host_info *h)
{
	struct doctor_check *d = add(c, n, "kernel", h->btf, h->btf ? "supported" : "no BTF");

	snprintf(d->detail, sizeof(d->detail),
		 "Linux %s; tsarun supports Linux 5.10 or later with BTF (CONFIG_DEBUG_INFO_BTF), "
		 "PREEMPT_RT included; the eBPF line says which variant this one takes",
		 h->kernel);
}

static void check_ebpf(struct doctor_check *c, int *n, const struct host_info *h)
{
	/* As a run loads it (the iterator with the rest, as under the sandbox). */
	struct sched_probe_opts o = {.ringbuf_bytes = 1 << 16, .survivors_now = true};
	struct sched_probe *sp;
	struct doctor_check *d;
	char err[192];
	int iter;

	d = add(c, n, "btf", h->btf, h->btf ? "present" : "missing");
	snprintf(d->detail, sizeof(d->detail), "%s",
		 h->btf
		     ? "/sys/kernel/btf/vmlinux (CO-RE and tp_btf work)"
		     : "no /sys/kernel/btf/vmlinux: kernel built without CONFIG_DEBUG_INFO_BTF, "
		       "which eBPF needs (tsarun samples procfs instead); boot a kernel with it");
	sp = sched_probe__new(&o, err, sizeof(err));
	/* The iterator reads the threads still alive at a run's end: try it here. */
	iter = sp ? sched_probe__survivors(sp) : 0;
	d = add(c, n, "ebpf", sp != NULL && iter >= 0, NULL);
	if (sp && iter >= 0)
		snprintf(d->detail, sizeof(d->detail),
			 "attached: %s; task records, ring buffer and task iterator work",
			 sched_probe__variant(sp));
	else if (sp)
		snprintf(d->detail, sizeof(d->detail),
			 "attached: %s; but the task iterator (threads alive at the end) fails: %s",
			 sched_probe__variant(sp), strerror(-iter));
	else
		snprintf(d->detail, sizeof(d->detail), "%s", err);
	sched_probe__free(sp);
}

static void check_taskstats(struct doctor_check *c, int *n, const struct host_info *h)
{
	struct doctor_check *d;
	char detail[256];
	bool ok = taskstats_check(detail, sizeof(detail));
	int saved, holder;

	d = add(c, n, "taskstats", ok, NULL);
	snprintf(d->detail, sizeof(d->detail), "%s", detail);
	if (h->task_delayacct < 0) {
		d = add(c, n, "delayacct", false, "unknown");
		snprintf(d->detail, sizeof(d->detail),
			 "no kernel.task_delayacct (kernel without CONFIG_TASK_DELAY_ACCT?)");
	} else if (delayacct_stale(NULL, detail, sizeof(detail))) {
		d = add(c, n, "delayacct", false, "left on");
		snprintf(d->detail, sizeof(d->detail), "%s", detail);
	} else if (h->task_delayacct && delayacct_holders(NULL, &saved, &holder) > 0 &&
		   saved == 0) {
		/* On only for the sessions of running tsarun processes: not the machine's setting. */
		d = add(c, n, "delayacct", true, "on");
		snprintf(
		    d->detail, sizeof(d->detail),
		    "kernel.task_delayacct=1 only while a running tsarun (pid %d) holds it on for "
		    "its session; it goes back to 0 when the last one ends. %s",
		    holder,
		    ok && geteuid() == 0
			? "tsarun switches it on for each session itself (unless --no-delayacct)"
			: "Then, as this user, only the CPU delay is counted: switching it on "
			  "needs root ('sysctl kernel.task_delayacct=1', or run tsarun as root)");
	} else if (h->task_delayacct) {
		d = add(c, n, "delayacct", true, "on");
		snprintf(d->detail, sizeof(d->detail),
			 "kernel.task_delayacct=1: block I/O, swap-in, reclaim and the other "
			 "delays are counted");
	} else {
		bool can = ok && geteuid() == 0;

		d = add(c, n, "delayacct", can, "off");
		snprintf(d->detail, sizeof(d->detail), "%s",
			 can  ? "kernel.task_delayacct=0: tsarun switches it on for each session "
				"(unless --no-delayacct) and puts it back afterwards"
			 : ok ? "kernel.task_delayacct=0 and tsarun may not switch it on (needs "
				"root): only the CPU delay is counted"
			      : "kernel.task_delayacct=0, and without taskstats no delay is read");
	}
}

static void check_procfs(struct doctor_check *c, int *n)
{
	struct procfs_schedstat ss;
	struct doctor_check *d;
	char buf[128];
	bool ok = !host_read_file("/proc/self/schedstat", buf, sizeof(buf)) &&
		  !procfs_parse_schedstat(buf, strlen(buf), &ss);

	d = add(c, n, "procfs", ok, NULL);
	snprintf(d->detail, sizeof(d->detail), "%s",
		 ok ? "/proc/<pid>/task/<tid>/stat and schedstat readable"
		    : "/proc/self/schedstat missing (kernel without CONFIG_SCHED_INFO)");
}

static void check_perf(struct doctor_check *c, int *n, const struct host_info *h)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(attr),
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .sample_freq = 99,
	    .freq = 1,
	    .disabled = 1,
	};
	struct doctor_check *d;
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	int open_errno = errno;
	char paranoid[16] = "?";

	host_read_file("/proc/sys/kernel/perf_event_paranoid", paranoid, sizeof(paranoid));
	d = add(c, n, "perf-events", fd >= 0, NULL);
	if (fd >= 0)
		snprintf(d->detail, sizeof(d->detail),
			 "software cpu-clock sampling works (perf_event_paranoid=%s)", paranoid);
	else
		snprintf(d->detail, sizeof(d->detail),
			 "cpu-clock on CPU 0: %s (perf_event_paranoid=%s)%s", strerror(open_errno),
			 paranoid,
			 open_errno == EACCES || open_errno == EPERM
			     ? ": --flame's on-CPU samples need root or CAP_PERFMON"
			     : "");
	if (fd >= 0)
		close(fd);
	d = add(c, n, "pmu", h->pmu, NULL);
	snprintf(d->detail, sizeof(d->detail), "%s%s",
		 h->pmu ? "hardware instructions counter works" : h->pmu_reason,
		 h->pmu ? ""
		 : strcmp(h->virtualized, "none")
		     ? ": the instructions metric stays null; on a virtual machine the "
		       "hypervisor must expose a PMU to the guest (a vPMU)"
		     : ": the instructions metric stays null");
}

/*
 * --bash: the builtin and the injector are found as a run finds them, and
 * the builtin is loaded into the bash of PATH, as the profiled script's bash
 * will load it (its load hook refuses a bash other than the one it was built
 * for; --bash then records through the slower pure-bash trap).
 */
static void check_bash(struct doctor_check *c, int *n)
{
	static const char script[] = "enable -f \"$1\" __tsa 2>&1 && echo \"ok $BASH_VERSION\"";
	char so[PATH_MAX], env[PATH_MAX], out[256] = "", *nl;
	char *argv[] = {"bash", "--norc", "--noprofile", "-c", (char *)script, "bash", so, NULL};
	posix_spawn_file_actions_t fa;
	struct doctor_check *d;
	int pfd[2], status = 0, err;
	size_t len = 0;
	ssize_t r;
	pid_t pid;

	if (bash_probe_find_files(so, env)) {
		d = add(c, n, "bash", false, "not found");
		snprintf(d->detail, sizeof(d->detail), "--bash %s", bash_probe_missing());
		return;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		d = add(c, n, "bash", false, "unknown");
		snprintf(d->detail, sizeof(d->detail), "pipe: %s", strerror(errno));
		return;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	/* The user's BASH_ENV is not what is being checked. */
	unsetenv("BASH_ENV");
	err = posix_spawnp(&pid, "bash", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	while (
	    !err && len < sizeof(out) - 1 &&
	    ((r = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0 || (r < 0 && errno == EINTR)))
		len += r > 0 ? (size_t)r : 0;
	out[len] = '\0';
	close(pfd[0]);
	if (!err)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	nl = strchr(out, '\n');
	if (nl)
		*nl = '\0';
	if (err) {
		d = add(c, n, "bash", false, "no bash");
		snprintf(d->detail, sizeof(d->detail),
			 "cannot run bash from PATH (%s): --bash needs it; install bash",
			 strerror(err));
	} else if (WIFEXITED(status) && !WEXITSTATUS(status) && !strncmp(out, "ok ", 3)) {
		d = add(c, n, "bash", true, NULL);
		snprintf(d->detail, sizeof(d->detail),
			 "--bash works: the __tsa builtin (%.*s) loads into bash %s", 150, so,
			 out + 3);
	} else {
		/* Still profiled, by the fallback trap: available, and says why it is slower. */
		d = add(c, n, "bash", true, "fallback");
		snprintf(d->detail, sizeof(d->detail),
			 "the __tsa builtin does not load into this bash (%.120s): --bash records "
			 "through a pure-bash trap instead, slower; rebuild tsarun here (make)",
			 out[0] ? out : "no message");
	}
}

int doctor_run(bool json)
{
	struct doctor_check checks[NCHECKS];
	struct host_info h;
	int n = 0;

	host_probe(&h);
	check_privileges(checks, &n);
	check_kernel(checks, &n, &h);
	check_ebpf(checks, &n, &h);
	check_taskstats(checks, &n, &h);
	check_procfs(checks, &n);
	check_perf(checks, &n, &h);
	check_bash(checks, &n);

	if (json) {
		char *text = artifact_render_doctor(checks, n, &h);

		if (!text) {
			fprintf(stderr, "tsarun: doctor: out of memory\n");
			return 125;
		}
		puts(text);
		free(text);
		return 0;
	}
	printf("tsarun %s on Linux %s (%s, %d CPUs, %s%s%s)\n\n", TSARUN_VERSION, h.kernel, h.arch,
	       h.cpus, strcmp(h.virtualized, "none") ? h.virtualized : "bare metal",
	       strcmp(h.container, "none") ? ", container " : "",
	       strcmp(h.container, "none") ? h.container : "");
	for (int i = 0; i < n; i++)
		printf("  %-12s %-12s %s\n", checks[i].name, checks[i].status, checks[i].detail);
	return 0;
}
