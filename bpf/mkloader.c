// SPDX-License-Identifier: MIT
/*
 * Build time, on the host: describe the scheduler probe's object for
 * launcher/probe_sched.c, and write as C the loader program of its usual set of
 * programs, so that tsarun need neither open the object nor write the
 * loader at each start (about 2.5 ms of its start-up on a PVM guest).
 *
 * libbpf writes the loader here as tsarun would at run time: a loader is
 * written for the newest kernel and leaves CO-RE and the attach points to
 * the kernel that runs it, so nothing in it depends on the machine that
 * builds it. Map sizes and .rodata are not taken from here: tsarun passes
 * its own in the loader's context. The loaders are written from the object
 * built with TSA_RDONLY_CAST (bpf/sched.bpf.c: read_rq()), which needs
 * Linux 6.2, and with TSA_USUAL, which makes constants of the options the
 * usual set does not vary: one for runs with --timeline, one for runs
 * without, from the object built with TSA_NO_TIMELINE too. Where they do
 * not load, tsarun opens the object built without any of these and has
 * libbpf write the loader, as before.
 *
 * Usage: mkloader sched.bpf.o sched_usual.bpf.o sched_usual_nt.bpf.o sched_compat.bpf.o
 *	  > sched.loader.h
 * The objects must have the same maps and programs, in the same order, and
 * the same .rodata: probe_sched.c names them by their place in any of them, and
 * opens the one for kernels before 5.17 (TSA_COMPAT) with sched.skel.h's
 * skeleton.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

/*
 * The usual set: neither --stacks nor the sched_wakeup variant; the iterator
 * loads. With --timeline, sched_waking too: the critical path's wakers.
 */
static const char *const not_usual[] = {"tsa_wakeup", "tsa_sys_exit", "tsa_waking"};
static const char *const usual_tl[] = {"tsa_waking"};

static bool in(const char *name, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, set[i]))
			return true;
	return false;
}

static void bytes(const char *name, const void *buf, size_t len)
{
	const unsigned char *b = buf;

	printf("static const unsigned char %s[] __attribute__((aligned(8))) = {", name);
	for (size_t i = 0; i < len; i++)
		printf("%s%u,", i % 24 ? "" : "\n\t", b[i]);
	printf("\n};\n");
}

/* A map's name as a C identifier: "sched_bp.rodata" is rodata. */
static const char *ident(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot ? dot + 1 : name;
}

static struct bpf_object *open_obj(const char *path)
{
	/* Named as the skeleton names it, for the same internal maps' names. */
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "sched_bpf");
	struct bpf_object *obj = bpf_object__open_file(path, &opts);

	if (!obj)
		fprintf(stderr, "mkloader: cannot open %s\n", path);
	return obj;
}

/* Do the two objects have the same maps and programs, in the same order, and the same .rodata? */
static int same_layout(struct bpf_object *a, struct bpf_object *b)
{
	struct bpf_program *pa, *pb;
	struct bpf_map *ma, *mb;

	for (ma = bpf_object__next_map(a, NULL), mb = bpf_object__next_map(b, NULL); ma && mb;
	     ma = bpf_object__next_map(a, ma), mb = bpf_object__next_map(b, mb)) {
		size_t la, lb;
		const void *va = bpf_map__initial_value(ma, &la),
			   *vb = bpf_map__initial_value(mb, &lb);

		if (strcmp(bpf_map__name(ma), bpf_map__name(mb)) ||
		    bpf_map__type(ma) != bpf_map__type(mb) ||
		    bpf_map__value_size(ma) != bpf_map__value_size(mb) ||
		    bpf_map__max_entries(ma) != bpf_map__max_entries(mb) || !va != !vb ||
		    (va && (la != lb || memcmp(va, vb, la)))) {
			fprintf(stderr, "mkloader: the objects differ at map %s\n",
				bpf_map__name(ma));
			return -1;
		}
	}
	for (pa = bpf_object__next_program(a, NULL), pb = bpf_object__next_program(b, NULL);
	     pa && pb; pa = bpf_object__next_program(a, pa), pb = bpf_object__next_program(b, pb))
		if (strcmp(bpf_program__name(pa), bpf_program__name(pb))) {
			fprintf(stderr, "mkloader: the objects differ at program %s\n",
				bpf_program__name(pa));
			return -1;
		}
	return ma || mb || pa || pb ? -1 : 0;
}

/*
 * Does b have a's maps (by name, with the same type, sizes and .rodata) and
 * programs, in any order (the object for older kernels: probe_sched.c finds what
 * it opens by name)?
 */
static int same_set(struct bpf_object *a, struct bpf_object *b)
{
	struct bpf_program *pa;
	struct bpf_map *ma, *mb;
	int na = 0, nb = 0;

	bpf_object__for_each_map(ma, a)
	{
		size_t la, lb;
		const void *va = bpf_map__initial_value(ma, &la), *vb;

		na++;
		mb = bpf_object__find_map_by_name(b, bpf_map__name(ma));
		vb = mb ? bpf_map__initial_value(mb, &lb) : NULL;
		if (!mb || bpf_map__type(ma) != bpf_map__type(mb) ||
		    bpf_map__value_size(ma) != bpf_map__value_size(mb) ||
		    bpf_map__max_entries(ma) != bpf_map__max_entries(mb) || !va != !vb ||
		    (va && (la != lb || memcmp(va, vb, la)))) {
			fprintf(stderr, "mkloader: the objects differ at map %s\n",
				bpf_map__name(ma));
			return -1;
		}
	}
	bpf_object__for_each_map(mb, b) nb++;
	bpf_object__for_each_program(pa, a)
	{
		if (!bpf_object__find_program_by_name(b, bpf_program__name(pa))) {
			fprintf(stderr, "mkloader: no program %s in the second object\n",
				bpf_program__name(pa));
			return -1;
		}
	}
	return na == nb ? 0 : -1;
}

/* The loader of obj's usual set of programs, as arrays named <name>_insns and <name>_data. */
static int write_loader(struct bpf_object *obj, const char *name, const char *what, bool tl)
{
	LIBBPF_OPTS(gen_loader_opts, gen);
	struct bpf_program *prog;
	char ident[64];

	for (size_t i = 0; i < sizeof(not_usual) / sizeof(not_usual[0]); i++) {
		prog = bpf_object__find_program_by_name(obj, not_usual[i]);
		if (!prog) {
			fprintf(stderr, "mkloader: no program %s\n", not_usual[i]);
			return -1;
		}
		bpf_program__set_autoload(
		    prog, tl && in(not_usual[i], usual_tl, sizeof(usual_tl) / sizeof(usual_tl[0])));
	}
	if (bpf_object__gen_loader(obj, &gen) || bpf_object__load(obj)) {
		fprintf(stderr, "mkloader: libbpf could not write the loader %s\n", name);
		return -1;
	}
	printf("\n/* The loader of the usual set %s. */\n", what);
	snprintf(ident, sizeof(ident), "%s_insns", name);
	bytes(ident, gen.insns, gen.insns_sz);
	snprintf(ident, sizeof(ident), "%s_data", name);
	bytes(ident, gen.data, gen.data_sz);
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_object *plain, *usual, *usual_nt, *compat;
	struct bpf_program *prog, *pb;
	struct bpf_map *m;
	const void *ro = NULL;
	size_t ro_len = 0;
	int ret;

	if (argc != 5) {
		fprintf(stderr,
			"usage: mkloader sched.bpf.o sched_usual.bpf.o sched_usual_nt.bpf.o "
			"sched_compat.bpf.o\n");
		return 2;
	}
	plain = open_obj(argv[1]);
	usual = open_obj(argv[2]);
	usual_nt = open_obj(argv[3]);
	compat = open_obj(argv[4]);
	if (!plain || !usual || !usual_nt || !compat || same_layout(plain, usual) ||
	    same_layout(plain, usual_nt) || same_set(plain, compat))
		return 1;

	printf("/* Generated by bpf/mkloader.c from %s, %s and %s: do not edit. */\n", argv[1],
	       argv[2], argv[3]);
	printf("\n/* The object's maps (sched.skel.h), in its order. */\nenum sched_map {\n");
	bpf_object__for_each_map(m, plain)
	{
		printf("\tSCHED_MAP_%s,\n", ident(bpf_map__name(m)));
	}
	printf("\tSCHED_NMAPS\n};\n");
	printf("static const struct {\n\tconst char *name;\n\t__u32 max_entries;\n"
	       "} sched_maps[SCHED_NMAPS] = {\n");
	bpf_object__for_each_map(m, plain)
	{
		printf("\t{\"%s\", %u},\n", bpf_map__name(m), bpf_map__max_entries(m));
		if (!strcmp(ident(bpf_map__name(m)), "rodata"))
			ro = bpf_map__initial_value(m, &ro_len);
	}
	printf("};\n");
	printf("\n/* Its programs, in its order; which of them the loaders below load. */\n"
	       "enum sched_prog {\n");
	bpf_object__for_each_program(prog, plain)
	{
		printf("\tSCHED_PROG_%s,\n", bpf_program__name(prog));
	}
	printf("\tSCHED_NPROGS\n};\n");
	if (!ro) {
		fprintf(stderr, "mkloader: no .rodata\n");
		return 1;
	}
	ret = write_loader(usual, "sched_loader_tl", "with --timeline (TSA_USUAL)", true) ||
	      write_loader(usual_nt, "sched_loader",
			   "without --timeline (TSA_USUAL, TSA_NO_TIMELINE)", false);
	if (ret)
		return 1;
	printf("static const struct {\n\tconst char *name;\n\tbool loads;\n\tbool loads_tl;\n"
	       "} sched_progs[SCHED_NPROGS] = {\n");
	for (prog = bpf_object__next_program(usual_nt, NULL),
	    pb = bpf_object__next_program(usual, NULL);
	     prog && pb; prog = bpf_object__next_program(usual_nt, prog),
	    pb = bpf_object__next_program(usual, pb)) {
		printf("\t{\"%s\", %s, %s},\n", bpf_program__name(prog),
		       bpf_program__autoload(prog) ? "true" : "false",
		       bpf_program__autoload(pb) ? "true" : "false");
	}
	printf("};\n");
	printf("\n/* .rodata as the object initialises it. */\n");
	bytes("sched_rodata", ro, ro_len);
	bpf_object__close(compat);
	bpf_object__close(usual_nt);
	bpf_object__close(usual);
	bpf_object__close(plain);
	return ferror(stdout) ? 1 : 0;
}
