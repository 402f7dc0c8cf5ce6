/* SPDX-License-Identifier: MIT */
/*
 * The symbolizer: addresses to names, after the processes are gone. The
 * only module that includes libelf.
 *
 * Kernel frames come from /proc/kallsyms (loaded once; when kptr_restrict
 * hides the addresses, kernel frames stay addresses and the reason says so).
 *
 * User frames need the address space a frame was taken in, and processes
 * exit before the report is built. So the symbolizer keeps a history of
 * every tracked process's mappings, fed from the kernel's own mapping
 * records (perf MMAP2, FORK and COMM-exec records of an inherited tracking
 * event, delivered synchronously at mmap time, with the file's path and
 * build ID): an address captured in process P at time T is looked up in
 * P's mappings as they were at T, through its fork parents for inherited
 * mappings. The mapped files are read (symbol tables, the detached debug
 * file under /usr/lib/debug/.build-id when there is one, and .eh_frame) when
 * the report is built; a file whose build ID no longer matches the mapping
 * (rebuilt during the run) is not used. An address that resolves to no
 * symbol prints as module+0xoffset (the file offset), one outside every
 * known mapping as [unknown]+0xaddress: never dropped.
 *
 * Leaf repair: the kernel walks user stacks by frame pointers, which skips
 * the callers of code built without them (the C library's system call
 * wrappers: the function that called pthread_mutex_lock() is lost). With
 * the registers and the top of the stack taken with the walk, the frames
 * above the first frame pointer are unwound by the modules' CFI
 * (.eh_frame) until they meet the walk again, and spliced in.
 *
 * Times are CLOCK_MONOTONIC nanoseconds. Functions return 0 or -errno.
 */
#ifndef TSARUN_SYMBOLIZE_H
#define TSARUN_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbolizer;

struct symbolizer *symbolizer__new(void);
void symbolizer__free(struct symbolizer *s);

/* Kernel symbols from the text of /proc/kallsyms (pure; for tests). */
int symbolizer__load_kallsyms(struct symbolizer *s, const char *text, size_t len);
/*
 * Open /proc/kallsyms now, while the process may see its addresses; every
 * later load reads that descriptor.
 */
void symbolizer_open_kernel(void);

/* From /proc/kallsyms; on failure the reason is kept (symbolizer__kernel_reason). */
int symbolizer__load_kernel(struct symbolizer *s);
/* "" when kernel symbols are available, else why not. */
const char *symbolizer__kernel_reason(const struct symbolizer *s);

/* The address-space history. */
void symbolizer__fork(struct symbolizer *s, uint32_t pid, uint32_t ppid, uint64_t time_ns);
void symbolizer__exec(struct symbolizer *s, uint32_t pid, uint64_t time_ns);
int symbolizer__mmap(struct symbolizer *s, uint32_t pid, uint64_t time_ns, uint64_t start,
		     uint64_t len, uint64_t pgoff, const char *path, const uint8_t *build_id,
		     size_t build_id_len);

/*
 * "name_[k]", or "[kernel]+0xaddress" when not known. A return address
 * (is_return: any frame but a sampled one's innermost) is looked up one
 * byte before, in the function that made the call: after a call that
 * does not return, it is the next function's first byte.
 */
void symbolizer__kernel_frame(struct symbolizer *s, uint64_t ip, bool is_return, char *buf,
			      size_t len);

/*
 * A user frame of process pid at time_ns. is_return: ip is a return
 * address (every frame but the innermost), looked up at ip - 1. Returns
 * true when a symbol was found; buf holds it, or module+0xoffset, or
 * [unknown]+0xaddress.
 */
bool symbolizer__user_frame(struct symbolizer *s, uint32_t pid, uint64_t time_ns, uint64_t ip,
			    bool is_return, char *buf, size_t len);

/*
 * Leaf repair (see above). fp[0..nfp) is the frame-pointer walk, innermost
 * first (fp[0] is the interrupted ip); ip, sp, bp the user registers;
 * region the region_len bytes of stack from sp. Writes the repaired stack
 * (innermost first, at most max frames) to out and returns its length, and
 * how many frames were recovered in *added. When the CFI walk meets the
 * frame-pointer walk, the two are spliced. When it cannot, the walk is
 * kept as it was, except when the CFI walk went further than a walk that
 * went astray (code that uses the frame pointer register for data): then
 * the CFI frames are the stack, and *partial says the outermost are missing
 * (the copied stack ended before the thread's first frame).
 */
size_t symbolizer__repair(struct symbolizer *s, uint32_t pid, uint64_t time_ns, const uint64_t *fp,
			  size_t nfp, uint64_t ip, uint64_t sp, uint64_t bp, const uint8_t *region,
			  size_t region_len, uint64_t *out, size_t max, uint32_t *added,
			  bool *partial);

/* Mappings known, user frames looked up and not found in any mapping (for the quality report). */
size_t symbolizer__mappings(const struct symbolizer *s);

/*
 * A symbol as people read it: C++ and Rust (legacy mangling) names
 * demangled ("_ZNSt6thread4joinEv": "std::thread::join()"; Rust's hash
 * suffix dropped), anything else, and what does not demangle, as it is.
 */
void symbolize_demangle(const char *name, char *buf, size_t len);

#endif /* TSARUN_SYMBOLIZE_H */
