/* SPDX-License-Identifier: MIT */
/* What every cmocka unit test includes, in the order cmocka needs. */
#ifndef TSARUN_UNIT_H
#define TSARUN_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#endif
