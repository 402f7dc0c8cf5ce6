/* SPDX-License-Identifier: MIT */
/* Facts about the machine: kernel, CPUs, virtualisation, BTF, PMU, CI. */
#ifndef TSARUN_HOST_H
#define TSARUN_HOST_H

struct host_info;

/* Fill every field; what cannot be read is left as "unknown" (or -1). */
void host_probe(struct host_info *h);

/* Read a small text file into buf (NUL-terminated, trailing newline removed). */
int host_read_file(const char *path, char *buf, unsigned long len);

#endif /* TSARUN_HOST_H */
