// SPDX-License-Identifier: MIT
/*
 * The command line: options_parse() on argv made from the input (NUL bytes
 * separate the arguments; the first may name a subcommand), and the value
 * parsers on each argument.
 */
#include <stdbool.h>

#include "fuzz.h"
#include "options.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_str(data, size), *argv[MAX_ARGS + 2], err[256];
	struct tsarun_opts o;
	int argc = 0;
	uint64_t v;

	argv[argc++] = "tsarun";
	for (char *p = buf; p < buf + size && argc <= MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	options_defaults(&o);
	if (options_parse(&o, argc, argv, err, sizeof(err)) == 0 && o.mode == 0 &&
	    (!o.argv || !o.argv[0]))
		abort(); /* a run with no command must be refused */
	if (strlen(err) >= sizeof(err))
		abort();
	for (int i = 1; i < argc; i++) {
		parse_duration_ns(argv[i], i % 2, &v);
		parse_size(argv[i], &v);
		parse_uint(argv[i], 0, UINT64_MAX, &v);
	}
	free(buf);
	return 0;
}
