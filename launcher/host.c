// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "host.h"
#include "run.h"

int host_read_file(const char *path, char *buf, unsigned long len)
{
	ssize_t n;
	int fd;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static void cpu_model(char *out, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(out, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon || (strncmp(line, "model name", 10) && strncmp(line, "Processor", 9) &&
			       strncmp(line, "cpu model", 9)))
			continue;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(out, len, "%s", colon);
		break;
	}
	fclose(f);
}

static void virtualization(char *out, size_t len)
{
	char buf[64];

	snprintf(out, len, "none");
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a, b, c, d;

	if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 31))) {
		char sig[13] = {0};

		__cpuid(0x40000000, a, b, c, d);
		memcpy(sig, &b, 4);
		memcpy(sig + 4, &c, 4);
		memcpy(sig + 8, &d, 4);
		if (!strncmp(sig, "KVMKVMKVM", 9))
			snprintf(out, len, "kvm");
		else if (!strncmp(sig, "Microsoft Hv", 12))
			snprintf(out, len, "hyperv");
		else if (!strncmp(sig, "VMwareVMware", 12))
			snprintf(out, len, "vmware");
		else if (!strncmp(sig, "XenVMMXenVMM", 12))
			snprintf(out, len, "xen");
		else if (!strncmp(sig, "TCGTCGTCGTCG", 12))
			snprintf(out, len, "qemu");
		else
			snprintf(out, len, "hypervisor");
		return;
	}
#endif
	if (!host_read_file("/sys/hypervisor/type", buf, sizeof(buf)) && buf[0])
		snprintf(out, len, "%s", buf);
}

static void container(char *out, size_t len)
{
	char buf[4096];

	snprintf(out, len, "none");
	if (!access("/.dockerenv", F_OK)) {
		snprintf(out, len, "docker");
		return;
	}
	if (!access("/run/.containerenv", F_OK)) {
		snprintf(out, len, "podman");
		return;
	}
	if (!host_read_file("/proc/1/cgroup", buf, sizeof(buf))) {
		if (strstr(buf, "kubepods"))
			snprintf(out, len, "kubernetes");
		else if (strstr(buf, "docker"))
			snprintf(out, len, "docker");
		else if (strstr(buf, "lxc"))
			snprintf(out, len, "lxc");
	}
}

static void ci_provider(char *out, size_t len)
{
	static const struct {
		const char *env, *name;
	} known[] = {
	    {"GITHUB_ACTIONS", "github-actions"}, {"GITLAB_CI", "gitlab"},
	    {"BUILDKITE", "buildkite"},		  {"CIRCLECI", "circleci"},
	    {"JENKINS_URL", "jenkins"},		  {"TRAVIS", "travis"},
	    {"TF_BUILD", "azure-pipelines"},	  {"CI", "generic"},
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const char *v = getenv(known[i].env);

		if (v && *v && strcmp(v, "false") && strcmp(v, "0")) {
			snprintf(out, len, "%s", known[i].name);
			return;
		}
	}
	snprintf(out, len, "none");
}

static void pmu(struct host_info *h)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_HARDWARE,
	    .size = sizeof(attr),
	    .config = PERF_COUNT_HW_INSTRUCTIONS,
	    .disabled = 1,
	    .exclude_kernel = 1,
	    .exclude_hv = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	h->pmu = fd >= 0;
	h->pmu_reason[0] = '\0';
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV)
		snprintf(h->pmu_reason, sizeof(h->pmu_reason),
			 "no hardware PMU (instructions counter not supported)");
	else if (errno == EACCES || errno == EPERM)
		snprintf(h->pmu_reason, sizeof(h->pmu_reason),
			 "not permitted (kernel.perf_event_paranoid; need CAP_PERFMON)");
	else
		snprintf(h->pmu_reason, sizeof(h->pmu_reason), "perf_event_open: %s",
			 strerror(errno));
}

void host_probe(struct host_info *h)
{
	struct utsname u;
	char buf[32];

	memset(h, 0, sizeof(*h));
	if (!uname(&u)) {
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
		snprintf(h->arch, sizeof(h->arch), "%s", u.machine);
	} else {
		snprintf(h->kernel, sizeof(h->kernel), "unknown");
		snprintf(h->arch, sizeof(h->arch), "unknown");
	}
	h->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cpu_model(h->cpu_model, sizeof(h->cpu_model));
	virtualization(h->virtualized, sizeof(h->virtualized));
	container(h->container, sizeof(h->container));
	h->btf = !access("/sys/kernel/btf/vmlinux", R_OK);
	h->task_delayacct = -1;
	if (!host_read_file("/proc/sys/kernel/task_delayacct", buf, sizeof(buf)))
		h->task_delayacct = atoi(buf);
	pmu(h);
	ci_provider(h->ci, sizeof(h->ci));
}
