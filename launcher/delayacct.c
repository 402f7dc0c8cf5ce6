// SPDX-License-Identifier: MIT
/* kernel.task_delayacct (see delayacct.h). */
#include <stdlib.h>

#include "delayacct.h"
#include "host.h"

int delayacct_read(void)
{
	char buf[16];

	if (host_read_file(DELAYACCT_SYSCTL, buf, sizeof(buf)))
		return -1;
	return atoi(buf) ? 1 : 0;
}
