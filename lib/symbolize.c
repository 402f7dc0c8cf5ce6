// SPDX-License-Identifier: MIT
/* The symbolizer: kallsyms, ELF symbol tables, address-space history, CFI leaf repair. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fscreds.h"
#include "vec.h"

#include "symbolize.h"

/* Kernel symbols. */
struct ksym {
	uint64_t addr;
	uint32_t name; /* offset into symbolizer.knames: "name" or "name [module]" */
};

/* One function symbol of a module, by ELF virtual address. */
struct esym {
	uint64_t addr;
	uint64_t size;
	uint32_t name; /* offset into module.names */
	uint32_t rank; /* among aliases at one address, the lowest is shown */
};

struct seg {
	uint64_t offset, vaddr, filesz;
};

/* An FDE: the code range [begin, end) it describes and where its instructions are. */
struct fde {
	uint64_t begin, end; /* ELF virtual addresses */
	uint32_t off;	     /* offset of the FDE in eh_frame */
};

struct module {
	char *path;
	uint8_t build_id[20];
	size_t build_id_len;
	bool loaded;
	bool usable;
	struct seg segs[16];
	int nsegs;
	struct esym *syms;
	size_t nsyms;
	char *names;
	size_t names_len, names_cap;
	/* CFI */
	uint8_t *eh;
	size_t eh_len;
	uint64_t eh_vaddr;
	struct fde *fdes;
	size_t nfdes;
};

struct mapping {
	uint64_t time, start, len, pgoff;
	uint32_t module;
};

/* One address space: a process from its fork or exec until its next exec. */
struct space {
	uint32_t pid;
	uint64_t start_time;
	bool forked;	     /* inherits parent's mappings as they were at start_time */
	uint32_t parent_pid; /* when forked */
	struct mapping *maps;
	size_t nmaps, cap;
};

struct symbolizer {
	struct ksym *ksyms;
	size_t nksyms;
	char *knames;
	size_t knames_len;
	char kreason[192];
	bool kloaded;

	struct module *mods;
	size_t nmods, mods_cap;

	struct space *spaces;
	size_t nspaces, spaces_cap;
	size_t nmappings;
};

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (s)
		elf_version(EV_CURRENT);
	return s;
}

static void module_free(struct module *m)
{
	free(m->path);
	free(m->syms);
	free(m->names);
	free(m->eh);
	free(m->fdes);
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	free(s->ksyms);
	free(s->knames);
	for (size_t i = 0; i < s->nmods; i++)
		module_free(&s->mods[i]);
	free(s->mods);
	for (size_t i = 0; i < s->nspaces; i++)
		free(s->spaces[i].maps);
	free(s->spaces);
	free(s);
}

/* Kernel. */

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The kernel lists its own symbols in address order; modules and BPF
 * programs may follow out of it. Sort the tail after the sorted run and
 * merge the two, rather than sort 100,000 symbols that are nearly in order.
 */
static int sort_ksyms(struct symbolizer *s)
{
	size_t n = s->nksyms, run = 1, a, b, o = 0;
	struct ksym *merged;

	while (run < n && s->ksyms[run].addr >= s->ksyms[run - 1].addr)
		run++;
	if (run >= n)
		return 0;
	qsort(s->ksyms + run, n - run, sizeof(*s->ksyms), cmp_ksym);
	merged = malloc(n * sizeof(*merged));
	if (!merged)
		return -ENOMEM;
	for (a = 0, b = run; a < run || b < n;)
		merged[o++] = b >= n || (a < run && s->ksyms[a].addr <= s->ksyms[b].addr)
				  ? s->ksyms[a++]
				  : s->ksyms[b++];
	free(s->ksyms);
	s->ksyms = merged;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * One line of /proc/kallsyms: "address type name", then "\t[module]" for
 * a module's symbol. Parsed by hand: the kernel has over 100,000 symbols,
 * and sscanf() and a string per symbol made loading them cost more than
 * the kernel takes to print them.
 */
int symbolizer__load_kallsyms(struct symbolizer *s, const char *text, size_t len)
{
	size_t cap = 0, names_cap = 0, nonzero = 0;
	const char *end = text + len;

	free(s->ksyms);
	free(s->knames);
	s->ksyms = NULL;
	s->knames = NULL;
	s->nksyms = s->knames_len = 0;

	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line)), *eol = nl ? nl : end;
		const char *p = line, *name, *mod = NULL;
		size_t name_len, mod_len = 0, need;
		unsigned long long addr = 0;
		struct ksym *k;
		char type;
		int digits = 0, v;

		line = nl ? nl + 1 : end;
		for (; p < eol && (v = hexval(*p)) >= 0 && digits < 16; p++, digits++)
			addr = addr << 4 | (unsigned)v;
		if (!digits || eol - p < 3 || p[0] != ' ' || p[2] != ' ')
			continue;
		type = p[1];
		/* Text symbols only: code addresses are what stacks hold. */
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = p + 3;
		for (p = name; p < eol && *p != '\t' && *p != ' '; p++)
			;
		name_len = (size_t)(p - name);
		if (!name_len)
			continue;
		if (eol - p > 2 && *p == '\t' && p[1] == '[') {
			const char *close = memchr(p + 2, ']', (size_t)(eol - p - 2));

			if (close) {
				mod = p + 2;
				mod_len = (size_t)(close - mod);
			}
		}
		if (addr)
			nonzero++;
		k = vec_grow(s->ksyms, &cap, s->nksyms + 1, sizeof(*k), 65536);
		if (!k)
			return -ENOMEM;
		s->ksyms = k;
		need = name_len + (mod ? mod_len + 3 : 0) + 1; /* "name [mod]" */
		if (s->knames_len + need > names_cap) {
			size_t ncap = names_cap ? names_cap * 2 : 1 << 21;
			char *n;

			while (ncap < s->knames_len + need)
				ncap *= 2;
			if (ncap > UINT32_MAX || !(n = realloc(s->knames, ncap)))
				return -ENOMEM;
			s->knames = n;
			names_cap = ncap;
		}
		s->ksyms[s->nksyms].addr = addr;
		s->ksyms[s->nksyms].name = (uint32_t)s->knames_len;
		memcpy(s->knames + s->knames_len, name, name_len);
		s->knames_len += name_len;
		if (mod) {
			memcpy(s->knames + s->knames_len, " [", 2);
			memcpy(s->knames + s->knames_len + 2, mod, mod_len);
			s->knames[s->knames_len + 2 + mod_len] = ']';
			s->knames_len += mod_len + 3;
		}
		s->knames[s->knames_len++] = '\0';
		s->nksyms++;
	}
	s->kloaded = true;
	if (!nonzero) {
		snprintf(s->kreason, sizeof(s->kreason),
			 "kernel symbol addresses are hidden (kernel.kptr_restrict; run as root "
			 "with kptr_restrict <= 1)");
		s->nksyms = 0;
		return -EPERM;
	}
	s->kreason[0] = '\0';
	return sort_ksyms(s);
}

/*
 * /proc/kallsyms, opened while tsarun is root: the file shows addresses to
 * the credentials it was opened with, and tsarun reads it after it gave up
 * root (launcher/privdrop.h). Each read starts again from its beginning.
 */
static int kallsyms_fd = -1;

void symbolizer_open_kernel(void)
{
	if (kallsyms_fd < 0)
		kallsyms_fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
}

int symbolizer__load_kernel(struct symbolizer *s)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f = NULL;
	int err;

	if (kallsyms_fd >= 0 && lseek(kallsyms_fd, 0, SEEK_SET) == 0) {
		int fd = fcntl(kallsyms_fd, F_DUPFD_CLOEXEC, 3);

		f = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (!f && fd >= 0)
			close(fd);
	}
	if (!f)
		f = fopen("/proc/kallsyms", "re");

	if (!f) {
		err = -errno;
		snprintf(s->kreason, sizeof(s->kreason), "cannot read /proc/kallsyms: %s",
			 strerror(-err));
		s->kloaded = true;
		return err;
	}
	for (;;) {
		char *t = vec_grow(text, &cap, len + 65536, 1, 1 << 22);
		size_t n;

		if (!t) {
			free(text);
			fclose(f);
			return -ENOMEM;
		}
		text = t;
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (!n)
			break;
	}
	fclose(f);
	err = symbolizer__load_kallsyms(s, text, len);
	free(text);
	return err;
}

const char *symbolizer__kernel_reason(const struct symbolizer *s)
{
	return s->kreason;
}

void symbolizer__kernel_frame(struct symbolizer *s, uint64_t ip, bool is_return, char *buf,
			      size_t len)
{
	size_t lo = 0, hi = s->nksyms;
	uint64_t look = is_return && ip ? ip - 1 : ip;

	if (!s->kloaded)
		symbolizer__load_kernel(s);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->ksyms[mid].addr <= look)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || !s->nksyms) {
		snprintf(buf, len, "[kernel]+0x%llx_[k]", (unsigned long long)ip);
		return;
	}
	snprintf(buf, len, "%s_[k]", s->knames + s->ksyms[lo - 1].name);
}

/* Address spaces. */

static struct space *new_space(struct symbolizer *s, uint32_t pid, uint64_t t, bool forked,
			       uint32_t parent)
{
	struct space *sp;

	sp = vec_grow(s->spaces, &s->spaces_cap, s->nspaces + 1, sizeof(*sp), 64);
	if (!sp)
		return NULL;
	s->spaces = sp;
	sp = &s->spaces[s->nspaces++];
	memset(sp, 0, sizeof(*sp));
	sp->pid = pid;
	sp->start_time = t;
	sp->forked = forked;
	sp->parent_pid = parent;
	return sp;
}

/* The address space pid had at time t: the latest that began at or before t. */
static struct space *space_at(struct symbolizer *s, uint32_t pid, uint64_t t)
{
	struct space *best = NULL, *first = NULL;

	for (size_t i = 0; i < s->nspaces; i++) {
		struct space *sp = &s->spaces[i];

		if (sp->pid != pid)
			continue;
		if (!first || sp->start_time < first->start_time)
			first = sp;
		if (sp->start_time <= t && (!best || sp->start_time >= best->start_time))
			best = sp;
	}
	return best ? best : first;
}

void symbolizer__fork(struct symbolizer *s, uint32_t pid, uint32_t ppid, uint64_t time_ns)
{
	new_space(s, pid, time_ns, true, ppid);
}

void symbolizer__exec(struct symbolizer *s, uint32_t pid, uint64_t time_ns)
{
	new_space(s, pid, time_ns, false, 0);
}

static int64_t module_for(struct symbolizer *s, const char *path, const uint8_t *bid,
			  size_t bid_len)
{
	struct module *m;

	for (size_t i = 0; i < s->nmods; i++) {
		m = &s->mods[i];
		if (strcmp(m->path, path))
			continue;
		if (m->build_id_len == bid_len && (!bid_len || !memcmp(m->build_id, bid, bid_len)))
			return (int64_t)i;
	}
	m = vec_grow(s->mods, &s->mods_cap, s->nmods + 1, sizeof(*m), 32);
	if (!m)
		return -ENOMEM;
	s->mods = m;
	m = &s->mods[s->nmods];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	if (bid_len > sizeof(m->build_id))
		bid_len = sizeof(m->build_id);
	if (bid_len)
		memcpy(m->build_id, bid, bid_len);
	m->build_id_len = bid_len;
	return (int64_t)s->nmods++;
}

int symbolizer__mmap(struct symbolizer *s, uint32_t pid, uint64_t time_ns, uint64_t start,
		     uint64_t len, uint64_t pgoff, const char *path, const uint8_t *build_id,
		     size_t build_id_len)
{
	struct space *sp = space_at(s, pid, time_ns);
	struct mapping *maps;
	int64_t mod;

	if (!path || (path[0] != '/' && path[0] != '['))
		return 0; /* anonymous memory: no module to name */
	if (!sp) {
		sp = new_space(s, pid, 0, false, 0);
		if (!sp)
			return -ENOMEM;
	}
	mod = module_for(s, path, build_id, build_id ? build_id_len : 0);
	if (mod < 0)
		return (int)mod;
	maps = vec_grow(sp->maps, &sp->cap, sp->nmaps + 1, sizeof(*maps), 16);
	if (!maps)
		return -ENOMEM;
	sp->maps = maps;
	sp->maps[sp->nmaps++] = (struct mapping){time_ns, start, len, pgoff, (uint32_t)mod};
	s->nmappings++;
	return 0;
}

size_t symbolizer__mappings(const struct symbolizer *s)
{
	return s->nmappings;
}

/* The mapping of addr in pid at time t, through fork parents. */
static const struct mapping *find_mapping(struct symbolizer *s, uint32_t pid, uint64_t t,
					  uint64_t addr)
{
	for (int depth = 0; depth < 64; depth++) {
		struct space *sp = space_at(s, pid, t);
		const struct mapping *best = NULL;

		if (!sp)
			return NULL;
		/* The latest mapping made by t covering addr; failing that, any. */
		for (size_t i = 0; i < sp->nmaps; i++) {
			const struct mapping *m = &sp->maps[i];

			if (addr < m->start || addr - m->start >= m->len)
				continue;
			if (!best || (m->time <= t && (best->time > t || m->time >= best->time)))
				best = m;
		}
		if (best)
			return best;
		if (!sp->forked)
			return NULL;
		pid = sp->parent_pid;
		t = sp->start_time;
	}
	return NULL;
}

/* ELF modules. */

/* Names are kept without their symbol version ("read@@GLIBC_2.2.5" is "read"). */
static int add_name(struct module *m, const char *name, uint32_t *off)
{
	const char *at = strchr(name, '@');
	size_t l = (at && at != name ? (size_t)(at - name) : strlen(name)) + 1;
	char *n = vec_grow(m->names, &m->names_cap, m->names_len + l, 1, 65536);

	if (!n)
		return -ENOMEM;
	m->names = n;
	memcpy(m->names + m->names_len, name, l - 1);
	m->names[m->names_len + l - 1] = '\0';
	*off = (uint32_t)m->names_len;
	m->names_len += l;
	return 0;
}

static int cmp_esym(const void *a, const void *b)
{
	const struct esym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Sized symbols before zero-sized aliases at the same address, then the best name. */
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The build ID in an ELF's notes, or 0. */
static size_t elf_build_id(Elf *e, uint8_t *out, size_t outlen)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4)) {
				size_t n = nh.n_descsz < outlen ? nh.n_descsz : outlen;

				memcpy(out, (char *)d->d_buf + desc_off, n);
				return n;
			}
		}
	}
	return 0;
}

static int read_symbols(struct module *m, Elf *e, bool dynsym_too)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t cap = m->nsyms;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_SYMTAB && !(dynsym_too && sh.sh_type == SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			struct esym *ns;
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
				continue;
			if (sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			ns = vec_grow(m->syms, &cap, m->nsyms + 1, sizeof(*ns), 1024);
			if (!ns)
				return -ENOMEM;
			m->syms = ns;
			m->syms[m->nsyms].addr = sym.st_value;
			m->syms[m->nsyms].size = sym.st_size;
			/* Public names first; glibc's internal aliases (__GI_...) last. */
			m->syms[m->nsyms].rank = (GELF_ST_BIND(sym.st_info) == STB_LOCAL ? 2 : 0) +
						 (!strncmp(name, "__GI_", 5) ? 4 : 0) +
						 (name[0] == '_' ? 1 : 0);
			if (add_name(m, name, &m->syms[m->nsyms].name))
				return -ENOMEM;
			m->nsyms++;
		}
	}
	return 0;
}

static uint64_t read_uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	int shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t read_sleb(const uint8_t **p, const uint8_t *end)
{
	int64_t v = 0;
	int shift = 0;
	uint8_t b = 0;

	while (*p < end) {
		b = *(*p)++;
		if (shift < 64)
			v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

#define DW_EH_PE_omit	  0xff
#define DW_EH_PE_absptr	  0x00
#define DW_EH_PE_uleb128  0x01
#define DW_EH_PE_udata2	  0x02
#define DW_EH_PE_udata4	  0x03
#define DW_EH_PE_udata8	  0x04
#define DW_EH_PE_sleb128  0x09
#define DW_EH_PE_sdata2	  0x0a
#define DW_EH_PE_sdata4	  0x0b
#define DW_EH_PE_sdata8	  0x0c
#define DW_EH_PE_pcrel	  0x10
#define DW_EH_PE_datarel  0x30
#define DW_EH_PE_indirect 0x80

/* An encoded pointer at *p (vaddr of *p is base + (*p - start)). */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t pc_vaddr,
			 uint64_t *out)
{
	uint64_t v = 0;
	const uint8_t *q = *p;

	if (enc == DW_EH_PE_omit)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		if (end - q < 8)
			return false;
		memcpy(&v, q, 8);
		q += 8;
		break;
	case DW_EH_PE_udata4:
		if (end - q < 4)
			return false;
		{
			uint32_t x;

			memcpy(&x, q, 4);
			v = x;
		}
		q += 4;
		break;
	case DW_EH_PE_sdata4:
		if (end - q < 4)
			return false;
		{
			int32_t x;

			memcpy(&x, q, 4);
			v = (uint64_t)(int64_t)x;
		}
		q += 4;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		if (end - q < 2)
			return false;
		{
			uint16_t x;

			memcpy(&x, q, 2);
			v = (enc & 0x0f) == DW_EH_PE_sdata2 ? (uint64_t)(int64_t)(int16_t)x : x;
		}
		q += 2;
		break;
	case DW_EH_PE_uleb128:
		v = read_uleb(&q, end);
		break;
	case DW_EH_PE_sleb128:
		v = (uint64_t)read_sleb(&q, end);
		break;
	default:
		return false;
	}
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		v += pc_vaddr;
	*p = q;
	*out = v;
	return true;
}

/* CIE facts an FDE needs. */
struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool has_aug_len;
	const uint8_t *insns, *insns_end;
};

static bool parse_cie(const struct module *m, size_t off, struct cie *c)
{
	const uint8_t *p = m->eh + off, *end = m->eh + m->eh_len, *aug, *cend;
	uint32_t len;
	uint8_t version;

	if (end - p < 8)
		return false;
	memcpy(&len, p, 4);
	if (len == 0xffffffff || (size_t)(end - p - 4) < len)
		return false;
	cend = p + 4 + len;
	p += 8; /* length, CIE id */
	version = *p++;
	aug = p;
	while (p < cend && *p)
		p++;
	if (p >= cend)
		return false;
	p++;
	c->code_align = read_uleb(&p, cend);
	c->data_align = read_sleb(&p, cend);
	c->ra_reg = version == 1 ? *p++ : read_uleb(&p, cend);
	c->fde_enc = DW_EH_PE_absptr;
	c->has_aug_len = aug[0] == 'z';
	if (c->has_aug_len) {
		uint64_t alen = read_uleb(&p, cend);
		const uint8_t *aend = p + alen, *q = p;

		for (const uint8_t *a = aug + 1; *a && q < aend; a++) {
			if (*a == 'R') {
				c->fde_enc = *q++;
			} else if (*a == 'P') {
				uint8_t enc = *q++;
				uint64_t dummy;

				if (!read_encoded(&q, aend, enc & 0x7f, 0, &dummy))
					return false;
			} else if (*a == 'L') {
				q++;
			} else if (*a == 'S' || *a == 'B') {
				/* signal frame / BTI: no data */
			} else {
				return false;
			}
		}
		p = aend;
	}
	if (p > cend)
		return false;
	c->insns = p;
	c->insns_end = cend;
	return true;
}

/* Index the FDEs of .eh_frame by the code they describe. */
static void index_fdes(struct module *m)
{
	size_t off = 0, cap = 0;

	while (off + 8 <= m->eh_len) {
		const uint8_t *p = m->eh + off, *end;
		uint32_t len, cie_ptr;
		struct cie c;
		uint64_t begin, range;

		memcpy(&len, p, 4);
		if (!len || len == 0xffffffff || len > m->eh_len - off - 4)
			break;
		end = p + 4 + len;
		memcpy(&cie_ptr, p + 4, 4);
		if (cie_ptr && (size_t)cie_ptr <= off + 4 && parse_cie(m, off + 4 - cie_ptr, &c)) {
			const uint8_t *q = p + 8;
			uint64_t at = m->eh_vaddr + off + 8;

			if (read_encoded(&q, end, c.fde_enc, at, &begin) &&
			    read_encoded(&q, end, c.fde_enc & 0x0f, 0, &range) && range) {
				struct fde *n =
				    vec_grow(m->fdes, &cap, m->nfdes + 1, sizeof(*n), 1024);

				if (!n)
					break;
				m->fdes = n;
				m->fdes[m->nfdes++] =
				    (struct fde){begin, begin + range, (uint32_t)off};
			}
		}
		off += 4 + len;
	}
	/* qsort(NULL, 0, ...) is undefined: a file may have none. */
	if (m->nfdes)
		qsort(m->fdes, m->nfdes, sizeof(*m->fdes), cmp_fde);
}

static void read_eh_frame(struct module *m, Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".eh_frame") || sh.sh_type == SHT_NOBITS)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_size)
			return;
		m->eh = malloc(d->d_size);
		if (!m->eh)
			return;
		memcpy(m->eh, d->d_buf, d->d_size);
		m->eh_len = d->d_size;
		m->eh_vaddr = sh.sh_addr;
		index_fdes(m);
		return;
	}
}

/* e when it is an ELF object; else NULL, e ended. */
static Elf *elf_only(Elf *e)
{
	if (e && elf_kind(e) == ELF_K_ELF)
		return e;
	if (e)
		elf_end(e);
	return NULL;
}

/*
 * A file the command mapped: its path is the command's to change after it
 * ran (a FIFO, a device, a link to a file it may not read put there), so
 * it is opened with the rights of the user who could have (lib/fscreds.h),
 * without blocking, and read only when it is a regular file.
 */
static Elf *open_elf(const char *path, int *fd)
{
	struct fscreds_save sv;
	struct stat st;
	Elf *e;

	if (fscreds_enter(fscreds_reader(), &sv))
		return NULL;
	*fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	fscreds_leave(&sv);
	if (*fd < 0)
		return NULL;
	if (fstat(*fd, &st) || !S_ISREG(st.st_mode)) {
		close(*fd);
		*fd = -1;
		return NULL;
	}
	e = elf_only(elf_begin(*fd, ELF_C_READ_MMAP, NULL));
	if (!e) {
		close(*fd);
		*fd = -1;
	}
	return e;
}

/*
 * The vDSO, from tsarun's own: the kernel maps the same image into every
 * 64-bit process. It is a whole shared object (section headers last), so
 * its symbols and CFI are read as a file's: a copy, which *copy owns.
 */
static Elf *open_vdso(void **copy)
{
	const unsigned char *img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	Elf64_Ehdr eh;
	size_t size;
	Elf *e;

	*copy = NULL;
	if (!img)
		return NULL;
	memcpy(&eh, img, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	size = (size_t)eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	if (size < sizeof(eh) || size > (1u << 20))
		return NULL;
	*copy = malloc(size);
	if (!*copy)
		return NULL;
	memcpy(*copy, img, size);
	e = elf_only(elf_memory(*copy, size));
	if (!e) {
		free(*copy);
		*copy = NULL;
	}
	return e;
}

static void load_module(struct module *m)
{
	uint8_t bid[20];
	size_t n, bid_len, phnum;
	void *vdso = NULL;
	Elf *e;
	int fd = -1;

	m->loaded = true;
	if (!strcmp(m->path, "[vdso]"))
		e = open_vdso(&vdso);
	else if (m->path[0] == '/')
		e = open_elf(m->path, &fd);
	else
		return; /* [uprobes], anonymous code: named, not read */
	if (!e)
		return;
	bid_len = elf_build_id(e, bid, sizeof(bid));
	/* A file rebuilt since it was mapped would give wrong names: do not use it. */
	if (m->build_id_len && (bid_len != m->build_id_len || memcmp(bid, m->build_id, bid_len)))
		goto out;
	if (!m->build_id_len && bid_len) {
		memcpy(m->build_id, bid, bid_len);
		m->build_id_len = bid_len;
	}
	if (elf_getphdrnum(e, &phnum))
		goto out;
	for (size_t i = 0; i < phnum && m->nsegs < (int)(sizeof(m->segs) / sizeof(m->segs[0]));
	     i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->segs[m->nsegs++] = (struct seg){ph.p_offset, ph.p_vaddr, ph.p_filesz};
	}
	m->usable = true;
	read_symbols(m, e, true);
	read_eh_frame(m, e);
	/* The detached debug file has the full symbol table of a stripped library. */
	if (m->build_id_len >= 2) {
		char dbg[256];
		int dfd;
		Elf *de;

		n = (size_t)snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%02x/",
				     m->build_id[0]);
		for (size_t i = 1; i < m->build_id_len && n + 3 < sizeof(dbg); i++)
			n += (size_t)snprintf(dbg + n, sizeof(dbg) - n, "%02x", m->build_id[i]);
		snprintf(dbg + n, sizeof(dbg) - n, ".debug");
		de = open_elf(dbg, &dfd);
		if (de) {
			read_symbols(m, de, false);
			elf_end(de);
			close(dfd);
		}
	}
	/* qsort(NULL, 0, ...) is undefined: a file may have none. */
	if (m->nsyms)
		qsort(m->syms, m->nsyms, sizeof(*m->syms), cmp_esym);
out:
	elf_end(e);
	if (fd >= 0)
		close(fd);
	free(vdso);
}

static struct module *module_get(struct symbolizer *s, uint32_t idx)
{
	struct module *m = &s->mods[idx];

	if (!m->loaded)
		load_module(m);
	return m;
}

/* File offset to ELF virtual address. */
static bool off_to_vaddr(const struct module *m, uint64_t off, uint64_t *vaddr)
{
	for (int i = 0; i < m->nsegs; i++) {
		if (off >= m->segs[i].offset && off - m->segs[i].offset < m->segs[i].filesz) {
			*vaddr = off - m->segs[i].offset + m->segs[i].vaddr;
			return true;
		}
	}
	return false;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

/* The module and ELF address of a user address; false when unknown. */
static bool locate(struct symbolizer *s, uint32_t pid, uint64_t t, uint64_t ip, struct module **mod,
		   uint64_t *file_off, uint64_t *vaddr, bool *have_vaddr)
{
	const struct mapping *mp = find_mapping(s, pid, t, ip);

	if (!mp)
		return false;
	*mod = module_get(s, mp->module);
	*file_off = ip - mp->start + mp->pgoff;
	*have_vaddr = (*mod)->usable && off_to_vaddr(*mod, *file_off, vaddr);
	return true;
}

/*
 * The Itanium C++ ABI's demangler, from libstdc++ (linked statically: the
 * demangler's objects only, no C++ runtime). C++ names and Rust's legacy
 * ones (_ZN...17h<hash>E) are both in that ABI.
 */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

void symbolize_demangle(const char *name, char *buf, size_t len)
{
	char *d = NULL;
	int status = -1;
	size_t n;

	if (name[0] == '_' && name[1] == 'Z')
		d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status) {
		free(d);
		snprintf(buf, len, "%s", name);
		return;
	}
	/* Rust's legacy names end in ::h and 16 hex digits of hash: noise to a reader. */
	n = strlen(d);
	if (n > 19 && !strncmp(d + n - 19, "::h", 3) &&
	    strspn(d + n - 16, "0123456789abcdef") == 16)
		d[n - 19] = '\0';
	snprintf(buf, len, "%s", d);
	free(d);
}

bool symbolizer__user_frame(struct symbolizer *s, uint32_t pid, uint64_t time_ns, uint64_t ip,
			    bool is_return, char *buf, size_t len)
{
	uint64_t look = is_return && ip ? ip - 1 : ip, off, va;
	struct module *m;
	bool have_va;

	if (!locate(s, pid, time_ns, look, &m, &off, &va, &have_va)) {
		snprintf(buf, len, "[unknown]+0x%llx", (unsigned long long)ip);
		return false;
	}
	if (have_va && m->nsyms) {
		size_t lo = 0, hi = m->nsyms;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (m->syms[mid].addr <= va)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* Among the aliases at the closest address at or below va, the best that contains it. */
		if (lo > 0) {
			size_t i = lo - 1;
			uint64_t a = m->syms[i].addr;

			while (i > 0 && m->syms[i - 1].addr == a)
				i--;
			for (; i < m->nsyms && m->syms[i].addr == a; i++) {
				const struct esym *e = &m->syms[i];

				if (!e->size || va - e->addr < e->size) {
					symbolize_demangle(m->names + e->name, buf, len);
					return true;
				}
			}
		}
	}
	snprintf(buf, len, "%s+0x%llx", base_name(m->path),
		 (unsigned long long)(off + (is_return && ip ? 1 : 0)));
	return false;
}

/* CFI: the rule to find the caller's frame at one code address. */

enum { RULE_SAME = 0, RULE_UNDEF, RULE_OFFSET, RULE_OTHER };

struct cfa_state {
	int cfa_reg; /* DWARF register number */
	int64_t cfa_off;
	bool cfa_expr;
	int ra_rule, bp_rule;
	int64_t ra_off, bp_off;
};

#if defined(__x86_64__)
#define DW_REG_BP 6
#define DW_REG_SP 7
#define DW_REG_RA 16
#elif defined(__aarch64__)
#define DW_REG_BP 29
#define DW_REG_SP 31
#define DW_REG_RA 30
#else
#define DW_REG_BP -1
#define DW_REG_SP -1
#define DW_REG_RA -1
#endif

static void set_rule(struct cfa_state *st, uint64_t reg, int rule, int64_t off)
{
	if ((int64_t)reg == DW_REG_RA) {
		st->ra_rule = rule;
		st->ra_off = off;
	} else if ((int64_t)reg == DW_REG_BP) {
		st->bp_rule = rule;
		st->bp_off = off;
	}
}

/* Run CFA instructions until the location passes target. Returns false on anything unknown. */
static bool run_cfa(const struct cie *c, const uint8_t *p, const uint8_t *end, uint64_t loc,
		    uint64_t target, struct cfa_state *st, const struct cfa_state *initial)
{
	struct cfa_state stack[8];
	int depth = 0;

	while (p < end) {
		uint8_t op = *p++, low = op & 0x3f;
		uint64_t reg, delta;

		switch (op >> 6) {
		case 1: /* advance_loc */
			loc += low * c->code_align;
			if (loc > target)
				return true;
			continue;
		case 2: /* offset */
			set_rule(st, low, RULE_OFFSET, (int64_t)read_uleb(&p, end) * c->data_align);
			continue;
		case 3: /* restore */
			if (initial)
				set_rule(st, low,
					 low == DW_REG_RA ? initial->ra_rule : initial->bp_rule,
					 low == DW_REG_RA ? initial->ra_off : initial->bp_off);
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: /* set_loc */
			return false;
		case 0x02:
			delta = *p++;
			goto advance;
		case 0x03:
			if (end - p < 2)
				return false;
			delta = (uint64_t)p[0] | (uint64_t)p[1] << 8;
			p += 2;
			goto advance;
		case 0x04:
			if (end - p < 4)
				return false;
			delta = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
				(uint64_t)p[3] << 24;
			p += 4;
		advance:
			loc += delta * c->code_align;
			if (loc > target)
				return true;
			break;
		case 0x05: /* offset_extended */
			reg = read_uleb(&p, end);
			set_rule(st, reg, RULE_OFFSET, (int64_t)read_uleb(&p, end) * c->data_align);
			break;
		case 0x06: /* restore_extended */
			reg = read_uleb(&p, end);
			if (initial)
				set_rule(
				    st, reg,
				    (int64_t)reg == DW_REG_RA ? initial->ra_rule : initial->bp_rule,
				    (int64_t)reg == DW_REG_RA ? initial->ra_off : initial->bp_off);
			break;
		case 0x07: /* undefined */
			set_rule(st, read_uleb(&p, end), RULE_UNDEF, 0);
			break;
		case 0x08: /* same_value */
			set_rule(st, read_uleb(&p, end), RULE_SAME, 0);
			break;
		case 0x09: /* register */
			reg = read_uleb(&p, end);
			read_uleb(&p, end);
			set_rule(st, reg, RULE_OTHER, 0);
			break;
		case 0x0a: /* remember_state */
			if (depth == 8)
				return false;
			stack[depth++] = *st;
			break;
		case 0x0b: /* restore_state */
			if (!depth)
				return false;
			*st = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			st->cfa_reg = (int)read_uleb(&p, end);
			st->cfa_off = (int64_t)read_uleb(&p, end);
			st->cfa_expr = false;
			break;
		case 0x0d: /* def_cfa_register */
			st->cfa_reg = (int)read_uleb(&p, end);
			st->cfa_expr = false;
			break;
		case 0x0e: /* def_cfa_offset */
			st->cfa_off = (int64_t)read_uleb(&p, end);
			break;
		case 0x0f: /* def_cfa_expression */
			delta = read_uleb(&p, end);
			p += delta;
			st->cfa_expr = true;
			break;
		case 0x10: /* expression */
			reg = read_uleb(&p, end);
			delta = read_uleb(&p, end);
			p += delta;
			set_rule(st, reg, RULE_OTHER, 0);
			break;
		case 0x11: /* offset_extended_sf */
			reg = read_uleb(&p, end);
			set_rule(st, reg, RULE_OFFSET, read_sleb(&p, end) * c->data_align);
			break;
		case 0x12: /* def_cfa_sf */
			st->cfa_reg = (int)read_uleb(&p, end);
			st->cfa_off = read_sleb(&p, end) * c->data_align;
			st->cfa_expr = false;
			break;
		case 0x13: /* def_cfa_offset_sf */
			st->cfa_off = read_sleb(&p, end) * c->data_align;
			break;
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = read_uleb(&p, end);
			if (op == 0x14)
				read_uleb(&p, end);
			else
				read_sleb(&p, end);
			set_rule(st, reg, RULE_OTHER, 0);
			break;
		case 0x16: /* val_expression */
			reg = read_uleb(&p, end);
			delta = read_uleb(&p, end);
			p += delta;
			set_rule(st, reg, RULE_OTHER, 0);
			break;
		case 0x2e: /* GNU_args_size */
			read_uleb(&p, end);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = read_uleb(&p, end);
			set_rule(st, reg, RULE_OFFSET,
				 -(int64_t)read_uleb(&p, end) * c->data_align);
			break;
		default:
			return false;
		}
	}
	return true;
}

enum cfi_result { CFI_NONE = 0, CFI_OK, CFI_OUTERMOST };

/* The CFA rule at ELF address va of module m: CFI_OUTERMOST where the return address is undefined. */
static enum cfi_result cfi_at(const struct module *m, uint64_t va, struct cfa_state *st)
{
	size_t lo = 0, hi = m->nfdes;
	const struct fde *f;
	const uint8_t *p, *end;
	struct cfa_state init;
	uint32_t len, cie_ptr;
	struct cie c;
	uint64_t begin, range;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->fdes[mid].begin <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return CFI_NONE;
	f = &m->fdes[lo - 1];
	if (va >= f->end)
		return CFI_NONE;
	p = m->eh + f->off;
	memcpy(&len, p, 4);
	end = p + 4 + len;
	memcpy(&cie_ptr, p + 4, 4);
	if (!parse_cie(m, f->off + 4 - cie_ptr, &c) || (int64_t)c.ra_reg != DW_REG_RA)
		return CFI_NONE;
	p += 8;
	if (!read_encoded(&p, end, c.fde_enc, m->eh_vaddr + f->off + 8, &begin) ||
	    !read_encoded(&p, end, c.fde_enc & 0x0f, 0, &range))
		return CFI_NONE;
	if (c.has_aug_len)
		p += read_uleb(&p, end);
	memset(st, 0, sizeof(*st));
	st->cfa_reg = -1;
	st->ra_rule = RULE_UNDEF;
	if (!run_cfa(&c, c.insns, c.insns_end, begin, UINT64_MAX, st, NULL))
		return CFI_NONE;
	init = *st;
	if (!run_cfa(&c, p, end, begin, va, st, &init))
		return CFI_NONE;
	if (st->ra_rule == RULE_UNDEF)
		return CFI_OUTERMOST;
	return !st->cfa_expr && st->ra_rule == RULE_OFFSET ? CFI_OK : CFI_NONE;
}

static bool region_read(uint64_t sp, const uint8_t *region, size_t len, uint64_t addr, uint64_t *v)
{
	if (addr < sp || addr - sp > len || len - (addr - sp) < 8)
		return false;
	memcpy(v, region + (addr - sp), 8);
	return true;
}

size_t symbolizer__repair(struct symbolizer *s, uint32_t pid, uint64_t time_ns, const uint64_t *fp,
			  size_t nfp, uint64_t ip, uint64_t sp, uint64_t bp, const uint8_t *region,
			  size_t region_len, uint64_t *out, size_t max, uint32_t *added,
			  bool *partial)
{
	uint64_t pc = ip, cur_sp = sp, cur_bp = bp;
	/* out[0..synced) ends with fp[j], the walk's last frame the unwinding met. */
	size_t n = 0, j = 0, synced = 0;
	bool outermost = false, ran_out = false;

	*added = 0;
	*partial = false;
	if (DW_REG_RA < 0 || !nfp || !region_len || fp[0] != ip || max < 2)
		goto unchanged;
	out[n++] = ip;
	synced = 1;
	while (n < max) {
		struct cfa_state st;
		struct module *m;
		uint64_t off, va, cfa, ra, nbp = cur_bp;
		enum cfi_result cr;
		bool have_va;

		if (!locate(s, pid, time_ns, n > 1 ? pc - 1 : pc, &m, &off, &va, &have_va) ||
		    !have_va)
			break;
		cr = cfi_at(m, va, &st);
		if (cr == CFI_OUTERMOST) {
			/* The first frame of the thread: the unwinding is complete. */
			outermost = true;
			break;
		}
		if (cr == CFI_NONE)
			break;
		if (st.cfa_reg == DW_REG_SP)
			cfa = cur_sp + (uint64_t)st.cfa_off;
		else if (st.cfa_reg == DW_REG_BP)
			cfa = cur_bp + (uint64_t)st.cfa_off;
		else
			break;
		if (!region_read(sp, region, region_len, cfa + (uint64_t)st.ra_off, &ra) ||
		    (st.bp_rule == RULE_OFFSET &&
		     !region_read(sp, region, region_len, cfa + (uint64_t)st.bp_off, &nbp))) {
			ran_out = true;
			break;
		}
		if (!ra) {
			outermost = true;
			break;
		}
		out[n++] = ra;
		if (j + 1 < nfp && ra == fp[j + 1]) {
			/* Met the walk's next frame: what was found since the last one is its caller chain. */
			j++;
			synced = n;
		}
		pc = ra;
		cur_sp = cfa;
		cur_bp = nbp;
	}
	if (j > 0) {
		/*
		 * The unwinding met the walk: the frames it found between two of
		 * the walk's go in; past the last one it met, the walk goes on,
		 * unless the unwinding went on to the thread's first frame.
		 */
		if (!outermost) {
			n = synced;
			for (size_t i = j + 1; i < nfp && n < max; i++)
				out[n++] = fp[i];
			*added = (uint32_t)(synced - (j + 1));
		} else {
			*added = (uint32_t)(n > nfp ? n - nfp : 0);
		}
		return n;
	}
	/*
	 * It never met the walk. When it reached the thread's first frame, or
	 * went further than a walk that went astray (code that uses the frame
	 * pointer register for data) until the copied stack ended, its frames
	 * are the stack (in the second case without the outermost); when a
	 * frame had no CFI, the walk stays, unless it had nothing but the first.
	 */
	if (n < 2 || (!outermost && !ran_out && nfp >= 2))
		goto unchanged;
	*partial = !outermost;
	*added = (uint32_t)(n - 1 > nfp - 1 ? n - nfp : 0);
	return n;
unchanged:
	for (n = 0; n < nfp && n < max; n++)
		out[n] = fp[n];
	return n;
}
