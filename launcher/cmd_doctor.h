/* SPDX-License-Identifier: MIT */
/* `tsarun doctor`: what this machine and user allow, and why. */
#ifndef TSARUN_DOCTOR_H
#define TSARUN_DOCTOR_H

#include <stdbool.h>

/* Print the checks (table, or JSON with json). Returns the exit code: 0. */
int doctor_run(bool json);

#endif /* TSARUN_DOCTOR_H */
