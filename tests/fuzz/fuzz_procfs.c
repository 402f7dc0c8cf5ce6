// SPDX-License-Identifier: MIT
/* The /proc parsers, on exactly the bytes given (no NUL after them). */
#include "fuzz.h"
#include "procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procfs_stat st;
	struct procfs_schedstat ss;

	if (!procfs_parse_stat((const char *)data, size, &st) &&
	    memchr(st.comm, '\0', sizeof(st.comm)) == NULL)
		abort(); /* the comm must come back terminated */
	procfs_parse_schedstat((const char *)data, size, &ss);
	return 0;
}
