// SPDX-License-Identifier: MIT
/*
 * tsarun-trap.so: the loadable bash builtin `__tsa` that records what a
 * bash process runs, for `tsarun --bash`.
 *
 * The injector (tsarun-env.bash, sourced through BASH_ENV) enables it and
 * runs `__tsa start` (functrace on, for bash only: see functrace_own),
 * then sets `trap __tsa DEBUG`. Bash
 * parses the trap string at every command, so the string is one word and
 * all the work is here, in C, reading bash's own state:
 *
 *   the command     the_printed_command_except_trap (what $BASH_COMMAND is)
 *   its line        line_number
 *   functions       funcnest, this_shell_function, BASH_SOURCE[0]
 *   source, eval    sourcenest, evalnest
 *   traps           signal_in_progress(), trap_list[]
 *   forks           pthread_atfork(): bash forks through fork(3)
 *   exec            bash's own execve() slot, redirected here (see hook_got)
 *   exit            atexit()
 *   trap tails      bash's tcsetpgrp() slot and its job table (trap_calibrate.c)
 *   trap bodies     the command, seen through bash's sigprocmask() slot
 *
 * Records are appended to a per-process buffer and sent as one datagram
 * when the buffer fills, before a fork, before an exec and at exit. A fork
 * flushes first, so that everything a child says about its parent reaches
 * tsarun after what the parent said before the fork. Each process is one
 * stream with its own record sequence numbers (tsa_wire.h).
 *
 * Cost per command: one clock read, one CPU-clock read, a hash of the
 * command text, a 32-byte append. Texts are sent once per process and
 * referred to by id afterwards. That cost, which the profile removes from
 * every span, is measured at start-up before the script runs, or read from
 * the user's cache (trap_calibrate.c; what the two files share is in
 * trap_internal.h).
 */
#include <config.h> /* bash's: defines _GNU_SOURCE (fopencookie) */

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "builtins.h"
#include "shell.h"
#include "bashgetopt.h"
#include "common.h"
#include "jobs.h"
#include "variables.h"
#include "version.h"

#include "tsa_wire.h"
#include "trap_internal.h"

/* bash's trap.h is not installed; these are its definitions (bash 5.x). */
#define TSA_DEBUG_TRAP	NSIG
#define TSA_ERROR_TRAP	(NSIG + 1)
#define TSA_RETURN_TRAP (NSIG + 2)
#define TSA_EXIT_TRAP	0
#define TSA_BASH_NSIG	(NSIG + 3)

extern int funcnest, sourcenest, evalnest, line_number, subshell_level, subshell_environment;
extern char *the_printed_command, *the_printed_command_except_trap;
extern int the_printed_command_size;
extern SHELL_VAR *this_shell_function;
extern char *trap_list[];
extern int signal_in_progress(int);
extern PROCESS *the_pipeline;
extern char *dist_version;
extern int array_needs_making;
extern volatile int last_command_exit_value;
extern int running_trap, indirection_level;
extern int run_debug_trap(void);
extern FILE *xtrace_fp;
/* set -x; set -v (bash 5.2 keeps it in both of the last two) */
extern int echo_command_at_execute, echo_input_at_read, verbose_flag;
extern int function_trace_mode, debugging_mode;
extern void set_signal(int, char *);
extern void restore_default_signal(int);
extern int signal_is_trapped(int);
extern int trap_builtin(WORD_LIST *);

int sock_fd = -1;
int enabled;
int calibrating;
uint64_t calib_events;

/* The stream. */
static uint32_t my_pid, my_gen;
static uint32_t seq; /* records sent before the buffer */
uint32_t nrec;
size_t blen;
/*
 * The large tables (this buffer, frames, texts, rets, udbg_saves) live in
 * one mapping of their own (tables_map()), not among the small variables:
 * in .bss they spread those over six pages, each written by every trap run
 * and so copied again after every fork (a fork of /bin/true under --bash
 * took 36 more page faults than without).
 */
static char *buf;      /* TSA_WIRE_MAX_CHUNK bytes, page-aligned */
static int need_hello; /* a forked child says HELLO with its first record */
static int is_root;
struct tsa_cost cal[TSA_COST_NR];
int have_cal; /* cal holds a measurement (this process's, or its first bash's) */
uint64_t cal_spent_cpu;
int cal_cached;	   /* cal came from the user's cache (cal_cache_load) */
int cal_respeed;   /* ... or was measured: the cache's was of another speed */
uint32_t cal_bare; /* least CPU ns of the base's bare loop when cal was measured */
uint32_t cal_pre;  /* permille of a trap run before the builtin's clock read */
uint64_t debug_t;  /* when the last trap run read the clock */

/*
 * Most of each trap run is timed as it happens rather than estimated.
 * run_debug_trap() begins by blocking SIGCHLD (save_pipeline()) and ends
 * by unblocking it (restore_pipeline()), then, once the process has had
 * children, gives the terminal back (give_terminal_to(), which blocks
 * SIGTTOU among others) and walks its job table (notify_and_cleanup()):
 * all through sigprocmask(), whose GOT slot is ours (tsa_sigprocmask()).
 * The hook stamps CLOCK_MONOTONIC (the vDSO: tens of nanoseconds) at the
 * calls. Start-up counts how many calls a trap run makes before the
 * builtin's clock read (span_head), and after it in each part of its tail
 * (span_tail, span_tty, span_jobs): on_debug() then knows which stamp
 * began its run, and the hook which call ends it (the terminal's part is
 * recognised by SIGTTOU in the set, the job table's is known when the
 * clock is read). The time goes to the reader in SPAN records (tsa_wire.h);
 * what lies outside (a few instructions at either end, a clock read, and
 * what the trap does to the caches the command then finds) is all that
 * start-up still estimates, and the reader charges that at the speed the
 * timed parts show. A machine whose speed changes under a run (a shared
 * host changes it twofold within a second) then moves a small estimate,
 * not the whole trap cost.
 *
 * The stamps are wall time, charged as CPU: the process is on a CPU for
 * the microseconds of a trap run, unless it was preempted there. A switch
 * away and back takes longer than SPAN_GUARD_NS here, and a part longer
 * than SPAN_GUARD times its start-up median plus that is taken to hold a
 * wait: its median is charged instead, and the record says so
 * (TSA_SF_GUESSED). A looser bound (8 times plus 20 us) let the short
 * preemptions of a loaded machine through, and a tight loop's CPU time
 * came out 18% low.
 *
 * Not every such part waited off the CPU: on a PVM guest the host stops
 * the vCPU for 20-50 us thousands of times a second, reports no steal,
 * and the stop is the process's CPU time (so are interrupts). What such a
 * part held beyond its median, less the time the process spent off the
 * CPU since the last clock read (its wall time less its CPU time: all of
 * it may have fallen in the part), was on the CPU in the trap run, and is
 * charged as timed, in a record of its own (TSA_SF_STALL) that is not a
 * speed reading. Left in the CPU time, it was in no timed part: start-up
 * took its own stalls for the untimed rest of a trap run and charged them
 * at every run of the script, at the rate of those 100 ms (on a loaded
 * PVM guest, from 1.2 to 11.4 us a run in 23 start-ups, 0.6 to 1.0 us with
 * them taken out, while the script's own came to 1.6 to 2.3 us a run), and
 * a subshell's loop came out with no CPU time at all.
 */
#define SPAN_STAMPS   8
#define SPAN_GUARD    2
#define SPAN_GUARD_NS 4000
int span_head, span_tail; /* 0: not timed (no hook, or no steady count at start-up) */
int span_tty, span_jobs;  /* calls of the tail's terminal and job-table parts (0: untimed) */
static uint64_t span_stamp[SPAN_STAMPS];
static unsigned span_nstamps;	 /* calls stamped since the last tail ended */
static int span_tail_calls = -1; /* calls since the clock read while a tail is timed; -1: none */
static int span_tail_need;	 /* the call that ends it */
static int span_tail_tty;	 /* it has the terminal's part */
static uint64_t span_prov;	 /* an end, unless the terminal's part follows (0: none) */
static uint64_t span_t0;	 /* the clock read that began the tail being timed */
static uint64_t span_due;	 /* the last run's tail, timed, not sent yet */
static int span_guessed;	 /* a part of span_due was its median */
uint64_t span_sum;		 /* every part charged since start (start-up reads it) */
static uint64_t
    span_stall; /* what parts charged at their median held beyond it, since the clock read */
uint64_t span_stall_sum;     /* of span_sum, what was charged of those as on the CPU */
static uint64_t span_prev_t; /* the last clock read: wall and CPU time (0: none) */
static uint64_t span_prev_cpu;
uint32_t span_med[2];			  /* start-up medians of the head and the base tail */
uint32_t span_tty_med;			  /* what the terminal's part adds to a tail (start-up) */
int span_counting;			  /* start-up: count the calls, do not time */
unsigned long span_calls, span_tty_calls; /* calls seen while counting; with SIGTTOU */
unsigned long span_calls_debug;		  /* span_calls at the clock read */
uint64_t span_last_part[2];		  /* the last head and tail timed (start-up) */
static void span_debug(uint64_t t, uint64_t cpu);
static void span_last(void);

/* What the tail of this stream's last trap run cost (tsa_wire.h, TSA_TAIL_*). */
unsigned long tty_calls, tty_seen;
int last_jobs;
static uint8_t run_flags;		     /* for the first record of the trap run under way */
static char trap_cmd[TSA_WIRE_TEXT_MAX + 1]; /* the command a trap body runs */
static int trap_cmd_sig = -1;		     /* the user trap running (-1: none) */
static unsigned long trap_cmd_seq, trap_cmd_used;

/* What a forked child needs to know about its parent. */
static uint32_t parent_pid, parent_gen, fork_index, fork_count;
static uint64_t fork_t;
static int reaped_seen;

/* Frames: functions, sourced files, evals, traps. */
struct frame {
	uint8_t kind;
	int sig; /* TRAP */
	int fn, sn, ev;
	uint64_t interrupted; /* TRAP (ERR, RETURN, EXIT): hash of the command it interrupted */
};
#define MAX_FRAMES TSA_MAX_FRAMES
static struct frame *frames; /* MAX_FRAMES (tables_map) */
int nframes, have_base;
static int base_frames;
static struct frame base; /* counters at the stream's first command */

/* Texts sent on this stream: content -> id. */
struct text_ent {
	uint64_t hash;
	char *s;
	uint32_t id;
	uint32_t gen;
	uint16_t len;
};
#define TEXT_SLOTS	 8192
#define TEXT_MAX_ENTRIES 6000
static struct text_ent *texts; /* TEXT_SLOTS (tables_map) */
static uint32_t text_gen = 1, text_count, text_next_id = 1;

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t child_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru))
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

void flush(void)
{
	struct tsa_chunk *c = (struct tsa_chunk *)buf;
	ssize_t n;

	if (!nrec || sock_fd < 0) {
		blen = 0;
		nrec = 0;
		return;
	}
	c->magic = TSA_WIRE_MAGIC;
	c->version = TSA_WIRE_VERSION;
	c->hdr_len = sizeof(*c);
	/* While measuring, send as a run would, under pid 0: the reader drops it. */
	c->pid = calibrating ? 0 : my_pid;
	c->gen = my_gen;
	c->seq = calibrating ? 0 : seq;
	c->nrec = nrec;
	do
		n = send(sock_fd, buf, blen, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == ECONNREFUSED || errno == ENOTCONN || errno == EBADF ||
		      errno == ENOTSOCK || errno == EPIPE)) {
		/* tsarun is gone, or the script closed our socket: stop recording. */
		enabled = 0;
	}
	if (!calibrating)
		seq += nrec;
	nrec = 0;
	blen = 0;
}

/* Room for a record of len bytes (a multiple of 8); flushes when full. */
static void *reserve(size_t len, uint8_t type, uint8_t flags, uint32_t arg)
{
	struct tsa_rec *r;

	if (blen == 0)
		blen = sizeof(struct tsa_chunk);
	if (blen + len > TSA_WIRE_MAX_CHUNK) {
		flush();
		blen = sizeof(struct tsa_chunk);
	}
	r = (struct tsa_rec *)(buf + blen);
	memset(r, 0, len);
	r->type = type;
	r->flags = flags | run_flags;
	run_flags = 0;
	r->len = (uint16_t)len;
	r->arg = arg;
	blen += len;
	nrec++;
	return r;
}

/*
 * Eight bytes at a time: a command's text is hashed at every trap run, and
 * a byte-wise hash made the cost of a trap run grow with the length of the
 * command (about a nanosecond a byte), which the trap-cost correction,
 * measured on one command, cannot know.
 */
static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return h ? h : 1;
}

/*
 * The command a trap run interrupted: bash keeps $BASH_COMMAND at it for
 * the whole run, functions the trap calls included. Two runs of one trap
 * with no command between them (`builtin eval false` runs ERR for false,
 * then for the eval, at the same depth) differ in it.
 */
static uint64_t interrupted_hash(void)
{
	const char *c = the_printed_command_except_trap ? the_printed_command_except_trap : "";

	return hash_bytes(c, strlen(c));
}

void text_reset(void)
{
	text_gen++;
	text_count = 0;
	text_next_id = 1;
}

/* The id of a text on this stream, sending its definition the first time. */
static uint32_t text_id(const char *s)
{
	size_t n;
	uint64_t h;
	uint32_t i;
	struct text_ent *e;

	if (!s)
		s = "";
	n = strnlen(s, TSA_WIRE_TEXT_MAX);
	h = hash_bytes(s, n);
	for (i = (uint32_t)h & (TEXT_SLOTS - 1);; i = (i + 1) & (TEXT_SLOTS - 1)) {
		e = &texts[i];
		if (e->gen != text_gen)
			break;
		if (e->hash == h && e->len == n && !memcmp(e->s, s, n))
			return e->id;
	}
	if (text_count >= TEXT_MAX_ENTRIES) {
		/* Many distinct texts (eval in a loop): start over, tell the reader. */
		text_reset();
		reserve(sizeof(struct tsa_rec), TSA_R_TEXT_RESET, 0, 0);
		for (i = (uint32_t)h & (TEXT_SLOTS - 1); texts[i].gen == text_gen;
		     i = (i + 1) & (TEXT_SLOTS - 1))
			;
		e = &texts[i];
	}
	free(e->s);
	e->s = malloc(n ? n : 1);
	if (!e->s) {
		e->gen = 0;
		return 0;
	}
	memcpy(e->s, s, n);
	e->hash = h;
	e->len = (uint16_t)n;
	e->gen = text_gen;
	e->id = text_next_id++;
	text_count++;
	{
		size_t len = (sizeof(struct tsa_text) + n + 7) & ~(size_t)7;
		char *p = reserve(len, TSA_R_TEXT, 0, e->id);

		memcpy(p + sizeof(struct tsa_text), s, n);
	}
	return e->id;
}

static uint16_t clamp16(uint64_t v)
{
	return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

static void hello(uint32_t how, uint64_t t, uint64_t cpu)
{
	struct tsa_hello *h = reserve(sizeof(*h), TSA_R_HELLO, 0, how);

	h->t = t;
	h->cpu = cpu;
	h->child_cpu = how == TSA_HELLO_FORK ? 0 : child_cpu_ns();
	h->pid = my_pid;
	h->ppid = how == TSA_HELLO_FORK ? parent_pid : (uint32_t)getppid();
	h->parent_gen = how == TSA_HELLO_FORK ? parent_gen : 0;
	h->fork_index = how == TSA_HELLO_FORK ? fork_index : 0;
	h->subshell_env = (uint32_t)subshell_environment;
	h->subshell_level = (uint32_t)subshell_level;
	memcpy(h->cal, cal, sizeof(h->cal));
	h->cal_spent_cpu_ns = how == TSA_HELLO_START ? cal_spent_cpu : 0;
	h->cal_pre_permille = cal_pre;
	h->span_med_ns = span_head ? clamp16(span_med[0] + span_med[1]) : 0;
	h->span_tty_ns = span_head && span_tty ? clamp16(span_tty_med) : 0;
	h->hflags = (have_cal ? TSA_HF_CALIBRATED : 0) | (is_root ? TSA_HF_ROOT : 0) |
		    (cal_cached ? TSA_HF_CAL_CACHED : 0) | (cal_respeed ? TSA_HF_CAL_RESPEED : 0);
	h->bash_version = 502;
}

static void ensure_hello(void)
{
	if (!need_hello)
		return;
	need_hello = 0;
	hello(TSA_HELLO_FORK, fork_t, 0);
}

/*
 * The user trap whose body is running, innermost; -1 when none. bash sets
 * running_trap to it, but sets it to the DEBUG trap for the DEBUG trap's
 * run: the sigprocmask() hook sees it as the run begins (user_sig). Signal
 * traps run from run_pending_traps() are not marked in progress, so that
 * is the only way to see them; without the hook, special traps only.
 */
static int user_sig = -1;

static int is_special_trap(int sig)
{
	return sig == TSA_EXIT_TRAP || sig == TSA_RETURN_TRAP || sig == TSA_ERROR_TRAP;
}

static int running_user_trap(void)
{
	if (real_sigprocmask_hooked())
		return user_sig;
	if (signal_in_progress(TSA_RETURN_TRAP))
		return TSA_RETURN_TRAP;
	if (signal_in_progress(TSA_ERROR_TRAP))
		return TSA_ERROR_TRAP;
	if (signal_in_progress(TSA_EXIT_TRAP))
		return TSA_EXIT_TRAP;
	return -1;
}

static const char *trap_name(int sig)
{
	static char name[16];
	const char *n;

	switch (sig) {
	case TSA_EXIT_TRAP:
		return "EXIT";
	case TSA_RETURN_TRAP:
		return "RETURN";
	case TSA_ERROR_TRAP:
		return "ERR";
	}
	n = sigabbrev_np(sig);
	if (!n) {
		snprintf(name, sizeof(name), "%d", sig);
		return name;
	}
	snprintf(name, sizeof(name), "SIG%s", n);
	return name;
}

static const char *bash_source0(void)
{
	SHELL_VAR *v = find_variable("BASH_SOURCE");
	char *s;

	if (!v || !array_p(v))
		return "";
	s = array_reference(array_cell(v), 0);
	return s ? s : "";
}

/*
 * bash runs a trap's string as it runs an eval'd one, one evalnest deeper:
 * our DEBUG trap sees every eval (and every user trap body) one level
 * deeper than the fork hook, which runs in the command itself. Frames
 * hold the level outside our trap, so that a fork inside an eval does not
 * take the eval for ended. The difference is measured at the first trap
 * run (start() runs outside any), not assumed.
 */
static int ev_start, ev_trap = -1;

static int ev_level(void)
{
	if (running_trap != TSA_DEBUG_TRAP + 1)
		return evalnest;
	if (ev_trap < 0)
		ev_trap = evalnest > ev_start ? evalnest - ev_start : 0;
	return evalnest - ev_trap;
}

static int frames_full; /* a frame was not pushed: MAX_FRAMES deep */

static void push(uint8_t kind, int sig, uint64_t t, uint64_t cpu)
{
	struct frame *f;
	struct tsa_push *p;
	uint32_t name, file;

	if (nframes == MAX_FRAMES) {
		frames_full = 1; /* said at the end (TSA_EF_DEEP) */
		return;
	}
	f = &frames[nframes++];
	f->kind = kind;
	f->sig = sig;
	f->fn = funcnest;
	f->sn = sourcenest;
	f->ev = ev_level();
	f->interrupted = kind == TSA_FR_TRAP && is_special_trap(sig) ? interrupted_hash() : 0;
	switch (kind) {
	case TSA_FR_FUNC:
		name = text_id(this_shell_function ? this_shell_function->name : "");
		file = text_id(bash_source0());
		break;
	case TSA_FR_SOURCE:
		name = text_id(bash_source0());
		file = name;
		break;
	case TSA_FR_TRAP:
		name = text_id(trap_name(sig));
		file = text_id(sig >= 0 && sig < TSA_BASH_NSIG && trap_list[sig] &&
				       trap_list[sig] != (char *)1
				   ? trap_list[sig]
				   : "");
		break;
	default:
		name = file = 0;
		break;
	}
	if (js.c_totreaped != reaped_seen) {
		struct tsa_push_cc *pc = reserve(sizeof(*pc), TSA_R_PUSH, kind | TSA_FR_CHILD_CPU,
						 (uint32_t)line_number);

		reaped_seen = js.c_totreaped;
		pc->child_cpu = child_cpu_ns();
		p = &pc->p;
	} else {
		p = reserve(sizeof(*p), TSA_R_PUSH, kind, (uint32_t)line_number);
	}
	p->t = t;
	p->cpu = cpu;
	p->name = name;
	p->file = file;
}

static void pop(uint64_t t, uint64_t cpu)
{
	struct tsa_pop *p;

	nframes--;
	if (nframes < base_frames) {
		/* Below where this stream began (a forked child leaving a function). */
		base_frames = nframes;
		return;
	}
	if (js.c_totreaped != reaped_seen) {
		struct tsa_pop_cc *pc = reserve(sizeof(*pc), TSA_R_POP, TSA_FR_CHILD_CPU,
						(uint32_t)(nframes - base_frames));

		reaped_seen = js.c_totreaped;
		pc->child_cpu = child_cpu_ns();
		p = &pc->p;
	} else {
		p = reserve(sizeof(*p), TSA_R_POP, 0, (uint32_t)(nframes - base_frames));
	}
	p->t = t;
	p->cpu = cpu;
}

static int frame_holds(const struct frame *f)
{
	switch (f->kind) {
	case TSA_FR_FUNC:
		return funcnest >= f->fn;
	case TSA_FR_SOURCE:
		return sourcenest >= f->sn;
	case TSA_FR_EVAL:
		return ev_level() >= f->ev;
	case TSA_FR_TRAP:
		/*
		 * The same trap may run again one function, sourced file or eval
		 * up, or for another command at the same depth, with no DEBUG
		 * trap run between: that is another run, another frame. `eval
		 * false` runs ERR for false inside the eval, then again for the
		 * eval, and the trap is in progress both times.
		 */
		if (funcnest < f->fn || sourcenest < f->sn || ev_level() < f->ev)
			return 0;
		if (is_special_trap(f->sig))
			return signal_in_progress(f->sig) != 0 &&
			       interrupted_hash() == f->interrupted;
		/* A signal trap: one still runs, at its depth, and it is this one or below. */
		return user_sig >= 0 && (user_sig == f->sig || is_special_trap(user_sig));
	}
	return 0;
}

/* Pop every frame from the lowest one that has ended. */
static void pop_ended(uint64_t t, uint64_t cpu)
{
	for (int i = 0; i < nframes; i++)
		if (!frame_holds(&frames[i])) {
			while (nframes > i)
				pop(t, cpu);
			return;
		}
}

/* Bring the frame stack in line with bash's counters. Returns 1 on a function entry. */
static int sync_frames(uint64_t t, uint64_t cpu)
{
	const struct frame *top;
	int sig, entered = 0, ev = ev_level();

	if (!have_base) {
		have_base = 1;
		base.fn = funcnest;
		base.sn = sourcenest;
		base.ev = ev;
	}
	pop_ended(t, cpu);
	top = nframes ? &frames[nframes - 1] : &base;
	if (funcnest < top->fn || sourcenest < top->sn || ev < top->ev) {
		/* Counters went below the base (a trap or eval left early): re-base. */
		if (!nframes) {
			base.fn = funcnest;
			base.sn = sourcenest;
			base.ev = ev;
		}
	}
	sig = running_user_trap();
	if (sig >= 0) {
		int found = 0;

		for (int i = nframes - 1; i >= 0; i--)
			if (frames[i].kind == TSA_FR_TRAP && frames[i].sig == sig) {
				found = 1;
				break;
			}
		if (!found) {
			/*
			 * A trap's body runs one eval level deeper than the command
			 * it interrupted: a frame at the body's level or deeper has
			 * ended (the eval whose failure runs ERR as it returns).
			 */
			while (nframes && frames[nframes - 1].ev >= ev)
				pop(t, cpu);
			push(TSA_FR_TRAP, sig, t, cpu);
			top = &frames[nframes - 1];
		}
	}
	top = nframes ? &frames[nframes - 1] : &base;
	if (ev > top->ev) {
		push(TSA_FR_EVAL, -1, t, cpu);
		top = &frames[nframes - 1];
	}
	if (sourcenest > top->sn) {
		push(TSA_FR_SOURCE, -1, t, cpu);
		top = &frames[nframes - 1];
	}
	if (funcnest > top->fn) {
		push(TSA_FR_FUNC, -1, t, cpu);
		entered = 1;
	}
	return entered;
}

/*
 * What the tail of the previous trap run paid: bash calls tcsetpgrp()
 * there once the process has children (see calibrate(), trap_calibrate.c),
 * and walks its job table when it has one. The job table is read now, for
 * the next record.
 */
static uint8_t trap_tail(void)
{
	uint8_t tail = last_jobs ? TSA_TAIL_JOBS : 0;

	if (tty_calls != tty_seen) {
		tty_seen = tty_calls;
		tail |= TSA_TAIL_TTY;
	}
	last_jobs = jobs && js.j_jobslots > 0;
	return tail;
}

/*
 * functrace as the script sees it. DEBUG reaches functions, command
 * substitutions and subshells only with functrace on, and functrace also
 * makes them inherit the script's RETURN trap, which they do not in a
 * plain run: a `trap 'echo bye' RETURN` at the top would fire at every
 * function's return. So bash's own flag stays on, and the 'T' entry of
 * bash's option table (shell_flags: what `set -T`, `set -o functrace`,
 * `$-` and SHELLOPTS read and write) is pointed at user_functrace, the
 * script's view. What functrace off would do to the RETURN trap is done
 * here: a function without the trace attribute (declare -t) runs with no
 * RETURN trap, and its caller's is back when it returns unless it set one
 * of its own (bash: execute_function, maybe_set_return_trap); a subshell
 * does not run one (reset_signal_handlers), though `trap -p` there still
 * lists it. A function's entry is seen at its first command (or at a fork
 * before that: `f() ( list )`); its return, by a RETURN trap of ours,
 * RET_MARK, which `trap -p` does not list (tsa_trap_builtin).
 */
struct tsa_flag {
	char name;
	int *value;
};
extern struct tsa_flag shell_flags[];
static int user_functrace;
static int ft_owned; /* shell_flags' 'T' points at user_functrace */
static int ft_dbg;   /* debugging_mode as last seen */

#define RET_MARK "__tsa r \"$_\""
struct ret_save {
	int fn;	     /* funcnest of the function */
	char *saved; /* the caller's RETURN trap (malloc'd), or NULL: ours (RET_MARK) */
};
static struct ret_save *rets; /* MAX_FRAMES (tables_map) */
static int nrets, ret_fn = -1;
static char *ret_hidden; /* a subshell's RETURN trap: listed, not run */

static int ret_is_mark(const char *s)
{
	return s && s != (char *)1 && !strcmp(s, RET_MARK);
}

/* The protection of the mapping that holds addr (/proc/self/maps); -1: unknown. */
static int page_prot(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512], perms[8];
	unsigned long lo, hi;
	int prot = -1;

	if (!f)
		return -1;
	while (prot < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && addr >= lo && addr < hi)
			prot = (perms[0] == 'r' ? PROT_READ : 0) |
			       (perms[1] == 'w' ? PROT_WRITE : 0) |
			       (perms[2] == 'x' ? PROT_EXEC : 0);
	fclose(f);
	return prot;
}

static void functrace_own(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	user_functrace = function_trace_mode;
	ft_dbg = debugging_mode;
	for (struct tsa_flag *f = shell_flags; f->name; f++) {
		/* An aligned pointer: on one page, read-only after relocation (RELRO) or not. */
		uintptr_t page = (uintptr_t)&f->value & ~((uintptr_t)pg - 1);
		int prot;

		if (f->name != 'T' || f->value != &function_trace_mode)
			continue;
		prot = page_prot(page);
		if (prot < 0 || mprotect((void *)page, (size_t)pg, prot | PROT_WRITE))
			break;
		f->value = &user_functrace;
		mprotect((void *)page, (size_t)pg, prot);
		ft_owned = 1;
		break;
	}
	/* Without the table (another layout), functrace is on for the script too, as with set -T. */
	function_trace_mode = 1;
}

/*
 * `shopt -s extdebug` sets bash's flag itself (on), and `shopt -u extdebug`
 * (off): the script's flag follows, and bash's is on again.
 */
static void functrace_resync(void)
{
	if (debugging_mode != ft_dbg)
		user_functrace = ft_dbg = debugging_mode;
	else if (!function_trace_mode)
		user_functrace = 0;
	function_trace_mode = 1;
}

/* The RETURN trap as the script would have it now: a function entered or left. */
static void ret_sync(void)
{
	const char *cur;

	if (!ft_owned || funcnest == ret_fn)
		return;
	/* Left: a caller whose function removed our mark gets its trap back (maybe_set_return_trap). */
	while (nrets && rets[nrets - 1].fn > funcnest) {
		struct ret_save *r = &rets[--nrets];

		cur = trap_list[TSA_RETURN_TRAP];
		if (r->saved && (!signal_is_trapped(TSA_RETURN_TRAP) || ret_is_mark(cur)))
			set_signal(TSA_RETURN_TRAP, r->saved);
		free(r->saved);
	}
	if (funcnest > ret_fn && funcnest > 0 && !user_functrace && nrets < MAX_FRAMES &&
	    !(this_shell_function && trace_p(this_shell_function)) &&
	    signal_is_trapped(TSA_RETURN_TRAP) && trap_list[TSA_RETURN_TRAP] &&
	    trap_list[TSA_RETURN_TRAP] != (char *)1 && (!nrets || rets[nrets - 1].fn < funcnest)) {
		cur = trap_list[TSA_RETURN_TRAP];
		rets[nrets].fn = funcnest;
		rets[nrets].saved = ret_is_mark(cur) ? NULL : strdup(cur);
		nrets++;
		if (!ret_is_mark(cur))
			set_signal(TSA_RETURN_TRAP, RET_MARK);
	}
	ret_fn = funcnest;
}

/* `__tsa r`: our mark ran as the function returned; its caller's trap is back. */
static void ret_returned(void)
{
	if (!nrets || rets[nrets - 1].fn < funcnest)
		return;
	while (nrets && rets[nrets - 1].fn >= funcnest) {
		struct ret_save *r = &rets[--nrets];

		if (r->fn == funcnest) {
			if (r->saved)
				set_signal(TSA_RETURN_TRAP, r->saved);
			else if (!nrets)
				restore_default_signal(TSA_RETURN_TRAP);
		}
		free(r->saved);
	}
	ret_fn = funcnest - 1;
}

/* A forked child: a subshell runs no RETURN trap unless functrace is on. */
static void ret_child(void)
{
	while (nrets)
		free(rets[--nrets].saved);
	ret_fn = funcnest;
	if (!ft_owned || user_functrace || !signal_is_trapped(TSA_RETURN_TRAP))
		return;
	if (!ret_is_mark(trap_list[TSA_RETURN_TRAP]) && trap_list[TSA_RETURN_TRAP] != (char *)1) {
		free(ret_hidden);
		ret_hidden = strdup(trap_list[TSA_RETURN_TRAP]);
	}
	restore_default_signal(TSA_RETURN_TRAP);
}

/* Our mark's run: its DEBUG run records nothing (the time stays with the command before). */
static int ret_mark_running(void)
{
	return nrets && signal_in_progress(TSA_RETURN_TRAP) &&
	       ret_is_mark(trap_list[TSA_RETURN_TRAP]);
}

/*
 * The script's own DEBUG trap. Ours must stay on DEBUG (it is the
 * recording), and functrace is on for bash (functrace_own), so bash itself
 * would run the script's trap in every function, command substitution and
 * subshell. `trap ... DEBUG` (tsa_trap_builtin) therefore takes the
 * script's string out of bash's trap list into udbg and puts ours back, and
 * our trap run runs it (run_user_debug) where bash would have: as the
 * script left it, in a function only with functrace on for the script or
 * the function's trace attribute (execute_function: the caller's trap is
 * saved, and back at the return unless the function set one of its own:
 * maybe_set_debug_trap), and not in a forked child without functrace
 * (reset_or_restore_signal_handlers), where `trap -p` still lists it. Its
 * status is the trap run's (extdebug skips the command on 1, returns on
 * 2), its $? and $LINENO are the command's, as in bash's own trap run.
 * One thing differs: bash sets $_ to the last word of the trap's last
 * command, and ours keeps $_ as the script left it (TRAP_STRING).
 */
static char *udbg;   /* its string (bash's allocation), (char *)1 when ignored, or NULL */
static int udbg_off; /* not run here: a forked child without functrace */
static int udbg_running;
struct udbg_save {
	int fn;	     /* funcnest of the function that does not inherit it */
	char *saved; /* the caller's trap */
};
static struct udbg_save *udbg_saves; /* MAX_FRAMES (tables_map) */
static int nudbg, udbg_fn = -1;

static void udbg_set(char *s)
{
	if (udbg && udbg != (char *)1)
		free(udbg);
	udbg = s;
	udbg_off = 0;
}

/* Functions entered or left since the last trap run: the script's trap as bash would have it. */
static void udbg_sync(void)
{
	if (funcnest == udbg_fn)
		return;
	while (nudbg && udbg_saves[nudbg - 1].fn > funcnest) {
		struct udbg_save *u = &udbg_saves[--nudbg];

		if (!udbg)
			udbg_set(u->saved);
		else if (u->saved != (char *)1)
			free(u->saved);
	}
	if (funcnest > udbg_fn && funcnest > 0 && udbg && !udbg_off && !user_functrace &&
	    !(this_shell_function && trace_p(this_shell_function)) && nudbg < MAX_FRAMES) {
		udbg_saves[nudbg].fn = udbg_fn + 1 > 0 ? udbg_fn + 1 : funcnest;
		udbg_saves[nudbg++].saved = udbg;
		udbg = NULL;
	}
	udbg_fn = funcnest;
}

/* A forked child: it inherits the script's trap only with functrace (set -T). */
static void udbg_child(void)
{
	while (nudbg) {
		char *saved = udbg_saves[--nudbg].saved;

		if (saved != (char *)1)
			free(saved);
	}
	udbg_fn = funcnest;
	if (udbg && !user_functrace)
		udbg_off = 1;
}

/* Run the script's DEBUG trap, if bash would run it now: its status, else 0. */
static int run_user_debug(void)
{
	int r;

	if (!udbg || udbg == (char *)1 || udbg_off)
		return EXECUTION_SUCCESS;
	udbg_running = 1;
	/*
	 * As _run_trap_internal does for DEBUG: no line reset; parse_and_execute
	 * frees the copy. At our trap's level of evaluation, not one deeper: set
	 * -x prints as many PS4 characters as bash's own trap run would.
	 */
	indirection_level--;
	parse_and_execute(savestring(udbg), "debug trap", SEVAL_NONINT | SEVAL_NOHIST);
	indirection_level++;
	r = last_command_exit_value;
	udbg_running = 0;
	/*
	 * bash printed the trap's commands where it had printed ours: a fork
	 * before the next trap run (an external command's) would take the
	 * trap's last command for an orphan construct (atfork_prepare).
	 */
	if (the_printed_command && the_printed_command_size > (int)sizeof(TRAP_PRINTED))
		strcpy(the_printed_command, TRAP_PRINTED);
	return r;
}

/* After bash's `trap` changed DEBUG: the script's string to udbg, ours back on DEBUG. */
static void udbg_take(void)
{
	char *s = trap_list[TSA_DEBUG_TRAP];

	if (s && s != (char *)1 && !strcmp(s, TRAP_STRING))
		return;
	trap_list[TSA_DEBUG_TRAP] = NULL;
	udbg_set(s);
	set_signal(TSA_DEBUG_TRAP, TRAP_STRING);
}

/*
 * `trap`, as the script would see it without us: listing (`trap`, `trap -p
 * ...`) leaves out our DEBUG trap and our RETURN mark, and shows a
 * subshell's RETURN trap as bash would. Setting is bash's own.
 */
static int tsa_trap_builtin(WORD_LIST *list)
{
	char *dbg, *ret;
	int listing = !list, r;

	if (list && list->word->word[0] == '-' && list->word->word[1] &&
	    strcmp(list->word->word, "--") && strchr(list->word->word, 'p'))
		listing = 1;
	if (!enabled || !listing) {
		ret = trap_list[TSA_RETURN_TRAP];
		dbg = trap_list[TSA_DEBUG_TRAP];
		r = trap_builtin(list);
		/* A subshell's own RETURN trap, set or reset, is what it lists from now on. */
		if (ret_hidden && trap_list[TSA_RETURN_TRAP] != ret) {
			free(ret_hidden);
			ret_hidden = NULL;
		}
		/* The script set or reset DEBUG: its trap is kept apart, ours stays (udbg). */
		if (enabled && trap_list[TSA_DEBUG_TRAP] != dbg)
			udbg_take();
		return r;
	}
	dbg = trap_list[TSA_DEBUG_TRAP];
	ret = trap_list[TSA_RETURN_TRAP];
	if (dbg && dbg != (char *)1 && !strcmp(dbg, TRAP_STRING))
		trap_list[TSA_DEBUG_TRAP] = udbg;
	if (ret_is_mark(ret))
		trap_list[TSA_RETURN_TRAP] = NULL;
	if (!trap_list[TSA_RETURN_TRAP] && ret_hidden)
		trap_list[TSA_RETURN_TRAP] = ret_hidden;
	r = trap_builtin(list);
	trap_list[TSA_DEBUG_TRAP] = dbg;
	trap_list[TSA_RETURN_TRAP] = ret;
	return r;
}

static int on_debug(void)
{
	uint64_t t = mono_ns(), cpu = cpu_ns();
	int in_trap, reaped, fresh;
	struct tsa_cmd *c;
	uint32_t text;
	uint8_t tail = trap_tail();

	debug_t = t;
	ensure_hello();
	/* A user trap's body: the hook saw it (and its command) as this run began. */
	fresh = trap_cmd_seq != trap_cmd_used;
	trap_cmd_used = trap_cmd_seq;
	user_sig = trap_cmd_sig;
	/* The first record of this trap run says it starts (tsa_wire.h). */
	run_flags = TSA_RUN | tail;
	span_debug(t, cpu);
	if (ft_owned) {
		if (!function_trace_mode || debugging_mode != ft_dbg)
			functrace_resync();
		if (ret_mark_running())
			return EXECUTION_SUCCESS;
		if (funcnest != ret_fn)
			ret_sync();
	}
	udbg_sync();
	if (sync_frames(t, cpu))
		return run_user_debug(); /* a function's entry: the call itself was the command */
	/*
	 * Inside a trap (and the functions it calls), bash keeps $BASH_COMMAND
	 * at the interrupted command: the command is the one seen as the trap
	 * run began (tsa_sigprocmask), when there is one.
	 */
	in_trap = 0;
	for (int i = nframes - 1; i >= 0 && !in_trap; i--)
		in_trap = frames[i].kind == TSA_FR_TRAP;
	if (in_trap && fresh) {
		in_trap = 0;
		text = text_id(trap_cmd);
	} else {
		text = text_id(in_trap ? "" : the_printed_command_except_trap);
	}
	reaped = js.c_totreaped;
	if (reaped != reaped_seen) {
		struct tsa_cmd_cc *cc = reserve(sizeof(*cc), TSA_R_CMD,
						TSA_CF_CHILD_CPU | (in_trap ? TSA_CF_IN_TRAP : 0),
						(uint32_t)line_number);

		reaped_seen = reaped;
		cc->child_cpu = child_cpu_ns();
		c = &cc->c;
	} else {
		c = reserve(sizeof(*c), TSA_R_CMD, in_trap ? TSA_CF_IN_TRAP : 0,
			    (uint32_t)line_number);
	}
	c->t = t;
	c->cpu = cpu;
	c->text = text;
	return run_user_debug();
}

static int pipeline_count(void)
{
	int n = 0;

	for (PROCESS *p = the_pipeline; p && n < 1000; p = p->next) {
		n++;
		if (p->next == the_pipeline)
			break;
	}
	return n;
}

/*
 * bash 5.2 parses a substitution again as it expands it, and printing the
 * parsed command leaves the innermost one it holds in the_printed_command:
 * the fork of `Z=$(echo "$(echo inner)")`'s substitution found "echo
 * inner" there, as if an orphan construct forked. A substitution of the
 * command its DEBUG trap announced (the_printed_command_except_trap) is
 * that command's.
 */
static int substitution_of_command(const char *text)
{
	const char *cmd = the_printed_command_except_trap, *p;
	size_t n = strlen(text);

	if (!cmd || !n)
		return 0;
	for (p = strstr(cmd, text); p; p = strstr(p + 1, text))
		if (p >= cmd + 2 && p[-1] == '(' && strchr("$<>", p[-2]) && p[n] == ')')
			return 1;
	return 0;
}

static void atfork_prepare(void)
{
	struct tsa_fork *f;
	uint64_t t;
	int orphan;
	uint32_t text = 0;

	if (!enabled)
		return;
	t = mono_ns();
	ensure_hello();
	ret_sync();
	/* Functions and traps that ended since the last command end before the fork. */
	user_sig = running_trap > 0 && running_trap != TSA_DEBUG_TRAP + 1 ? running_trap - 1 : -1;
	pop_ended(t, cpu_ns());
	/*
	 * When the DEBUG trap ran for the command that forks, bash has printed
	 * nothing since our own trap word. A compound command that forks without
	 * a DEBUG trap ( `( list )`, `{ list; } &`, coproc, a redirection's
	 * process substitution) was printed into the_printed_command first.
	 */
	orphan = the_printed_command && strcmp(the_printed_command, TRAP_PRINTED) != 0 &&
		 !substitution_of_command(the_printed_command);
	if (orphan)
		text = text_id(the_printed_command);
	if (js.c_totreaped != reaped_seen) {
		struct tsa_fork_cc *fc =
		    reserve(sizeof(*fc), TSA_R_FORK,
			    TSA_FF_CHILD_CPU | (orphan ? TSA_FF_ORPHAN : 0), (uint32_t)line_number);

		reaped_seen = js.c_totreaped;
		fc->child_cpu = child_cpu_ns();
		f = &fc->f;
	} else {
		f = reserve(sizeof(*f), TSA_R_FORK, orphan ? TSA_FF_ORPHAN : 0,
			    (uint32_t)line_number);
	}
	f->t = t;
	f->cpu = cpu_ns();
	f->index = fork_count;
	f->pipe = (uint32_t)pipeline_count();
	f->text = text;
	fork_index = fork_count++;
	fork_t = t;
	flush();
}

/* No timed part of a trap run pending: a new process's, or after calibration's runs. */
void span_reset(void)
{
	span_due = 0;
	span_guessed = 0;
	span_nstamps = 0;
	span_tail_calls = -1;
	span_prov = 0;
	span_stall = 0;
	span_prev_t = 0;
}

static void atfork_child(void)
{
	if (!enabled)
		return;
	parent_pid = my_pid;
	parent_gen = my_gen;
	my_pid = (uint32_t)getpid();
	my_gen = (uint32_t)(fork_t ^ (fork_t >> 32) ^ ((uint64_t)my_pid << 7));
	seq = 0;
	nrec = 0;
	blen = 0;
	fork_count = 0;
	need_hello = 1;
	is_root = 0;
	base_frames = nframes;
	/* The child's first span starts at the fork, after no trap run of its own. */
	tty_seen = tty_calls;
	last_jobs = 0;
	/* The parent's last tail is the parent's: it sends it. */
	span_reset();
	text_reset();
	ret_child();
	udbg_child();
}

/*
 * What the script did to the recording, said as it exits or execs: a DEBUG
 * trap of its own (or `trap - DEBUG`) replaces ours, and `set +T` stops
 * functions and subshells from inheriting it. Either way the commands that
 * follow go unrecorded, and the report must say so.
 */
static uint8_t lost_flags(void)
{
	const char *d = trap_list[TSA_DEBUG_TRAP];
	uint8_t f = 0;

	if (!d || d == (char *)1 || strcmp(d, TRAP_STRING))
		f |= TSA_EF_TRAP_LOST;
	if (!function_trace_mode)
		f |= TSA_EF_NO_FUNCTRACE;
	if (frames_full)
		f |= TSA_EF_DEEP;
	return f;
}

static void at_exit(void)
{
	struct tsa_end *e;
	uint64_t t;

	if (!enabled)
		return;
	t = mono_ns();
	ensure_hello();
	span_last();
	e = reserve(sizeof(*e), TSA_R_END, trap_tail() | lost_flags(),
		    (uint32_t)last_command_exit_value);
	e->t = t;
	e->cpu = cpu_ns();
	e->child_cpu = child_cpu_ns();
	flush();
	enabled = 0;
}

/*
 * bash calls libc through its own GOT slots, bound at start-up (BIND_NOW).
 * Two of them are pointed at wrappers here:
 *
 *   execve     sends what the process has buffered and says what it execs.
 *              Without it, a subshell whose last command bash execs in
 *              place (`( cd d && make )`) would lose its records. If the
 *              slot cannot be found, records are still flushed at every
 *              fork and exit; only that case loses them.
 *   tcsetpgrp  counts the calls: without job control, bash calls it only
 *              from the tail of the DEBUG trap (give_terminal_to() in
 *              run_debug_trap()), once the process has had children, and
 *              that costs the trap about half a microsecond more. The count
 *              tells which trap runs paid it (TSA_TAIL_TTY).
 */
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*tcsetpgrp_fn)(int, pid_t);
typedef int (*sigprocmask_fn)(int, const sigset_t *, sigset_t *);
static execve_fn real_execve;
static tcsetpgrp_fn real_tcsetpgrp;
static sigprocmask_fn real_sigprocmask;

static int tsa_execve(const char *path, char *const argv[], char *const envp[])
{
	if (enabled && real_execve) {
		struct tsa_exec *x;
		uint64_t t = mono_ns();
		uint32_t text;

		ensure_hello();
		text = text_id(path);
		span_last();
		x = reserve(sizeof(*x), TSA_R_EXEC, trap_tail() | lost_flags(), text);
		x->t = t;
		x->cpu = cpu_ns();
		flush();
	}
	return real_execve(path, argv, envp);
}

static int tsa_tcsetpgrp(int fd, pid_t pgrp)
{
	tty_calls++;
	return real_tcsetpgrp(fd, pgrp);
}

uint64_t sub_or_0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* A part of a trap run, timed: its median instead when it holds a wait. */
static uint64_t span_part(uint64_t d, int which, int *guessed)
{
	uint64_t med = span_med[which] + (which && span_tail_tty ? span_tty_med : 0);

	span_last_part[which] = d;
	if (med && d > SPAN_GUARD * med + SPAN_GUARD_NS) {
		*guessed = 1;
		span_stall += d - med;
		d = med;
	}
	span_sum += d;
	return d;
}

static void span_tail_done(uint64_t end)
{
	span_due += span_part(end - span_t0, 1, &span_guessed);
	span_tail_calls = -1;
	span_prov = 0;
	span_nstamps = 0;
}

/*
 * A sigprocmask() call from bash, before it is made: maybe the start of a
 * trap run, maybe the end of one. 1 when it ends the tail being timed: the
 * caller stamps that end after the call (span_call_made()), so that the
 * call is in the tail.
 */
static int span_call(const sigset_t *set)
{
	int tty = set && sigismember(set, SIGTTOU) == 1;

	if (span_counting) {
		span_calls++;
		span_tty_calls += tty;
		return 0;
	}
	if (!span_head || !enabled)
		return 0;
	if (span_tail_calls >= 0) {
		int n = ++span_tail_calls;

		if (n == span_tail + 1 && tty && span_tty) {
			span_tail_need += span_tty;
			span_tail_tty = 1;
			span_prov = 0;
		} else if (span_prov) {
			/* Not the terminal's part: the tail ended before this call. */
			span_tail_done(span_prov);
			goto head;
		}
		return n == span_tail_need;
	}
head:
	span_stamp[span_nstamps++ % SPAN_STAMPS] = mono_ns();
	return 0;
}

static void span_call_made(void)
{
	uint64_t now = mono_ns();

	/* The base part ends it, unless the terminal's part follows: the next call says. */
	if (span_tail_calls == span_tail && span_tty)
		span_prov = now;
	else
		span_tail_done(now);
}

/*
 * What the parts charged at their median since the last clock read held
 * beyond it on the CPU (see SPAN_GUARD): at least their excess less the
 * process's time off the CPU since then. cpu is read just after t, as at
 * the last clock read.
 */
static uint64_t span_on_cpu_stall(uint64_t t, uint64_t cpu)
{
	uint64_t off;

	if (!span_stall || !span_prev_t || t <= span_prev_t || cpu < span_prev_cpu)
		return 0;
	off = sub_or_0(t - span_prev_t, cpu - span_prev_cpu);
	return sub_or_0(span_stall, off);
}

/*
 * The builtin reads the clock (at t, and the CPU clock at cpu): the run's
 * head is timed from its first call, the tail from now. A tail that never
 * ended (a call missed) is charged at its median.
 */
static void span_debug(uint64_t t, uint64_t cpu)
{
	uint64_t head, stall;
	int guessed;

	if (span_counting) {
		span_calls_debug = span_calls;
		return;
	}
	if (!span_head)
		return;
	if (span_prov)
		span_tail_done(span_prov);
	guessed = span_guessed;
	if (span_tail_calls >= 0) {
		span_due += span_med[1];
		span_sum += span_med[1];
		guessed = 1;
	}
	if (span_nstamps >= (unsigned)span_head &&
	    t >= span_stamp[(span_nstamps - (unsigned)span_head) % SPAN_STAMPS]) {
		head = span_part(t - span_stamp[(span_nstamps - (unsigned)span_head) % SPAN_STAMPS],
				 0, &guessed);
	} else {
		head = span_med[0];
		span_sum += head;
		guessed = 1;
	}
	head += span_due;
	reserve(sizeof(struct tsa_rec), TSA_R_SPAN, guessed ? TSA_SF_GUESSED : 0,
		head > UINT32_MAX ? UINT32_MAX : (uint32_t)head);
	/* After the run's first record: charged, not taken for the run's speed. */
	stall = span_on_cpu_stall(t, cpu);
	if (stall) {
		reserve(sizeof(struct tsa_rec), TSA_R_SPAN, TSA_SF_STALL,
			stall > UINT32_MAX ? UINT32_MAX : (uint32_t)stall);
		span_sum += stall;
		span_stall_sum += stall;
	}
	span_stall = 0;
	span_prev_t = t;
	span_prev_cpu = cpu;
	span_due = 0;
	span_guessed = 0;
	span_nstamps = 0;
	span_t0 = t;
	span_tail_calls = 0;
	span_tail_tty = 0;
	span_prov = 0;
	/* The job table is walked at the end of this run if there is one now (trap_tail()). */
	span_tail_need = span_tail + (last_jobs ? span_jobs : 0);
}

/* The process ends or execs: the last run's tail, if timed, is sent before it says so. */
static void span_last(void)
{
	if (span_prov)
		span_tail_done(span_prov);
	if (span_due)
		reserve(sizeof(struct tsa_rec), TSA_R_SPAN, span_guessed ? TSA_SF_GUESSED : 0,
			span_due > UINT32_MAX ? UINT32_MAX : (uint32_t)span_due);
	span_due = 0;
	span_guessed = 0;
	span_stall = 0;
}

/*
 * In a trap body, bash prints each command into the_printed_command, but
 * not into the copy $BASH_COMMAND shows, and the DEBUG trap run prints its
 * own word over it before the builtin runs. The first thing a DEBUG trap
 * run does is block SIGCHLD (save_pipeline()), with the command still
 * printed: it is copied then, when a trap other than DEBUG is running (and
 * not in the tail of a DEBUG trap run, where our word is what is printed).
 * Which trap runs is noted at every call outside the DEBUG trap's own run.
 */
static int tsa_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int ends = span_call(set), ret;
	if (running_trap != TSA_DEBUG_TRAP + 1 && enabled) {
		trap_cmd_sig = running_trap > 0 ? running_trap - 1 : -1;
		if (running_trap > 0 && the_printed_command &&
		    strcmp(the_printed_command, TRAP_PRINTED) != 0) {
			size_t n = strnlen(the_printed_command, TSA_WIRE_TEXT_MAX);

			memcpy(trap_cmd, the_printed_command, n);
			trap_cmd[n] = '\0';
			trap_cmd_seq++;
		}
	}
	ret = real_sigprocmask(how, set, old);
	if (ends)
		span_call_made();
	return ret;
}

/*
 * set -v: bash echoes every line it reads, the DEBUG trap's string among
 * them, before each command (shell_getc(): fprintf(stderr, "%s\n", line)),
 * so a script under set -v printed our trap's words after each of its
 * lines, where a bare bash prints none. That one line is dropped: the trap
 * string itself, echoed under set -v, and nothing else. bash calls
 * __fprintf_chk where it is built with _FORTIFY_SOURCE (Debian's), plain
 * fprintf elsewhere; both slots go through here.
 */
typedef int (*fprintf_fn)(FILE *, const char *, ...);
typedef int (*fprintf_chk_fn)(FILE *, int, const char *, ...);
static fprintf_fn real_fprintf;
static fprintf_chk_fn real_fprintf_chk;
int __vfprintf_chk(FILE *, int, const char *, va_list);

static int trap_echo(FILE *f, const char *fmt, va_list ap)
{
	va_list cp;
	const char *line;
	int ours;

	if (!echo_input_at_read || f != stderr || strcmp(fmt, "%s\n"))
		return 0;
	va_copy(cp, ap);
	line = va_arg(cp, const char *);
	ours = line && !strcmp(line, TRAP_STRING);
	va_end(cp);
	return ours;
}

static int tsa_fprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = trap_echo(f, fmt, ap) ? (int)sizeof(TRAP_STRING) : vfprintf(f, fmt, ap);
	va_end(ap);
	return n;
}

static int tsa_fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = trap_echo(f, fmt, ap) ? (int)sizeof(TRAP_STRING) : __vfprintf_chk(f, flag, fmt, ap);
	va_end(ap);
	return n;
}

int real_sigprocmask_hooked(void)
{
	return real_sigprocmask != NULL;
}

static struct hook {
	const char *name;
	void **real;
	void *wrapper;
} hooks[] = {
    {"execve", (void **)&real_execve, (void *)tsa_execve},
    {"tcsetpgrp", (void **)&real_tcsetpgrp, (void *)tsa_tcsetpgrp},
    {"sigprocmask", (void **)&real_sigprocmask, (void *)tsa_sigprocmask},
    {"fprintf", (void **)&real_fprintf, (void *)tsa_fprintf},
    {"__fprintf_chk", (void **)&real_fprintf_chk, (void *)tsa_fprintf_chk},
};

static int patch_slot(void **slot, struct hook *h)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t page = (uintptr_t)slot & ~((uintptr_t)pg - 1);

	if (mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE))
		return -1;
	*h->real = *slot;
	*slot = h->wrapper;
	mprotect((void *)page, (size_t)pg, PROT_READ);
	return 0;
}

static int hook_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
	ElfW(Dyn) *dyn = NULL;
	ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	ElfW(Rela) * tabs[2] = {NULL, NULL};
	size_t sizes[2] = {0, 0};

	(void)data;
	/* The first object is the executable: bash itself. */
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 1;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			symtab = (ElfW(Sym) *)dyn->d_un.d_ptr;
			break;
		case DT_STRTAB:
			strtab = (const char *)dyn->d_un.d_ptr;
			break;
		case DT_JMPREL:
			tabs[0] = (ElfW(Rela) *)dyn->d_un.d_ptr;
			break;
		case DT_PLTRELSZ:
			sizes[0] = dyn->d_un.d_val;
			break;
		case DT_RELA:
			tabs[1] = (ElfW(Rela) *)dyn->d_un.d_ptr;
			break;
		case DT_RELASZ:
			sizes[1] = dyn->d_un.d_val;
			break;
		}
	}
	if (!symtab || !strtab)
		return 1;
	for (int t = 0; t < 2; t++) {
		for (size_t i = 0; tabs[t] && i < sizes[t] / sizeof(ElfW(Rela)); i++) {
			ElfW(Rela) *r = &tabs[t][i];
			unsigned type = ELF64_R_TYPE(r->r_info);
			const char *name;
#if defined(__x86_64__)
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
#elif defined(__aarch64__)
			if (type != R_AARCH64_JUMP_SLOT && type != R_AARCH64_GLOB_DAT)
				continue;
#else
			continue;
#endif
			name = strtab + symtab[ELF64_R_SYM(r->r_info)].st_name;
			for (size_t k = 0; k < sizeof(hooks) / sizeof(hooks[0]); k++)
				if (!*hooks[k].real && !strcmp(name, hooks[k].name))
					patch_slot((void **)(info->dlpi_addr + r->r_offset),
						   &hooks[k]);
		}
	}
	return 1;
}

static void hook_got(void)
{
	dl_iterate_phdr(hook_phdr, NULL);
}

/* Put the socket out of the script's way: above the descriptors scripts use. */
static int open_socket(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, hi;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	hi = fcntl(fd, F_DUPFD_CLOEXEC, 900);
	if (hi < 0)
		hi = fcntl(fd, F_DUPFD_CLOEXEC, 20);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	return fd;
}

static void export_var(const char *name, const char *value)
{
	SHELL_VAR *v = bind_variable(name, (char *)value, 0);

	if (v) {
		VSETATTR(v, att_exported);
		array_needs_making = 1;
	}
}

/* Run a string as bash code, as the trap would. */
void eval(const char *code)
{
	evalstring(savestring(code), "tsarun", SEVAL_NONINT | SEVAL_NOHIST);
}

/*
 * set -x or set -v from the user's BASH_ENV are the script's, as in a bare
 * bash: off while tsarun's start-up runs (calibration's loops traced were
 * 13,000 lines on stderr), and on again where tsarun-env.bash gives the
 * script its flags back, from __tsa_xv.
 */
static void user_env_flags(void)
{
	int xv = echo_command_at_execute, vv = echo_input_at_read || verbose_flag;
	SHELL_VAR *v;
	const char *old;
	char *nv;

	if (!xv && !vv)
		return;
	v = find_variable("__tsa_xv");
	old = v && value_cell(v) ? value_cell(v) : "";
	nv = malloc(strlen(old) + 3);
	if (nv) {
		sprintf(nv, "%s%s%s", old, xv ? "x" : "", vv ? "v" : "");
		bind_variable("__tsa_xv", nv, 0);
		free(nv);
	}
	echo_command_at_execute = 0;
	echo_input_at_read = 0;
	verbose_flag = 0;
}

/* bash expands BASH_ENV before reading it; so do we with the user's. */
static void source_user_env(void)
{
	const char *v = getenv(TSA_ENV_USER_ENV);
	char *fn;

	if (!v || !*v)
		return;
	fn = expand_string_unsplit_to_string((char *)v, Q_DOUBLE_QUOTES);
	if (fn && *fn)
		maybe_execute_file(fn, 1);
	free(fn);
	user_env_flags();
}

/*
 * set -x: bash prints every command it runs to xtrace_fp (stderr, or
 * BASH_XTRACEFD), and the DEBUG trap's own `__tsa - ...` too, which would
 * put a line of ours before each of the script's. xtrace_fp is wrapped in
 * an unbuffered stream that drops what bash prints while it runs the DEBUG
 * trap (ours; the script's own runs from it, and what that prints is the
 * script's: run_user_debug) and passes the rest on at once, in order. Re-wrapped when bash
 * replaces it (an assignment to BASH_XTRACEFD); when bash closes it, the
 * stream it wraps is closed.
 */
static FILE *xt_inner, *xt_wrap;

static ssize_t xt_write(void *cookie, const char *buf, size_t n)
{
	FILE *in = xt_inner;

	/* What the script's own DEBUG trap traces is the script's (run_user_debug). */
	if (running_trap == TSA_DEBUG_TRAP + 1 && !udbg_running)
		return (ssize_t)n;
	if (!in || fwrite(buf, 1, n, in) != n || fflush(in))
		return -1;
	return (ssize_t)n;
}

static int xt_close(void *cookie)
{
	FILE *in = xt_inner;

	xt_inner = xt_wrap = NULL;
	return in && in != stderr ? fclose(in) : 0;
}

static void xtrace_wrap(void)
{
	cookie_io_functions_t io = {.write = xt_write, .close = xt_close};
	FILE *cur = xtrace_fp ? xtrace_fp : stderr, *w;

	if (cur == xt_wrap)
		return;
	w = fopencookie(NULL, "w", io);
	if (!w)
		return;
	setvbuf(w, NULL, _IONBF, 0);
	xt_inner = cur;
	xt_wrap = w;
	xtrace_fp = w;
}

/* The large tables, zeroed, in one private mapping; 0, or -1 when it cannot be had. */
static int tables_map(void)
{
	size_t sz[5] = {TSA_WIRE_MAX_CHUNK, MAX_FRAMES * sizeof(*frames),
			TEXT_SLOTS * sizeof(*texts), MAX_FRAMES * sizeof(*rets),
			MAX_FRAMES * sizeof(*udbg_saves)};
	size_t off[5], total = 0;
	char *m;

	if (buf)
		return 0;
	for (int i = 0; i < 5; i++) {
		off[i] = total;
		total += (sz[i] + 63) & ~(size_t)63;
	}
	m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	buf = m + off[0];
	frames = (struct frame *)(m + off[1]);
	texts = (struct text_ent *)(m + off[2]);
	rets = (struct ret_save *)(m + off[3]);
	udbg_saves = (struct udbg_save *)(m + off[4]);
	return 0;
}

static int start(void)
{
	const char *path = getenv(TSA_ENV_SOCK);
	const char *root = get_string_value(TSA_ENV_ROOT);
	const char *cal_env = getenv(TSA_ENV_CAL);
	char pidbuf[32];
	static int registered;

	if (enabled)
		return 0;
	is_root = !root || !*root;
	if (!is_root && getenv(TSA_ENV_NOFOLLOW)) {
		source_user_env();
		return 1; /* nested bash, not followed */
	}
	if (!path || !*path) {
		source_user_env();
		return 1;
	}
	sock_fd = open_socket(path);
	if (sock_fd < 0) {
		source_user_env();
		return 1;
	}
	my_pid = (uint32_t)getpid();
	my_gen = (uint32_t)(mono_ns() ^ ((uint64_t)my_pid << 11));
	if (is_root) {
		snprintf(pidbuf, sizeof(pidbuf), "%u", my_pid);
		export_var(TSA_ENV_ROOT, pidbuf);
	}
	/* A nested bash takes its first one's figures (TSA_ENV_CAL: cal, cal_pre, the spans). */
	have_cal = cal_env && cal_parse(cal_env);
	if (!have_cal)
		memset(cal, 0, sizeof(cal));
	if (!registered) {
		registered = 1;
		hook_got();
	}
	/* Figures that assumed timed trap runs are no use to a bash that cannot time them. */
	if (span_head < 0 || span_tail < 0 || span_tty < 0 || span_jobs < 0 ||
	    (span_head && !real_sigprocmask_hooked())) {
		memset(cal, 0, sizeof(cal));
		have_cal = 0;
	}
	source_user_env();
	if (!have_cal) {
		char key[CAL_KEY_MAX], v[CAL_TEXT_MAX];
		int keyed = cal_key(key, sizeof(key));
		uint64_t c0 = cpu_ns();

		if (!keyed || getenv(TSA_ENV_RECAL) || !cal_cache_load(key)) {
			calibrate();
			if (keyed)
				cal_cache_store(key);
		}
		/* What finding the figures took: measuring them, or checking the cache's. */
		cal_spent_cpu = cpu_ns() - c0;
		cal_format(v, sizeof(v));
		export_var(TSA_ENV_CAL, v);
	}
	if (registered == 1) {
		registered = 2;
		pthread_atfork(atfork_prepare, NULL, atfork_child);
		atexit(at_exit);
	}
	tty_seen = tty_calls;
	reaped_seen = js.c_totreaped;
	ev_start = evalnest;
	xtrace_wrap();
	functrace_own();
	enabled = 1;
	hello(TSA_HELLO_START, mono_ns(), cpu_ns());
	return 0;
}

static int tsa_builtin(WORD_LIST *list)
{
	/* The DEBUG trap: `__tsa - "$_"` (TRAP_STRING); the rest of the words are ignored. */
	if (!list || !strcmp(list->word->word, "-")) {
		if (calibrating)
			calib_events++;
		if (enabled) {
			if (xtrace_fp != xt_wrap)
				xtrace_wrap();
			return on_debug();
		}
		return EXECUTION_SUCCESS;
	}
	if (!strcmp(list->word->word, "r")) {
		if (enabled)
			ret_returned();
		return EXECUTION_SUCCESS;
	}
	if (!strcmp(list->word->word, "start"))
		return start() ? EXECUTION_FAILURE : EXECUTION_SUCCESS;
	if (!strcmp(list->word->word, "flush")) {
		flush();
		return EXECUTION_SUCCESS;
	}
	if (!strcmp(list->word->word, "status")) {
		printf("enabled=%d pid=%u seq=%u frames=%d cal_wall=%u cal_cpu=%u "
		       "cal_tty=%u/%u cal_jobs=%u/%u cal_pre=%u/1000 spans=%d/%d/%d/%d "
		       "span_med=%u/%u/%u execve=%s tcsetpgrp=%s\n",
		       enabled, my_pid, seq + nrec, nframes, cal[0].wall_ns, cal[0].cpu_ns,
		       cal[1].wall_ns, cal[1].cpu_ns, cal[2].wall_ns, cal[2].cpu_ns, cal_pre,
		       span_head, span_tail, span_tty, span_jobs, span_med[0], span_med[1],
		       span_tty_med, real_execve ? "hooked" : "not hooked",
		       real_tcsetpgrp ? "hooked" : "not hooked");
		return EXECUTION_SUCCESS;
	}
	builtin_usage();
	return EX_USAGE;
}

/* Refuse to load into a bash whose internals we were not built against. */
int __tsa_builtin_load(char *name)
{
	if (!dist_version || strcmp(dist_version, DISTVERSION) != 0) {
		builtin_error("tsarun-trap.so: built for bash %s, this is bash %s", DISTVERSION,
			      dist_version ? dist_version : "?");
		return 0;
	}
	if (tables_map()) {
		builtin_error("tsarun-trap.so: cannot map its tables: %s", strerror(errno));
		return 0;
	}
	return 1;
}

void __tsa_builtin_unload(char *name)
{
	if (enabled)
		at_exit();
}

static char *tsa_doc[] = {
    "Record commands for tsarun --bash.",
    "",
    "`__tsa - ...` (the DEBUG trap), record the command about to run.",
    "`__tsa start` connects to tsarun; `__tsa status` describes the state.",
    NULL,
};

struct builtin __tsa_struct = {
    "__tsa", tsa_builtin, BUILTIN_ENABLED, tsa_doc, "__tsa [-|start|flush|status|r]", 0,
};

/* `trap`: bash's, with what we set left out of its listings (tsa_trap_builtin). */
static char *trap_doc[] = {
    "Trap signals and other events (bash's trap; tsarun --bash leaves its own out of listings).",
    NULL,
};

struct builtin trap_struct = {
    "trap",
    tsa_trap_builtin,
    BUILTIN_ENABLED | SPECIAL_BUILTIN,
    trap_doc,
    "trap [-lp] [[arg] signal_spec ...]",
    0,
};
