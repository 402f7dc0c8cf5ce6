// SPDX-License-Identifier: MIT
/*
 * Reading an artifact back: for a baseline, `tsarun compare` and `tsarun
 * report`. The file is untrusted input: every value is checked for type
 * and range before it is used, and every refusal names the file, the run
 * and the key.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "artifact.h"
#include "run.h"

#define ARTIFACT_MAX_BYTES (1ull << 30)

struct rd {
	const char *name; /* the file */
	const char *what; /* "baseline", ... */
	char *err;
	size_t errlen;
	char where[48]; /* "run 3: " */
};

static int bad(struct rd *d, int ret, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(d->err, d->errlen, "%s '%s': %s%s", d->what, d->name, d->where, msg);
	return ret;
}

static const cJSON *item(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* A non-negative integer-valued number; absent or null gives `absent` (0) when allowed. */
static int get_u64(struct rd *d, const cJSON *o, const char *key, bool required, uint64_t *out)
{
	const cJSON *i = item(o, key);
	double v;

	*out = 0;
	if (!i || cJSON_IsNull(i)) {
		if (required)
			return bad(d, -EINVAL, "'%s' is missing", key);
		return 0;
	}
	if (!cJSON_IsNumber(i))
		return bad(d, -EINVAL, "'%s' is not a number", key);
	v = i->valuedouble;
	if (!isfinite(v) || v < 0 || v >= 1.8446744073709552e19 || v != floor(v))
		return bad(d, -EINVAL, "'%s' is not a non-negative integer", key);
	*out = (uint64_t)v;
	return 0;
}

static int get_int(struct rd *d, const cJSON *o, const char *key, bool required, long lo, long hi,
		   long *out)
{
	const cJSON *i = item(o, key);

	*out = 0;
	if (!i || cJSON_IsNull(i)) {
		if (required)
			return bad(d, -EINVAL, "'%s' is missing", key);
		return 0;
	}
	if (!cJSON_IsNumber(i) || i->valuedouble != floor(i->valuedouble) ||
	    i->valuedouble < (double)lo || i->valuedouble > (double)hi)
		return bad(d, -EINVAL, "'%s' is not an integer from %ld to %ld", key, lo, hi);
	*out = (long)i->valuedouble;
	return 0;
}

static void get_str(const cJSON *o, const char *key, char *out, size_t len, const char *def)
{
	const cJSON *i = item(o, key);

	snprintf(out, len, "%s", cJSON_IsString(i) && i->valuestring ? i->valuestring : def);
}

static int read_host(struct rd *d, const cJSON *h, struct host_info *host)
{
	const cJSON *i;
	long cpus;
	int ret;

	if (!cJSON_IsObject(h))
		return bad(d, -EINVAL, "'host' is missing");
	get_str(h, "kernel", host->kernel, sizeof(host->kernel), "unknown");
	get_str(h, "arch", host->arch, sizeof(host->arch), "unknown");
	get_str(h, "cpu_model", host->cpu_model, sizeof(host->cpu_model), "unknown");
	get_str(h, "virtualized", host->virtualized, sizeof(host->virtualized), "unknown");
	get_str(h, "container", host->container, sizeof(host->container), "unknown");
	get_str(h, "ci", host->ci, sizeof(host->ci), "unknown");
	get_str(h, "pmu_reason", host->pmu_reason, sizeof(host->pmu_reason), "");
	ret = get_int(d, h, "cpus", true, 1, 1 << 20, &cpus);
	if (ret)
		return ret;
	host->cpus = (int)cpus;
	host->btf = cJSON_IsTrue(item(h, "btf"));
	host->pmu = cJSON_IsTrue(item(h, "pmu"));
	i = item(h, "task_delayacct");
	host->task_delayacct = cJSON_IsBool(i) ? cJSON_IsTrue(i) : -1;
	return 0;
}

static int read_status(struct rd *d, const cJSON *o, struct run *r)
{
	static const struct {
		const char *name;
		enum run_status st;
	} names[] = {
	    {"exited", RUN_EXITED},
	    {"signaled", RUN_SIGNALED},
	    {"interrupted", RUN_INTERRUPTED},
	    {"not_started", RUN_NOT_STARTED},
	};
	const cJSON *st = item(o, "status"), *ex = item(o, "exit");
	long code, sig;
	int ret;

	if (!cJSON_IsString(st))
		return bad(d, -EINVAL, "'status' is missing");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(st->valuestring, names[i].name)) {
			r->status = names[i].st;
			goto found;
		}
	return bad(d, -EINVAL,
		   "'status' '%.40s' is not exited, signaled, interrupted or not_started",
		   st->valuestring);
found:
	if (!cJSON_IsObject(ex))
		return bad(d, -EINVAL, "'exit' is missing");
	ret = get_int(d, ex, "code", false, 0, 255, &code);
	if (!ret)
		ret = get_int(d, ex, "signal", false, 0, 127, &sig);
	if (ret)
		return ret;
	r->exit_code = (int)code;
	r->term_signal = (int)sig;
	r->core_dumped = cJSON_IsTrue(item(ex, "core_dumped"));
	return 0;
}

static int read_sources(struct rd *d, const cJSON *q, struct run *r)
{
	const cJSON *a, *i;

	if (!cJSON_IsObject(q))
		return bad(d, -EINVAL, "'quality' is missing");
	a = item(q, "sources_active");
	cJSON_ArrayForEach(i, a)
	{
		if (cJSON_IsString(i))
			run__source(r, i->valuestring, true, NULL);
	}
	a = item(q, "sources_unavailable");
	cJSON_ArrayForEach(i, a)
	{
		const cJSON *n = item(i, "source"), *why = item(i, "reason");

		if (cJSON_IsString(n))
			run__source(r, n->valuestring, false,
				    cJSON_IsString(why) ? why->valuestring : "unavailable");
	}
	return 0;
}

static int read_totals(struct rd *d, const cJSON *t, struct run_totals *tot)
{
	static const struct {
		const char *key;
		int st;
	} states[] = {
	    {"on_cpu_ns", TSA_ST_ONCPU},    {"runqueue_ns", TSA_ST_RUNQ},
	    {"sleeping_ns", TSA_ST_SLEEP},  {"uninterruptible_ns", TSA_ST_DISK},
	    {"stopped_ns", TSA_ST_STOPPED},
	};
	uint64_t v = 0;
	int ret = 0;

	if (!cJSON_IsObject(t))
		return bad(d, -EINVAL, "'totals' is missing");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]) && !ret; i++)
		ret = get_u64(d, t, states[i].key, true, &tot->state_ns[states[i].st]);
	if (!ret)
		ret = get_u64(d, t, "residual_ns", false, &tot->residual_ns);
	if (!ret)
		ret = get_u64(d, t, "lifetime_ns", false, &tot->lifetime_ns);
	if (!ret)
		ret = get_u64(d, t, "voluntary_switches", true, &tot->voluntary);
	if (!ret)
		ret = get_u64(d, t, "involuntary_switches", true, &tot->involuntary);
	if (!ret)
		ret = get_u64(d, t, "slices", false, &tot->slices);
	if (!ret)
		ret = get_u64(d, t, "wakeups", false, &tot->wakeups);
	if (!ret)
		ret = get_u64(d, t, "steal_ns", false, &tot->steal_ns);
	if (!ret)
		ret = get_u64(d, t, "processes", false, &v);
	tot->processes = (uint32_t)v;
	if (!ret)
		ret = get_u64(d, t, "threads", false, &v);
	tot->threads = (uint32_t)v;
	return ret;
}

static int read_run(struct rd *d, const cJSON *o, size_t idx, struct run *r)
{
	const cJSON *i, *ru;
	long v;
	int ret;

	memset(r, 0, sizeof(*r));
	snprintf(d->where, sizeof(d->where), "run %zu: ", idx);
	if (!cJSON_IsObject(o))
		return bad(d, -EINVAL, "not an object");
	ret = get_int(d, o, "index", false, 0, 1 << 30, &v);
	if (ret)
		return ret;
	r->index = (int)v;
	i = item(o, "warmup");
	if (!cJSON_IsBool(i))
		return bad(d, -EINVAL, "'warmup' is missing");
	r->warmup = cJSON_IsTrue(i);
	ret = read_status(d, o, r);
	if (!ret)
		ret = get_u64(d, o, "wall_ns", true, &r->wall_ns);
	if (!ret)
		ret = get_u64(d, o, "user_ns", true, &r->ru.user_ns);
	if (!ret)
		ret = get_u64(d, o, "sys_ns", true, &r->ru.sys_ns);
	if (!ret)
		ret = get_int(d, o, "max_rss_kb", true, 0, 1l << 50, &r->ru.max_rss_kb);
	if (ret)
		return ret;
	i = item(o, "instructions");
	if (i && !cJSON_IsNull(i)) {
		ret = get_u64(d, o, "instructions", true, &r->instructions);
		if (ret)
			return ret;
		r->have_instructions = true;
	}
	ru = item(o, "rusage");
	if (cJSON_IsObject(ru)) {
		get_int(d, ru, "minor_faults", false, 0, 1l << 60, &r->ru.minflt);
		get_int(d, ru, "major_faults", false, 0, 1l << 60, &r->ru.majflt);
		get_int(d, ru, "voluntary_switches", false, 0, 1l << 60, &r->ru.nvcsw);
		get_int(d, ru, "involuntary_switches", false, 0, 1l << 60, &r->ru.nivcsw);
	}
	ret = read_totals(d, item(o, "totals"), &r->totals);
	if (!ret)
		ret = read_sources(d, item(o, "quality"), r);
	if (!ret)
		d->where[0] = '\0';
	return ret;
}

static int read_runs(struct rd *d, const cJSON *a, struct run **out, size_t *n)
{
	size_t count = (size_t)cJSON_GetArraySize(a), k = 0;
	const cJSON *o;
	int ret;

	*out = NULL;
	*n = 0;
	if (!count)
		return 0;
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return bad(d, -ENOMEM, "out of memory");
	cJSON_ArrayForEach(o, a)
	{
		ret = read_run(d, o, k, &(*out)[k]);
		if (ret) {
			free(*out);
			*out = NULL;
			return ret;
		}
		k++;
	}
	*n = k;
	return 0;
}

/*
 * Does the text end inside a string, an object or an array? That is how a
 * file cut short (a full disk, a killed writer) looks, wherever the parser
 * happened to stop.
 */
static bool ends_open(const char *text, size_t len)
{
	long depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == '"')
			in_str = true;
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']')
			depth--;
	}
	return in_str || depth > 0;
}

/* Line and column of offset `at` in text, for a parse error. */
static void position(const char *text, size_t at, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < at; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

int artifact_parse(const char *text, size_t len, const char *name, const char *what,
		   struct session *s, char *err, size_t errlen)
{
	struct rd d = {.name = name, .what = what, .err = err, .errlen = errlen};
	const char *end = NULL;
	const cJSON *sch, *a, *i, *cmp, *base;
	cJSON *root;
	size_t argc, k = 0, line, col, at;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	at = 0;
	while (at < len &&
	       (text[at] == ' ' || text[at] == '\n' || text[at] == '\t' || text[at] == '\r'))
		at++;
	if (at == len)
		return bad(&d, -EINVAL,
			   "the file is empty (was the run that wrote it interrupted?)");
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root) {
		at = end && end >= text ? (size_t)(end - text) : len;
		if (at >= len || ends_open(text, len))
			return bad(&d, -EINVAL,
				   "not valid JSON: the text ends too early (truncated file?)");
		position(text, at, &line, &col);
		return bad(&d, -EINVAL, "not valid JSON: line %zu, column %zu", line, col);
	}
	if (!cJSON_IsObject(root)) {
		ret = bad(&d, -EINVAL, "not a tsarun artifact (the JSON is not an object)");
		goto out;
	}
	sch = item(root, "schema");
	if (!cJSON_IsString(sch)) {
		ret = bad(&d, -EINVAL, "not a tsarun artifact (no \"schema\" key)");
		goto out;
	}
	if (strcmp(sch->valuestring, ARTIFACT_SCHEMA)) {
		ret = bad(&d, -EPROTO,
			  "schema '%.40s' is not supported: this tsarun reads %s (take the "
			  "baseline again with this version)",
			  sch->valuestring, ARTIFACT_SCHEMA);
		goto out;
	}
	i = item(item(root, "tool"), "version");
	s->owned_tool_version = strdup(cJSON_IsString(i) ? i->valuestring : "unknown");
	s->tool_version = s->owned_tool_version;
	ret = read_host(&d, item(root, "host"), &s->host);
	if (ret)
		goto out;

	a = item(item(root, "command"), "argv");
	argc = (size_t)cJSON_GetArraySize(a);
	if (!cJSON_IsArray(a) || !argc) {
		ret = bad(&d, -EINVAL, "'command.argv' is missing");
		goto out;
	}
	s->owned_strings = calloc(argc + 1, sizeof(char *));
	if (!s->owned_strings) {
		ret = bad(&d, -ENOMEM, "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(i, a)
	{
		s->owned_strings[k] = strdup(cJSON_IsString(i) ? i->valuestring : "?");
		if (!s->owned_strings[k]) {
			ret = bad(&d, -ENOMEM, "out of memory");
			goto out;
		}
		s->nowned_strings = ++k;
	}
	s->argv = s->owned_strings;
	s->argc = (int)argc;
	i = item(item(root, "command"), "mode");
	s->mode = cJSON_IsString(i) && !strcmp(i->valuestring, "bash")	    ? "bash"
		  : cJSON_IsString(i) && !strcmp(i->valuestring, "monitor") ? "monitor"
									    : "run";

	a = item(root, "runs");
	if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a)) {
		ret = bad(&d, -EINVAL, "the artifact has no runs");
		goto out;
	}
	ret = read_runs(&d, a, &s->runs, &s->nruns);
	if (ret)
		goto out;
	/* A paired artifact also holds the baseline command's runs. */
	cmp = item(root, "comparison");
	base = cJSON_IsObject(cmp) ? item(cmp, "baseline") : NULL;
	a = cJSON_IsObject(base) ? item(base, "runs") : NULL;
	if (cJSON_IsArray(a)) {
		ret = read_runs(&d, a, &s->base_runs, &s->nbase_runs);
		if (ret) {
			char msg[512];

			snprintf(msg, sizeof(msg), "%s (in comparison.baseline.runs)", err);
			snprintf(err, errlen, "%s", msg);
		}
	}
out:
	cJSON_Delete(root);
	if (ret)
		session__free(s);
	return ret;
}

int artifact_read(const char *path, const char *what, struct session *s, char *err, size_t errlen)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int fd, ret = 0;

	memset(s, 0, sizeof(*s));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s '%s': %s", what, path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s '%s': %s", what, path, strerror(-ret));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		snprintf(err, errlen, "cannot read %s '%s': it is a directory", what, path);
		goto out;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > ARTIFACT_MAX_BYTES) {
		ret = -EFBIG;
		snprintf(err, errlen, "%s '%s' is larger than 1 GiB: not an artifact tsarun wrote",
			 what, path);
		goto out;
	}
	/* Read to the end: the size of a pipe or /proc file is not known in advance. */
	for (size_t cap = 0;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *t;

			cap = cap ? 2 * cap : 64 * 1024;
			if (cap > ARTIFACT_MAX_BYTES + 2) {
				ret = -EFBIG;
				snprintf(err, errlen, "%s '%s' is larger than 1 GiB", what, path);
				goto out;
			}
			t = realloc(text, cap);
			if (!t) {
				ret = -ENOMEM;
				snprintf(err, errlen, "cannot read %s '%s': out of memory", what,
					 path);
				goto out;
			}
			text = t;
		}
		n = read(fd, text + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot read %s '%s': %s", what, path,
				 strerror(-ret));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	text[len] = '\0';
	ret = artifact_parse(text, len, path, what, s, err, errlen);
out:
	free(text);
	close(fd);
	return ret;
}
