/* SPDX-License-Identifier: MIT */
/*
 * What the builtin's two files share: tsarun-trap.c (the DEBUG trap's hot
 * path, the hooks and the stream) and trap_calibrate.c (the start-up
 * measurement of the trap's own cost, and its cache). Calibration runs the
 * trap for real, so it reads and resets the hot path's state; the hot path
 * reads the figures it leaves. Each name is defined once, in the file the
 * comment names, and described there.
 *
 * All of it hidden: the builtin exports only its structs and its load
 * hooks (nm -D --defined-only).
 */
#ifndef TSARUN_TRAP_INTERNAL_H
#define TSARUN_TRAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tsa_wire.h"

#pragma GCC visibility push(hidden)

/*
 * The DEBUG trap's string, as tsarun-env.bash sets it. Its last word is
 * "$_" because bash sets $_ to the last word of every command it runs, the
 * trap's too: `mkdir -p d && cd $_` would go to "__tsa" otherwise. The
 * trap's last word is $_ as it was, so $_ stays what the script made it.
 * TRAP_PRINTED is how bash prints it into the_printed_command.
 */
#define TRAP_WORD    "__tsa"
#define TRAP_STRING  "__tsa - \"$_\""
#define TRAP_PRINTED "__tsa - \"$_\""

/* tsarun-trap.c: the stream and the recording state. */
extern int sock_fd;
extern int enabled;
extern int calibrating;
extern uint64_t calib_events;
extern uint32_t nrec;
extern size_t blen;
extern int nframes, have_base;
extern unsigned long tty_calls, tty_seen;
extern int last_jobs;
extern uint64_t debug_t;

/* tsarun-trap.c: the figures start-up leaves (calibrate(), cal_cache_load(), TSA_ENV_CAL). */
extern struct tsa_cost cal[TSA_COST_NR];
extern int have_cal;
extern uint64_t cal_spent_cpu;
extern int cal_cached;
extern int cal_respeed;
extern uint32_t cal_bare;
extern uint32_t cal_pre;

/* tsarun-trap.c: the timed parts of a trap run (span_call()). */
extern int span_head, span_tail;
extern int span_tty, span_jobs;
extern uint64_t span_sum;
extern uint64_t span_stall_sum;
extern uint32_t span_med[2];
extern uint32_t span_tty_med;
extern int span_counting;
extern unsigned long span_calls, span_tty_calls;
extern unsigned long span_calls_debug;
extern uint64_t span_last_part[2];

/* tsarun-trap.c */
uint64_t mono_ns(void);
uint64_t cpu_ns(void);
void flush(void);
void text_reset(void);
uint64_t sub_or_0(uint64_t a, uint64_t b);
int real_sigprocmask_hooked(void);
void eval(const char *code);
void span_reset(void);

/* trap_calibrate.c: the start-up figures as one line of text: TSA_ENV_CAL's value, and the cache's. */
#define CAL_TEXT_MAX 160
#define CAL_KEY_MAX  512

void calibrate(void);
void cal_format(char *v, size_t n);
int cal_parse(const char *v);
int cal_key(char *key, size_t n);
int cal_cache_load(const char *key);
void cal_cache_store(const char *key);

#pragma GCC visibility pop

#endif /* TSARUN_TRAP_INTERNAL_H */
