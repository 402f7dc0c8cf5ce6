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
 *   trap tails      bash's tcsetpgrp() slot and its job table (see calibrate)
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
 * referred to by id afterwards.
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
extern pid_t pipeline_pgrp, shell_pgrp, terminal_pgrp;
extern int shell_tty, running_trap, indirection_level;
extern int run_debug_trap(void);
extern FILE *xtrace_fp;
/* set -x; set -v (bash 5.2 keeps it in both of the last two) */
extern int echo_command_at_execute, echo_input_at_read, verbose_flag;
extern int function_trace_mode, debugging_mode;
extern void set_signal(int, char *);
extern void restore_default_signal(int);
extern int signal_is_trapped(int);
extern int trap_builtin(WORD_LIST *);

/* bash's object caches (ocache.h, not installed): see calibrate(). */
struct tsa_objcache {
	void **data;
	int cs; /* slots */
	int nc; /* objects cached */
};
extern struct tsa_objcache uwcache, wdcache, wlcache;
extern void cmd_init(void), uwp_init(void);

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

static int sock_fd = -1;
static int enabled;
static int calibrating;
static uint64_t calib_events;

/* The stream. */
static uint32_t my_pid, my_gen;
static uint32_t seq; /* records sent before the buffer */
static uint32_t nrec;
static size_t blen;
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
static struct tsa_cost cal[TSA_COST_NR];
static int have_cal; /* cal holds a measurement (this process's, or its first bash's) */
static uint64_t cal_spent_cpu;
static int cal_cached;	  /* cal came from the user's cache (cal_cache_load) */
static int cal_respeed;	  /* ... or was measured: the cache's was of another speed */
static uint32_t cal_bare; /* least CPU ns of the base's bare loop when cal was measured */
static uint32_t cal_pre;  /* permille of a trap run before the builtin's clock read */
static uint64_t debug_t;  /* when the last trap run read the clock */

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
static int span_head, span_tail; /* 0: not timed (no hook, or no steady count at start-up) */
static int span_tty, span_jobs;	 /* calls of the tail's terminal and job-table parts (0: untimed) */
static uint64_t span_stamp[SPAN_STAMPS];
static unsigned span_nstamps;	 /* calls stamped since the last tail ended */
static int span_tail_calls = -1; /* calls since the clock read while a tail is timed; -1: none */
static int span_tail_need;	 /* the call that ends it */
static int span_tail_tty;	 /* it has the terminal's part */
static uint64_t span_prov;	 /* an end, unless the terminal's part follows (0: none) */
static uint64_t span_t0;	 /* the clock read that began the tail being timed */
static uint64_t span_due;	 /* the last run's tail, timed, not sent yet */
static int span_guessed;	 /* a part of span_due was its median */
static uint64_t span_sum;	 /* every part charged since start (start-up reads it) */
static uint64_t
    span_stall; /* what parts charged at their median held beyond it, since the clock read */
static uint64_t span_stall_sum; /* of span_sum, what was charged of those as on the CPU */
static uint64_t span_prev_t, span_prev_cpu; /* the last clock read: wall and CPU time (0: none) */
static uint32_t span_med[2];		    /* start-up medians of the head and the base tail */
static uint32_t span_tty_med;		    /* what the terminal's part adds to a tail (start-up) */
static int span_counting;		    /* start-up: count the calls, do not time */
static unsigned long span_calls, span_tty_calls; /* calls seen while counting; with SIGTTOU */
static unsigned long span_calls_debug;		 /* span_calls at the clock read */
static uint64_t span_last_part[2];		 /* the last head and tail timed (start-up) */
static void span_debug(uint64_t t, uint64_t cpu);
static void span_last(void);

/* What the tail of this stream's last trap run cost (tsa_wire.h, TSA_TAIL_*). */
static unsigned long tty_calls, tty_seen;
static int last_jobs;
static uint8_t run_flags;		     /* for the first record of the trap run under way */
static char trap_cmd[TSA_WIRE_TEXT_MAX + 1]; /* the command a trap body runs */
static int trap_cmd_sig = -1;		     /* the user trap running (-1: none) */
static unsigned long trap_cmd_seq, trap_cmd_used;
static int real_sigprocmask_hooked(void);

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
static int nframes, base_frames, have_base;
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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
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

static void flush(void)
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

static void text_reset(void)
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
 * there once the process has children (see calibrate), and walks its job
 * table when it has one. The job table is read now, for the next record.
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
	span_due = 0;
	span_guessed = 0;
	span_nstamps = 0;
	span_tail_calls = -1;
	span_prov = 0;
	span_stall = 0;
	span_prev_t = 0;
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

static uint64_t sub_or_0(uint64_t a, uint64_t b)
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

static int real_sigprocmask_hooked(void)
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
static void eval(const char *code)
{
	evalstring(savestring(code), "tsarun", SEVAL_NONINT | SEVAL_NOHIST);
}

/*
 * The trap's own cost, measured in this process before the script runs, so
 * that the profile can remove it from every span (bashprof.c). What a trap
 * run costs depends on the shell's state, and start-up is not the state a
 * script runs in; three things are set up to match it:
 *
 * - bash creates its object caches (command words, unwind-protect frames)
 *   only after the start-up files: while BASH_ENV is read, every trap run
 *   mallocs and frees some twenty objects the script's trap runs take from
 *   the caches (measured: 0.2 us more per trap run). The caches are
 *   created for the measurement and destroyed after it, as they were.
 * - once a process has had children, bash gives the terminal back at the
 *   end of every trap run (give_terminal_to(): two sigprocmask() and a
 *   tcsetpgrp(), 0.5 us here) and walks its job table. Each is measured
 *   on its own, with pipeline_pgrp and an empty job table set for the
 *   measurement; each record says which of them the trap run before it
 *   paid (TSA_TAIL_*). The terminal is never touched: when tcsetpgrp()
 *   would change its foreground group, the call goes to a descriptor that
 *   is not a terminal, which takes the same path and fails.
 * - records are sent as in a run (as calibration chunks the reader drops).
 *
 * The base cost is a loop without and with the DEBUG trap, per trap run,
 * which includes what the trap does to the command after it; the loop is
 * bash's counting loop with an arithmetic assignment, the cheap commands
 * tight loops are made of, where the correction matters (the cost varies
 * by about 1.5% between kinds of command: see tests/bench/60-bash.sh).
 * The added tail costs are run_debug_trap() called in a loop in each
 * state. Each figure is a mean over rounds of the difference within a
 * round (cal_mean()): the script runs under the load of the moment, not
 * the best of it.
 */
#define CAL_ROUNDS	11 /* of the base, 200 iterations each; about 25 ms in all */
#define CAL_TAIL_ROUNDS 7  /* of the tail costs (smaller, and added only after a child) */
#define CAL_CALLS	100

struct cal_round {
	uint64_t w, c;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The value most of v[0..n) hold, if 9 in 10 do; else 0. */
static int steady(const int *v, int n)
{
	for (int i = 0; i < n; i++) {
		int same = 0;

		for (int j = 0; j < n; j++)
			same += v[j] == v[i];
		if (same * 10 >= n * 9)
			return v[i];
	}
	return 0;
}

/*
 * The timed parts of a trap run (see span_call()): how many sigprocmask()
 * calls come before the builtin's clock read and after it up to
 * restore_pipeline(), counted over run_debug_trap() calls in the base
 * state, then each part's median, for SPAN_GUARD. A count that is not the
 * same in 9 runs of 10 leaves trap runs untimed (all estimated, as before).
 */
static void cal_spans(void)
{
	int before[CAL_CALLS], after[CAL_CALLS];
	uint64_t part[2][CAL_CALLS];

	span_head = span_tail = span_tty = span_jobs = 0;
	span_med[0] = span_med[1] = 0;
	if (!real_sigprocmask_hooked())
		return;
	eval("trap '" TRAP_STRING "' DEBUG");
	calibrating = 1;
	enabled = 1;
	span_counting = 1;
	for (int i = 0; i < CAL_CALLS; i++) {
		unsigned long c0 = span_calls;

		span_calls_debug = c0;
		run_debug_trap();
		before[i] = (int)(span_calls_debug - c0);
		after[i] = (int)(span_calls - span_calls_debug);
	}
	span_counting = 0;
	span_head = steady(before, CAL_CALLS);
	span_tail = steady(after, CAL_CALLS);
	if (!span_head || !span_tail) {
		span_head = span_tail = 0;
	} else {
		for (int i = 0; i < CAL_CALLS; i++) {
			span_last_part[0] = span_last_part[1] = 0;
			run_debug_trap();
			part[0][i] = span_last_part[0];
			part[1][i] = span_last_part[1];
		}
		qsort(part[0], CAL_CALLS, sizeof(part[0][0]), cmp_u64);
		qsort(part[1], CAL_CALLS, sizeof(part[1][0]), cmp_u64);
		span_med[0] = (uint32_t)part[0][CAL_CALLS / 2];
		span_med[1] = (uint32_t)part[1][CAL_CALLS / 2];
		if (!span_med[0] || !span_med[1])
			span_head = span_tail = 0;
	}
	calibrating = 0;
	enabled = 0;
	eval("trap - DEBUG");
}

/* Whether the mean of v[0..k) (their sum) is above 0 by two standard errors. */
static int cal_significant(const int64_t *v, int k, int64_t sum)
{
	double mean, var = 0;

	if (sum <= 0 || k < 2)
		return sum > 0;
	mean = (double)sum / k;
	for (int i = 0; i < k; i++)
		var += ((double)v[i] - mean) * ((double)v[i] - mean);
	var /= k - 1;
	/* mean > 2 * sqrt(var / k), without libm */
	return mean * mean * k > 4 * var;
}

/*
 * The mean of (with[i] - without[i]) / n over the rounds, the highest and
 * the lowest quarter left out, in wall and CPU. What is measured is the
 * part of a trap run that is not timed (span_call()): a small difference
 * between two loops run a few milliseconds apart, and this machine's speed
 * changes within that (a round that straddles a change is off by the
 * change times the whole loop), so the quarters at either end go. A mean
 * of the middle, not a median: on a loaded machine the script is
 * preempted all along and pays for the caches it finds cold after each
 * preemption, in proportion to its time; most rounds carry some of that.
 *
 * A cost cannot be negative, so a mean below 0 is 0; when the true cost
 * is near 0 and the rounds are noisy, that alone makes the figure a
 * positive bias, not a measurement. The tails' system calls are timed
 * (span_call()), so what is left of them is a few instructions; on a PVM
 * guest a system call costs 1.2-1.6 us and its cost varies by a
 * microsecond from one loop to the next, and the terminal's and the job
 * table's figures came out anywhere from 0 to 3.3 us a trap run (0 in 6
 * start-ups of 15), charged at every trap run of every process that had
 * had a child: a subshell's loop came out with no CPU time at all. With
 * noise_is_0, a mean within two standard errors of 0 (the middle rounds'
 * spread) is 0.
 */
static struct tsa_cost cal_mean(const struct cal_round *with, const struct cal_round *without,
				int rounds, uint64_t n, int noise_is_0)
{
	int64_t w[CAL_ROUNDS], c[CAL_ROUNDS], sw = 0, sc = 0;
	struct tsa_cost r = {0, 0};
	int cut = rounds / 4;

	if (!n || rounds < 3)
		return r;
	if (!cut)
		cut = 1;
	/* Signed: with the timed parts taken out, what is left is small and noisy. */
	for (int i = 0; i < rounds; i++) {
		w[i] = (int64_t)with[i].w - (int64_t)without[i].w;
		c[i] = (int64_t)with[i].c - (int64_t)without[i].c;
	}
	qsort(w, (size_t)rounds, sizeof(w[0]), cmp_i64);
	qsort(c, (size_t)rounds, sizeof(c[0]), cmp_i64);
	for (int i = cut; i < rounds - cut; i++) {
		sw += w[i];
		sc += c[i];
	}
	if (noise_is_0) {
		sw = cal_significant(w + cut, rounds - 2 * cut, sw) ? sw : 0;
		sc = cal_significant(c + cut, rounds - 2 * cut, sc) ? sc : 0;
	}
	r.wall_ns = sw > 0 ? (uint32_t)((uint64_t)sw / ((uint64_t)(rounds - 2 * cut) * n)) : 0;
	r.cpu_ns = sc > 0 ? (uint32_t)((uint64_t)sc / ((uint64_t)(rounds - 2 * cut) * n)) : 0;
	return r;
}

/* Create bash's object caches if they are not there yet; 1 if we did. */
static int caches_create(void)
{
	if (uwcache.cs || wdcache.cs || wlcache.cs)
		return 0;
	cmd_init();
	uwp_init();
	return 1;
}

static void cache_destroy(struct tsa_objcache *c)
{
	while (c->nc > 0)
		free(c->data[--c->nc]);
	free(c->data);
	c->data = NULL;
	c->cs = 0;
}

/* Undo caches_create() when it made them (MADE). */
static void caches_destroy(int made)
{
	if (!made)
		return;
	cache_destroy(&uwcache);
	cache_destroy(&wdcache);
	cache_destroy(&wlcache);
}

/*
 * The base: a loop without and with the trap (which must run under the
 * script's set -u too). In wall time, its CPU cost at the stretch the
 * loops had (their wall over their CPU): a difference of wall times is
 * mostly the waits for a CPU that fell in one loop and not the other (on a
 * loaded machine, from -3.9 to +25 ms a round), and its mean came out at
 * 0 or below in one start-up in six there.
 */
static const char cal_loop[] = "for ((__tsa_i = 0; __tsa_i < 200; __tsa_i++)); do "
			       "__tsa_v=$((${__tsa_v:-0} + __tsa_i)); done";

static void cal_base(void)
{
	struct cal_round bare[CAL_ROUNDS], trap[CAL_ROUNDS];
	uint64_t bare_c[CAL_ROUNDS];
	uint64_t events = 0, all_w = 0, all_c = 0;

	for (int round = 0; round < CAL_ROUNDS; round++) {
		uint64_t w0, c0, s0;

		w0 = mono_ns();
		c0 = cpu_ns();
		eval(cal_loop);
		bare[round].w = mono_ns() - w0;
		bare[round].c = cpu_ns() - c0;
		bare_c[round] = bare[round].c;
		all_w += bare[round].w;
		all_c += bare[round].c;

		eval("trap '" TRAP_STRING "' DEBUG");
		/* The full recording path runs. */
		calibrating = 1;
		enabled = 1;
		calib_events = 0;
		s0 = span_sum;
		w0 = mono_ns();
		c0 = cpu_ns();
		eval(cal_loop);
		all_w += mono_ns() - w0;
		all_c += cpu_ns() - c0;
		/* What the runs timed is charged as timed: the estimate is the rest. */
		trap[round].w = mono_ns() - w0 - (span_sum - s0);
		trap[round].c = cpu_ns() - c0 - (span_sum - s0);
		eval("trap - DEBUG");
		calibrating = 0;
		enabled = 0;
		events = calib_events - 1; /* the trap run before `trap - DEBUG` */
	}
	eval("unset __tsa_i __tsa_v");
	qsort(bare_c, CAL_ROUNDS, sizeof(bare_c[0]), cmp_u64);
	cal_bare = (uint32_t)(bare_c[0] < UINT32_MAX ? bare_c[0] : UINT32_MAX);
	cal[TSA_COST_BASE] = cal_mean(trap, bare, CAL_ROUNDS, events, 0);
	if (all_c && all_w > all_c)
		cal[TSA_COST_BASE].wall_ns =
		    (uint32_t)((uint64_t)cal[TSA_COST_BASE].cpu_ns * all_w / all_c);
	else
		cal[TSA_COST_BASE].wall_ns = cal[TSA_COST_BASE].cpu_ns;
}

/* Where the builtin reads the clock within a trap run: the median over single runs. */
static void cal_split(void)
{
	uint64_t frac[CAL_CALLS];
	int n = 0;

	calibrating = 1;
	enabled = 1;
	for (int i = 0; i < CAL_CALLS; i++) {
		uint64_t w0 = mono_ns(), w1, s0 = span_sum, pre, all;

		debug_t = 0;
		span_last_part[0] = 0;
		run_debug_trap();
		w1 = mono_ns();
		if (debug_t <= w0 || w1 <= debug_t)
			continue;
		/* Of what is estimated: the timed parts are charged where they fell. */
		pre = debug_t - w0;
		all = w1 - w0;
		if (span_head) {
			if (pre <= span_last_part[0] ||
			    all <= pre + (span_sum - s0) - span_last_part[0])
				continue;
			pre -= span_last_part[0];
			all -= span_sum - s0;
		}
		frac[n++] = pre * 1000 / all;
	}
	calibrating = 0;
	enabled = 0;
	qsort(frac, (size_t)n, sizeof(frac[0]), cmp_u64);
	cal_pre = n ? (uint32_t)frac[n / 2] : 500;
}

/* Tail state k: 0 none, 1 the terminal given back, 2 that and a job table (when faked). */
static void tail_state(int k, pid_t pgrp, int fake_jobs)
{
	static JOB *empty_table[8];

	pipeline_pgrp = k ? pgrp : 0;
	if (fake_jobs) {
		jobs = k == 2 ? empty_table : NULL;
		js.j_jobslots = k == 2 ? 8 : 0;
	}
}

/* The tail states, by run_debug_trap() in a loop: none, terminal, terminal + jobs. */
static void cal_tails(void)
{
	JOB **jobs0 = jobs;
	int slots0 = js.j_jobslots, tty0 = shell_tty;
	pid_t tpgrp0 = terminal_pgrp;
	pid_t pgrp = shell_pgrp > 0 ? shell_pgrp : getpgrp();
	/* A job table bash made already stays: its walk is then in every state. */
	int fake_jobs = !jobs0 && !slots0;
	struct cal_round st[3][CAL_TAIL_ROUNDS];
	int tail[3] = {0, 0, 0};
	uint64_t timed[3][CAL_TAIL_ROUNDS], tty[CAL_TAIL_ROUNDS];

	if (shell_tty >= 0 && isatty(shell_tty) && tcgetpgrp(shell_tty) != pgrp)
		shell_tty = sock_fd;
	eval("trap '" TRAP_STRING "' DEBUG");
	/* The calls of each part of the tail (span_call()), counted in each state. */
	for (int k = 0; k < 3 && span_head; k++) {
		int after[CAL_CALLS / 4];
		unsigned long tty0 = span_tty_calls;

		tail_state(k, pgrp, fake_jobs);
		calibrating = 1;
		enabled = 1;
		span_counting = 1;
		for (int i = 0; i < CAL_CALLS / 4; i++) {
			span_calls_debug = span_calls;
			run_debug_trap();
			after[i] = (int)(span_calls - span_calls_debug);
		}
		span_counting = 0;
		calibrating = 0;
		enabled = 0;
		tail[k] = steady(after, CAL_CALLS / 4);
		/* The terminal's part is recognised by SIGTTOU: without it, it is estimated. */
		if (k == 1 && span_tty_calls == tty0)
			tail[k] = 0;
	}
	span_tty = tail[0] == span_tail && tail[1] > tail[0] ? tail[1] - tail[0] : 0;
	span_jobs = fake_jobs && span_tty && tail[2] > tail[1] ? tail[2] - tail[1] : 0;
	for (int round = 0; round < CAL_TAIL_ROUNDS; round++) {
		for (int k = 0; k < 3; k++) {
			uint64_t w0, c0, s0, x0;

			tail_state(k, pgrp, fake_jobs);
			calibrating = 1;
			enabled = 1;
			/*
			 * A round's records fill about one datagram (16 KiB): its
			 * send would fall in the same state's loop round after
			 * round, and count as that state's cost.
			 */
			flush();
			s0 = span_sum;
			x0 = span_stall_sum;
			w0 = mono_ns();
			c0 = cpu_ns();
			for (int i = 0; i < CAL_CALLS; i++)
				run_debug_trap();
			st[k][round].w = mono_ns() - w0 - (span_sum - s0);
			st[k][round].c = cpu_ns() - c0 - (span_sum - s0);
			/* The parts' own time: a stall is no part of a tail. */
			timed[k][round] = (span_sum - s0 - (span_stall_sum - x0)) / CAL_CALLS;
			calibrating = 0;
			enabled = 0;
		}
	}
	pipeline_pgrp = 0;
	jobs = jobs0;
	js.j_jobslots = slots0;
	shell_tty = tty0;
	terminal_pgrp = tpgrp0;
	cal_split();
	eval("trap - DEBUG");
	cal[TSA_COST_TTY] = cal_mean(st[1], st[0], CAL_TAIL_ROUNDS, CAL_CALLS, 1);
	/* The terminal's part of a timed tail: the median over rounds of the difference. */
	for (int round = 0; round < CAL_TAIL_ROUNDS; round++)
		tty[round] = sub_or_0(timed[1][round], timed[0][round]);
	qsort(tty, CAL_TAIL_ROUNDS, sizeof(tty[0]), cmp_u64);
	span_tty_med = span_tty ? (uint32_t)tty[CAL_TAIL_ROUNDS / 2] : 0;
	if (fake_jobs)
		cal[TSA_COST_JOBS] = cal_mean(st[2], st[1], CAL_TAIL_ROUNDS, CAL_CALLS, 1);
}

static void calibrate(void)
{
	uint64_t c0 = cpu_ns();
	pid_t pgrp0 = pipeline_pgrp;
	int made = caches_create();

	/* The base is the state of a process that has had no child yet. */
	pipeline_pgrp = 0;
	cal_spans();
	cal_base();
	cal_tails();
	pipeline_pgrp = pgrp0;
	span_due = 0;
	span_guessed = 0;
	span_nstamps = 0;
	span_prov = 0;
	span_tail_calls = -1;
	span_stall = 0;
	span_prev_t = 0;
	caches_destroy(made);
	text_reset();
	blen = 0;
	nrec = 0;
	nframes = 0;
	have_base = 0;
	tty_seen = tty_calls;
	last_jobs = 0;
	cal_spent_cpu = cpu_ns() - c0;
	have_cal = 1;
}

/* The start-up figures as one line of text: TSA_ENV_CAL's value, and the cache's. */
#define CAL_TEXT_MAX 160

static void cal_format(char *v, size_t n)
{
	snprintf(v, n, "%u %u %u %u %u %u %u %d %d %d %d %u %u %u", cal[0].wall_ns, cal[0].cpu_ns,
		 cal[1].wall_ns, cal[1].cpu_ns, cal[2].wall_ns, cal[2].cpu_ns, cal_pre, span_head,
		 span_tail, span_tty, span_jobs, span_med[0], span_med[1], span_tty_med);
}

static int cal_parse(const char *v)
{
	return sscanf(v, "%u %u %u %u %u %u %u %d %d %d %d %u %u %u", &cal[0].wall_ns,
		      &cal[0].cpu_ns, &cal[1].wall_ns, &cal[1].cpu_ns, &cal[2].wall_ns,
		      &cal[2].cpu_ns, &cal_pre, &span_head, &span_tail, &span_tty, &span_jobs,
		      &span_med[0], &span_med[1], &span_tty_med) == 2 * TSA_COST_NR + 8;
}

/*
 * The start-up figures kept between runs. Measuring them takes bash
 * 70-115 ms of CPU on the project VM, more than many scripts run, and they
 * depend on the machine and on the programs, not on the script; so the
 * first run measures them and later ones read them from the user's cache,
 * $XDG_CACHE_HOME/tsarun/bash-trap-cost (else ~/.cache/...). This process
 * runs as the script's user, so the file is the user's own, read and
 * written with the user's rights and nobody else's: a script that forges
 * it skews only its own user's profiles, as it could by forging records.
 *
 * The key is what the figures depend on: this builtin and the bash running
 * it (device, inode, size and change time of each), the kernel (release,
 * build, machine), the CPU's model and how many CPUs are online. The
 * figures are also what a trap run cost at the machine's speed when they
 * were measured, and a machine's speed moves with what else it runs (on a
 * 2-core VM with tests on its other CPU a trap run took a third more CPU
 * time to twice as much, with no more waits) and with its host's or its
 * power's state (the project VM's host makes it about 1.6 or 2 times
 * slower for seconds at a time, and back): an entry measured at one speed
 * would be removed from every profile of the day at another. So a key
 * holds up to CAL_CACHE_ENTRIES entries, each for the speed it was
 * measured at (cal_speed_now()), newest first, and a run uses the one at
 * its own speed. A file for another key, not the user's own regular file,
 * or not well formed is measured again and replaced; an entry older than
 * CAL_CACHE_MAX_AGE, out of bounds or without a speed is dropped; when no
 * entry is at this run's speed, it measures again and its entry replaces
 * any at that speed, else the oldest (and every entry under `tsarun
 * --bash-recalibrate`, TSA_ENV_RECAL). A profile says which it used
 * (TSA_HF_CAL_CACHED, TSA_HF_CAL_RESPEED; the artifact's
 * trap_cost.calibration).
 */
#define CAL_KEY_MAX	  512
#define CAL_CACHE_MAX_AGE (24 * 3600)
#define CAL_CACHE_NAME	  "bash-trap-cost"
#define CAL_CACHE_MAGIC	  "tsarun bash trap cost 3"
#define CAL_CACHE_ENTRIES 4
#define CAL_ENTRY_MAX	  (CAL_TEXT_MAX + 48) /* "at WHEN BARE " and the figures */
#define CAL_SPEED_ROUNDS  5
#define CAL_SPEED_SLACK	  10 /* percent either way: an entry of another speed is not used */

/* The entries of the cache's file that are still good (cal_cache_load), to be kept by cal_cache_store. */
static char cal_kept[CAL_CACHE_ENTRIES][CAL_ENTRY_MAX];
static uint32_t cal_kept_bare[CAL_CACHE_ENTRIES];
static int cal_nkept;

/*
 * The machine's speed now: the base's bare loop, its least CPU time in a
 * few rounds (about 3.5 ms of bash's CPU), to set against its least in
 * calibration (cal_bare; the least as the steadiest: over 24 start-ups in
 * a row on a quiet 2-core VM it stayed within 4% of calibration's where
 * the median moved by 20%; within 6% on a day the VM's host moved it
 * between speeds, at each speed).
 */
static uint32_t cal_speed_now(void)
{
	uint64_t c[CAL_SPEED_ROUNDS];
	int made = caches_create();

	for (int i = 0; i < CAL_SPEED_ROUNDS; i++) {
		uint64_t c0 = cpu_ns();

		eval(cal_loop);
		c[i] = cpu_ns() - c0;
	}
	eval("unset __tsa_i __tsa_v");
	caches_destroy(made);
	qsort(c, CAL_SPEED_ROUNDS, sizeof(c[0]), cmp_u64);
	return (uint32_t)(c[0] < UINT32_MAX ? c[0] : UINT32_MAX);
}

/* How far speed A is from B, in percent of B rounded up (a loop's CPU time: more is slower). */
static uint64_t cal_speed_off(uint32_t a, uint32_t b)
{
	return b ? ((a > b ? a - b : b - a) * (uint64_t)100 + b - 1) / b : UINT64_MAX;
}

static int stat_key(char *p, size_t n, const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) || !S_ISREG(st.st_mode))
		return -1;
	return snprintf(p, n, "%llx:%llu:%lld:%lld.%09ld", (unsigned long long)st.st_dev,
			(unsigned long long)st.st_ino, (long long)st.st_size,
			(long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

/* The first "model name" of /proc/cpuinfo (else its first line), printable. */
static void cpu_model(char *m, size_t n)
{
	char buf[4096];
	ssize_t len = 0;
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	char *p, *e;

	snprintf(m, n, "?");
	if (fd < 0)
		return;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return;
	buf[len] = 0;
	p = strstr(buf, "model name");
	if (!p)
		p = buf;
	e = strchr(p, '\n');
	if (e)
		*e = 0;
	if (p != buf && strchr(p, ':'))
		p = strchr(p, ':') + 1 + (strchr(p, ':')[1] == ' ');
	snprintf(m, n, "%.*s", (int)n - 1, p);
	for (p = m; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '_';
}

static int cal_key(char *key, size_t n)
{
	struct utsname u;
	char so[96], sh[96], model[128];

	if (stat_key(so, sizeof(so), getenv(TSA_ENV_SO)) < 0 ||
	    stat_key(sh, sizeof(sh), "/proc/self/exe") < 0 || uname(&u))
		return 0;
	cpu_model(model, sizeof(model));
	return snprintf(key, n, "so=%s bash=%s kernel=%s %s %s cpus=%ld cpu=%s", so, sh, u.release,
			u.version, u.machine, sysconf(_SC_NPROCESSORS_ONLN), model) < (int)n;
}

/*
 * The cache's directory ($XDG_CACHE_HOME/tsarun, an absolute path), made if
 * missing: a directory of this user's that nobody else can write (not a
 * link, say to another user's directory in a shared XDG_CACHE_HOME).
 */
static int cal_cache_dir(char *dir, size_t n, int make)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	struct stat st;
	int len, fd;

	if (x && *x == '/')
		len = snprintf(dir, n, "%s", x);
	else if (home && *home == '/')
		len = snprintf(dir, n, "%s/.cache", home);
	else
		return -1;
	if (len <= 0 || (size_t)len + sizeof("/tsarun/" CAL_CACHE_NAME ".XXXXXX") > n)
		return -1;
	if (make && mkdir(dir, 0700) && errno != EEXIST)
		return -1;
	strcat(dir, "/tsarun");
	if (make && mkdir(dir, 0700) && errno != EEXIST)
		return -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = fstat(fd, &st);
	close(fd);
	return len || st.st_uid != geteuid() || (st.st_mode & 022) ? -1 : 0;
}

static int cal_bounded(void)
{
	/* A trap run costs microseconds; anything near a millisecond is not a measurement. */
	for (int k = 0; k < TSA_COST_NR; k++)
		if (cal[k].cpu_ns > 1000000 || cal[k].wall_ns > 1000000)
			return 0;
	/* Timed parts need the sigprocmask() hook in this process too (start()). */
	if (span_head && !real_sigprocmask_hooked())
		return 0;
	return cal[0].cpu_ns > 0 && cal_pre <= 1000 && span_head >= 0 && span_tail >= 0 &&
	       span_tty >= 0 && span_jobs >= 0 && span_med[0] <= 1000000 &&
	       span_med[1] <= 1000000 && span_tty_med <= 1000000;
}

static void cal_clear(void)
{
	memset(cal, 0, sizeof(cal));
	cal_pre = 0;
	span_head = span_tail = span_tty = span_jobs = 0;
	span_med[0] = span_med[1] = span_tty_med = 0;
}

/*
 * One entry: "at WHEN BARE FIGURES". Its figures into cal[] and the spans
 * if it is good (fresh, with a speed, in bounds): BARE, else 0.
 */
static uint32_t cal_entry_parse(const char *e)
{
	long long when, now = (long long)time(NULL);
	unsigned int bare;
	int at = 0;

	if (sscanf(e, "at %lld %u %n", &when, &bare, &at) != 2 || !at || !bare || when > now + 60 ||
	    when < now - CAL_CACHE_MAX_AGE || !cal_parse(e + at) || !cal_bounded()) {
		cal_clear();
		return 0;
	}
	return bare;
}

/*
 * The entry for this key at this run's speed: 1 with its figures in
 * cal[]. The good entries of the file are kept in cal_kept for the store.
 */
static int cal_cache_load(const char *key)
{
	char dir[PATH_MAX], buf[CAL_KEY_MAX + CAL_CACHE_ENTRIES * CAL_ENTRY_MAX + 64], *line, *p;
	struct stat st;
	uint32_t now, bare;
	uint64_t best_off = UINT64_MAX;
	ssize_t len;
	int fd, n, best = -1;

	cal_nkept = 0;
	if (cal_cache_dir(dir, sizeof(dir), 0))
		return 0;
	strcat(dir, "/" CAL_CACHE_NAME);
	fd = open(dir, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_size >= (off_t)sizeof(buf)) {
		close(fd);
		return 0;
	}
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = 0;
	/* The magic, the key, then entries, each line ended by a newline. */
	for (p = buf, n = 0; (line = p) && (p = strchr(p, '\n')); n++) {
		*p++ = 0;
		if (n == 0 && strcmp(line, CAL_CACHE_MAGIC))
			return 0;
		if (n == 1 && (strncmp(line, "key ", 4) || strcmp(line + 4, key)))
			return 0;
		if (n < 2 || cal_nkept == CAL_CACHE_ENTRIES || strlen(line) >= CAL_ENTRY_MAX)
			continue;
		bare = cal_entry_parse(line);
		if (!bare)
			continue;
		strcpy(cal_kept[cal_nkept], line);
		cal_kept_bare[cal_nkept++] = bare;
	}
	cal_clear();
	if (!cal_nkept)
		return 0;
	now = cal_speed_now();
	for (int i = 0; i < cal_nkept; i++)
		if (cal_speed_off(now, cal_kept_bare[i]) < best_off) {
			best_off = cal_speed_off(now, cal_kept_bare[i]);
			best = i;
		}
	if (best_off > CAL_SPEED_SLACK) {
		cal_respeed = 1;
		return 0;
	}
	cal_bare = cal_entry_parse(cal_kept[best]);
	cal_cached = 1;
	have_cal = 1;
	return 1;
}

/*
 * This run's entry first, then the kept ones of other speeds, up to
 * CAL_CACHE_ENTRIES: written new and renamed over the old, so that a
 * reader sees one whole file or none.
 */
static void cal_cache_store(const char *key)
{
	char dir[PATH_MAX], tmp[PATH_MAX + sizeof("/" CAL_CACHE_NAME ".XXXXXX")], v[CAL_TEXT_MAX];
	FILE *f;
	int fd, ok, n = 1;

	if (!cal_bare || !cal_bounded() || cal_cache_dir(dir, sizeof(dir), 1))
		return;
	snprintf(tmp, sizeof(tmp), "%s/%s.XXXXXX", dir, CAL_CACHE_NAME);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return;
	}
	cal_format(v, sizeof(v));
	fprintf(f, "%s\nkey %s\nat %lld %u %s\n", CAL_CACHE_MAGIC, key, (long long)time(NULL),
		cal_bare, v);
	for (int i = 0; i < cal_nkept && n < CAL_CACHE_ENTRIES; i++)
		if (cal_speed_off(cal_kept_bare[i], cal_bare) > CAL_SPEED_SLACK) {
			fprintf(f, "%s\n", cal_kept[i]);
			n++;
		}
	ok = !ferror(f);
	ok &= fclose(f) == 0;
	strcat(dir, "/" CAL_CACHE_NAME);
	if (!ok || rename(tmp, dir))
		unlink(tmp);
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
