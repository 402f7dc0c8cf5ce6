// SPDX-License-Identifier: MIT
/*
 * The symbolizer on files the profiled command chose: the ELF files it
 * mapped (symbol tables, build IDs, .eh_frame) and the stack bytes copied
 * from it for leaf repair, which the CFI walk reads. Both are the command's
 * to shape.
 *
 * Input: a 32-bit length N, N bytes of ELF file (mapped at 0x400000 from
 * offset 0), then ip, sp, bp (64-bit), a count of frame-pointer frames and
 * that many addresses, and the rest is the copied stack region at sp
 * (tests/fuzz/symbolize-seeds.py writes real ones).
 */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "symbolize.h"

#define BASE 0x400000ull
#define PID  100

static uint64_t take64(const uint8_t **p, size_t *left)
{
	uint64_t v = 0;

	if (*left >= 8) {
		memcpy(&v, *p, 8);
		*p += 8;
		*left -= 8;
	}
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	size_t left = size, elf_len, nfp = 0;
	uint64_t ip, sp, bp, fp[16], out[64];
	uint32_t len32 = 0, added = 0;
	struct symbolizer *s;
	bool partial = false;
	char path[64], buf[256];
	int fd;

	if (left < 4)
		return 0;
	memcpy(&len32, p, 4);
	p += 4;
	left -= 4;
	elf_len = len32 < left ? len32 : left;
	fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0 || write(fd, p, elf_len) != (ssize_t)elf_len)
		abort();
	p += elf_len;
	left -= elf_len;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	s = symbolizer__new();
	if (!s)
		abort();
	symbolizer__mmap(s, PID, 10, BASE, 1 << 20, 0, path, NULL, 0);
	/* The same file again, as a second process maps it: the module is found, not re-read. */
	symbolizer__fork(s, PID + 1, PID, 11);
	symbolizer__mmap(s, PID + 1, 12, BASE, 1 << 20, 0, path, NULL, 0);
	ip = take64(&p, &left);
	sp = take64(&p, &left);
	bp = take64(&p, &left);
	if (left) {
		nfp = *p % 17;
		p++;
		left--;
	}
	for (size_t i = 0; i < nfp; i++)
		fp[i] = take64(&p, &left);
	for (size_t i = 0; i < nfp; i++)
		symbolizer__user_frame(s, PID, 20, fp[i], i > 0, buf, sizeof(buf));
	symbolizer__user_frame(s, PID, 20, ip, false, buf, sizeof(buf));
	symbolizer__repair(s, PID, 20, fp, nfp, ip, sp, bp, p, left, out, 64, &added, &partial);
	if (added > 64)
		abort();
	symbolizer__free(s);
	close(fd);
	return 0;
}
