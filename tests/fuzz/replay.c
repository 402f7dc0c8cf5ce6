// SPDX-License-Identifier: MIT
/*
 * Runs a fuzz target once on each file named, without libFuzzer: make check
 * replays every corpus (seeds and the inputs that once crashed) through the
 * ASan/UBSan build this way. `make fuzz` links the same target with
 * libFuzzer instead.
 */
#include "fuzz.h"

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf = NULL;
		size_t len = 0, cap = 0, n;

		if (!f) {
			perror(argv[i]);
			return 2;
		}
		do {
			if (len == cap) {
				cap = cap ? 2 * cap : 4096;
				buf = realloc(buf, cap);
				if (!buf)
					abort();
			}
			n = fread(buf + len, 1, cap - len, f);
			len += n;
		} while (n);
		fclose(f);
		/* Exactly len bytes, as libFuzzer gives them: a read past the end is caught. */
		{
			uint8_t *exact = malloc(len ? len : 1);

			if (!exact)
				abort();
			memcpy(exact, buf, len);
			LLVMFuzzerTestOneInput(exact, len);
			free(exact);
		}
		free(buf);
	}
	return 0;
}
