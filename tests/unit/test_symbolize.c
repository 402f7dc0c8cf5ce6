// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

#include "symbolize.h"

/* The name tsarun gives the kernel address ip. */
static void expect_kframe(struct symbolizer *s, uint64_t ip, const char *want)
{
	char buf[128];

	symbolizer__kernel_frame(s, ip, false, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void test_kallsyms(void **state)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81001000 t foo\n"
				   "ffffffff81001800 d some_data\n"
				   "ffffffff81002000 T bar\t[ext4]\n"
				   "garbage line\n";
	struct symbolizer *s = symbolizer__new();

	assert_int_equal(symbolizer__load_kallsyms(s, text, strlen(text)), 0);
	assert_string_equal(symbolizer__kernel_reason(s), "");
	expect_kframe(s, 0xffffffff81001010ull, "foo_[k]");
	/* Data symbols are not code: the address stays in foo. */
	expect_kframe(s, 0xffffffff81001900ull, "foo_[k]");
	expect_kframe(s, 0xffffffff81002004ull, "bar [ext4]_[k]");
	expect_kframe(s, 0xffffffff80000000ull, "[kernel]+0xffffffff80000000_[k]");
	symbolizer__free(s);
}

/*
 * A return address is looked up one byte before: after a call that never
 * returns, at the end of foo, it is bar's first byte, and the caller is foo.
 */
static void test_kernel_return_address(void **state)
{
	static const char text[] = "ffffffff81001000 t foo\n"
				   "ffffffff81002000 T bar\n";
	struct symbolizer *s = symbolizer__new();
	char buf[128];

	assert_int_equal(symbolizer__load_kallsyms(s, text, strlen(text)), 0);
	symbolizer__kernel_frame(s, 0xffffffff81002000ull, true, buf, sizeof(buf));
	assert_string_equal(buf, "foo_[k]");
	/* A sampled instruction pointer is where it is. */
	symbolizer__kernel_frame(s, 0xffffffff81002000ull, false, buf, sizeof(buf));
	assert_string_equal(buf, "bar_[k]");
	/* Unknown: the address as it was taken. */
	symbolizer__kernel_frame(s, 0xffffffff81000800ull, true, buf, sizeof(buf));
	assert_string_equal(buf, "[kernel]+0xffffffff81000800_[k]");
	symbolizer__free(s);
}

/* Modules and BPF programs listed after the kernel, out of address order. */
static void test_kallsyms_unsorted_tail(void **state)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81001000 t foo\n"
				   "ffffffff81002000 T bar\n"
				   "ffffffffc0200000 t mod_b\t[mb]\n"
				   "ffffffffc0100000 t mod_a\t[ma]\n"
				   "ffffffff81001800 t late\n"
				   "ffffffffc0150000 t bpf_prog_0123456789abcdef_f\t[bpf]\n"
				   "ffffffffc0300000 T last_without_newline";
	struct symbolizer *s = symbolizer__new();

	assert_int_equal(symbolizer__load_kallsyms(s, text, strlen(text)), 0);
	expect_kframe(s, 0xffffffff81001900ull, "late_[k]");
	expect_kframe(s, 0xffffffff810017ffull, "foo_[k]");
	expect_kframe(s, 0xffffffffc0100010ull, "mod_a [ma]_[k]");
	expect_kframe(s, 0xffffffffc0150010ull, "bpf_prog_0123456789abcdef_f [bpf]_[k]");
	expect_kframe(s, 0xffffffffc0200010ull, "mod_b [mb]_[k]");
	expect_kframe(s, 0xffffffffc0300001ull, "last_without_newline_[k]");
	expect_kframe(s, 0xffffffff81002004ull, "bar_[k]");
	symbolizer__free(s);
}

/* Lines that are not "address type name" are skipped, whatever they hold. */
static void test_kallsyms_malformed(void **state)
{
	static const char text[] = "\n"
				   "ffffffff81000000\n"
				   "ffffffff81000000 T\n"
				   "ffffffff81000000 T \n"
				   "ffffffff81000000T foo\n"
				   "zzzz T notanaddress\n"
				   "ffffffff81001000 t ok\t[unterminated\n"
				   "ffffffff81002000 t good\n";
	struct symbolizer *s = symbolizer__new();

	assert_int_equal(symbolizer__load_kallsyms(s, text, strlen(text)), 0);
	expect_kframe(s, 0xffffffff81001004ull, "ok_[k]");
	expect_kframe(s, 0xffffffff81002004ull, "good_[k]");
	expect_kframe(s, 0xffffffff81000004ull, "[kernel]+0xffffffff81000004_[k]");
	symbolizer__free(s);
}

static void test_kallsyms_hidden(void **state)
{
	static const char text[] = "0000000000000000 T _stext\n0000000000000000 t foo\n";
	struct symbolizer *s = symbolizer__new();

	assert_int_equal(symbolizer__load_kallsyms(s, text, strlen(text)), -EPERM);
	assert_non_null(strstr(symbolizer__kernel_reason(s), "kptr_restrict"));
	expect_kframe(s, 0xffffffff81001010ull, "[kernel]+0xffffffff81001010_[k]");
	symbolizer__free(s);
}

/* Map this test binary (and its libraries) into pid 1 from /proc/self/maps. */
static void map_self(struct symbolizer *s, uint32_t pid, uint64_t t)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], path[3072];

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %3071s", &lo, &hi, perms, &off,
			   path) == 5 &&
		    perms[2] == 'x')
			assert_int_equal(
			    symbolizer__mmap(s, pid, t, lo, hi - lo, off, path, NULL, 0), 0);
	}
	fclose(f);
}

__attribute__((noinline)) int symbolize_me(int x)
{
	return x * 3 + 1;
}

static void test_user_frames(void **state)
{
	struct symbolizer *s = symbolizer__new();
	uint64_t fn = (uint64_t)(uintptr_t)symbolize_me;
	char buf[256];

	map_self(s, 1, 0);
	assert_true(symbolizer__user_frame(s, 1, 100, fn + 4, false, buf, sizeof(buf)));
	assert_string_equal(buf, "symbolize_me");
	/* A return address just past a function's start is looked up one byte back. */
	assert_true(symbolizer__user_frame(s, 1, 100, fn + 1, true, buf, sizeof(buf)));
	assert_string_equal(buf, "symbolize_me");
	/* libc, through its dynamic symbols (or its debug file). */
	assert_true(symbolizer__user_frame(s, 1, 100, (uint64_t)(uintptr_t)strlen + 2, false, buf,
					   sizeof(buf)));
	assert_non_null(strstr(buf, "strlen"));
	/* Outside every mapping: the address, never nothing. */
	assert_false(symbolizer__user_frame(s, 1, 100, 0x10, false, buf, sizeof(buf)));
	assert_string_equal(buf, "[unknown]+0x10");
	symbolizer__free(s);
}

static void test_address_space_history(void **state)
{
	struct symbolizer *s = symbolizer__new();
	uint64_t fn = (uint64_t)(uintptr_t)symbolize_me;
	char buf[256];

	map_self(s, 1, 0);
	/* pid 2 forked from pid 1 at 50: it has pid 1's mappings as they were then. */
	symbolizer__fork(s, 2, 1, 50);
	assert_true(symbolizer__user_frame(s, 2, 60, fn, false, buf, sizeof(buf)));
	assert_string_equal(buf, "symbolize_me");
	/* pid 1 execs at 70: afterwards its old mappings are gone. */
	symbolizer__exec(s, 1, 70);
	assert_true(symbolizer__user_frame(s, 1, 65, fn, false, buf, sizeof(buf)));
	assert_false(symbolizer__user_frame(s, 1, 80, fn, false, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "[unknown]"));
	/* ... while the fork child keeps them. */
	assert_true(symbolizer__user_frame(s, 2, 90, fn, false, buf, sizeof(buf)));
	assert_int_equal(symbolizer__mappings(s) > 0, 1);
	symbolizer__free(s);
}

static void test_stale_build_id_not_used(void **state)
{
	struct symbolizer *s = symbolizer__new();
	static const uint8_t wrong[20] = {1, 2, 3};
	char buf[256];

	assert_int_equal(
	    symbolizer__mmap(s, 3, 0, 0x400000, 0x10000, 0, "/proc/self/exe", wrong, sizeof(wrong)),
	    0);
	/* The file's build ID differs from the mapping's: module+offset, not a wrong name. */
	assert_false(symbolizer__user_frame(s, 3, 1, 0x401234, false, buf, sizeof(buf)));
	assert_string_equal(buf, "exe+0x1234");
	/* Special mappings are named, not read. */
	assert_int_equal(symbolizer__mmap(s, 3, 0, 0x7000, 0x1000, 0, "[vdso]", NULL, 0), 0);
	assert_false(symbolizer__user_frame(s, 3, 1, 0x7010, false, buf, sizeof(buf)));
	assert_string_equal(buf, "[vdso]+0x10");
	symbolizer__free(s);
}

static void test_repair_keeps_walk_without_cfi(void **state)
{
	struct symbolizer *s = symbolizer__new();
	const uint64_t fp[3] = {0x1000, 0x2000, 0x3000};
	uint64_t out[8], region[4] = {0};
	uint32_t added = 99;
	bool partial = true;
	size_t n;

	/* No mapping for any address: the frame-pointer walk is kept as it was. */
	n = symbolizer__repair(s, 1, 0, fp, 3, 0x1000, 0x7000, 0x7010, (const uint8_t *)region,
			       sizeof(region), out, 8, &added, &partial);
	assert_int_equal(n, 3);
	assert_memory_equal(out, fp, sizeof(fp));
	assert_int_equal(added, 0);
	assert_false(partial);
	symbolizer__free(s);
}

/* C++ and Rust (legacy) names as people read them; anything else as it is. */
static void test_demangle(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"_ZNSt6thread4joinEv", "std::thread::join()"},
	    {"_ZN8workload8wait_forERSt6thread", "workload::wait_for(std::thread&)"},
	    {"_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"},
	    /* A C++ name that happens to end like a hash is a C++ name: only ::h + 16 hex goes. */
	    {"_ZN1a2h1Ev", "a::h1()"},
	    {"main", "main"},
	    {"_Zbroken", "_Zbroken"},
	    {"_RNvCs1234_7mycrate3foo", "_RNvCs1234_7mycrate3foo"}, /* Rust v0: left as it is */
	    {"__pthread_clockjoin_ex", "__pthread_clockjoin_ex"},
	};
	char buf[256], small[8];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		symbolize_demangle(cases[i].in, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].out);
	}
	/* A buffer too small cuts, as snprintf does. */
	symbolize_demangle("_ZNSt6thread4joinEv", small, sizeof(small));
	assert_string_equal(small, "std::th");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_demangle),
	    cmocka_unit_test(test_kallsyms),
	    cmocka_unit_test(test_kernel_return_address),
	    cmocka_unit_test(test_kallsyms_unsorted_tail),
	    cmocka_unit_test(test_kallsyms_malformed),
	    cmocka_unit_test(test_kallsyms_hidden),
	    cmocka_unit_test(test_user_frames),
	    cmocka_unit_test(test_address_space_history),
	    cmocka_unit_test(test_stale_build_id_not_used),
	    cmocka_unit_test(test_repair_keeps_walk_without_cfi),
	};

	return cmocka_run_group_tests_name("symbolize", tests, NULL, NULL);
}
