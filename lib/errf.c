// SPDX-License-Identifier: MIT
/* An error said once, into the caller's buffer (errf.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "errf.h"

int errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}
