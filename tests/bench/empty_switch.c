// SPDX-License-Identifier: MIT
/*
 * empty_switch OBJECT: attach the empty sched_switch program of OBJECT
 * (empty_switch.bpf.o), say "attached" on stdout, and keep it attached
 * until stdin ends or a signal comes. 10-sched-pipe.sh runs the pipe
 * benchmark beside it to measure the floor any such tracer pays.
 */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_link *link;
	char c;

	if (argc != 2) {
		fprintf(stderr, "usage: empty_switch OBJECT\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "empty_switch: cannot load %s\n", argv[1]);
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "empty_switch");
	link = prog ? bpf_program__attach(prog) : NULL;
	if (!link) {
		fprintf(stderr, "empty_switch: cannot attach to sched_switch\n");
		bpf_object__close(obj);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return 0;
}
