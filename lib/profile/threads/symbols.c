/* SPDX-License-Identifier: MIT */
/*
 * Frame labels: the function's name from .symtab (of the file, or of its
 * separate debug file found by build id), else from .dynsym; code no symbol
 * covers (Debian's redis and libc are stripped) gets "module+0x<start>",
 * the start of its function as the .eh_frame_hdr table gives it, so that
 * every address in one unnamed function shares one label.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "threads_int.h"

#define NOSIZE_SPAN 4096	/* how far a symbol without size is trusted */
#define START_SPAN 64		/* synthetic _start when nothing names the entry */

struct symvec {
	struct sym *v;
	size_t n, cap;
};

static int push(struct symvec *sv, uint64_t start, uint64_t size, const char *name)
{
	if (sv->n == sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 1024;
		struct sym *v = realloc(sv->v, cap * sizeof(*v));

		if (!v)
			return ditto_err(-ENOMEM, "threads: out of memory");
		sv->v = v;
		sv->cap = cap;
	}
	sv->v[sv->n++] = (struct sym){ start, size, name };
	return 0;
}

static bool is_code(const GElf_Sym *s)
{
	unsigned type = GELF_ST_TYPE(s->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF &&
	       s->st_value != 0;
}

/* Append the code symbols of the first section of this type; false if there is none. */
static int collect(Elf *elf, uint32_t type, struct symvec *sv, bool *found)
{
	Elf_Scn *scn = NULL;

	*found = false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		if (!(data = elf_getdata(scn, NULL)))
			continue;
		*found = true;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			int err;

			if (!gelf_getsym(data, (int)i, &s) || !is_code(&s))
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (name && *name && (err = push(sv, s.st_value, s.st_size, name)))
				return err;
		}
		return 0;
	}
	return 0;
}

/* /usr/lib/debug/.build-id/ab/cdef...debug, as installed by -dbg/-dbgsym packages. */
static Elf *open_debug_file(struct module *m)
{
	char path[128];

	if (strlen(m->build_id) < 3)
		return NULL;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", m->build_id,
		 m->build_id + 2);
	m->dbg_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->dbg_fd < 0)
		return NULL;
	m->dbg_elf = elf_begin(m->dbg_fd, ELF_C_READ_MMAP, NULL);
	return m->dbg_elf;
}

struct dwarf_ctx {
	struct module *m;
	struct symvec *sv;
};

/* DWARF strings die with libdwarf's handle: keep copies in the module. */
static int add_dwarf(void *ctx, uint64_t start, uint64_t size, const char *name)
{
	struct dwarf_ctx *dc = ctx;
	struct module *m = dc->m;
	char **names, *copy = strdup(name);

	if (!copy)
		return ditto_err(-ENOMEM, "threads: out of memory");
	names = m->dwarf_names;
	/* Capacity doubles at every power of two: 8, 16, 32, ... */
	if (m->ndwarf_names < 8 ? !m->ndwarf_names
				: !(m->ndwarf_names & (m->ndwarf_names - 1))) {
		size_t cap = m->ndwarf_names < 8 ? 8 : m->ndwarf_names * 2;

		names = realloc(m->dwarf_names, cap * sizeof(*names));
		if (!names) {
			free(copy);
			return ditto_err(-ENOMEM, "threads: out of memory");
		}
		m->dwarf_names = names;
	}
	names[m->ndwarf_names++] = copy;
	return push(dc->sv, start, size, copy);
}

static int gather(struct module *m, struct symvec *sv)
{
	bool found;
	Elf *dbg;
	int err;

	if ((err = collect(m->elf, SHT_SYMTAB, sv, &found)) || found)
		return err;
	if ((dbg = open_debug_file(m)) && ((err = collect(dbg, SHT_SYMTAB, sv, &found)) || found))
		return err;
	/* No symbol table but debug information: DWARF names its functions. */
	struct dwarf_ctx dc = { m, sv };

	if ((err = dwarf_collect(m->fd, add_dwarf, &dc, &found)))
		return err;
	return collect(m->elf, SHT_DYNSYM, sv, &found);
}

/* Among aliases at one address, prefer a sized, less underscored, shorter name. */
static int by_start(const void *pa, const void *pb)
{
	const struct sym *a = pa, *b = pb;
	size_t ua = strspn(a->name, "_"), ub = strspn(b->name, "_");

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (!a->size != !b->size)
		return a->size ? -1 : 1;
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (strlen(a->name) != strlen(b->name))
		return strlen(a->name) < strlen(b->name) ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void sort_unique(struct symvec *sv)
{
	size_t out = 0;

	if (!sv->n)
		return; /* sv->v may be NULL: qsort must not see it */
	qsort(sv->v, sv->n, sizeof(*sv->v), by_start);
	for (size_t i = 0; i < sv->n; i++)
		if (!out || sv->v[out - 1].start != sv->v[i].start)
			sv->v[out++] = sv->v[i];
	sv->n = out;
}

static const struct sym *lookup(const struct sym *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {	/* first symbol starting above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct sym *s = &v[lo - 1];

	if (s->size)
		return addr - s->start < s->size ? s : NULL;
	if (addr - s->start >= NOSIZE_SPAN || (lo < n && addr >= v[lo].start))
		return NULL;
	return s;
}

/*
 * A stripped executable does not name its entry point, but the ELF header
 * gives it: name it _start, which tells completed main-thread stacks apart.
 */
static int add_start(struct module *m, struct symvec *sv)
{
	if (!m->entry || lookup(sv->v, sv->n, m->entry))
		return 0;
	int err = push(sv, m->entry, START_SPAN, "_start");

	if (!err)
		sort_unique(sv);
	return err;
}

static int load_syms(struct module *m)
{
	struct symvec sv = { 0 };
	int err;

	m->syms_loaded = true;
	if ((err = gather(m, &sv)))
		goto fail;
	sort_unique(&sv);
	if ((err = add_start(m, &sv)))
		goto fail;
	m->sym_label = malloc((sv.n + 1) * sizeof(*m->sym_label));
	if (!m->sym_label) {
		err = ditto_err(-ENOMEM, "threads: out of memory");
		goto fail;
	}
	for (size_t i = 0; i < sv.n; i++)
		m->sym_label[i] = IDMAP_EMPTY;
	m->syms = sv.v;
	m->nsyms = sv.n;
	return 0;
fail:
	free(sv.v);
	return err;
}

/* Start of the function holding vaddr: the last FDE starting at or below it. */
static bool fde_start(const struct module *m, uint64_t vaddr, uint64_t *start)
{
	const uint8_t *t = m->image + m->table_off;
	size_t lo = 0, hi = m->fde_count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int32_t rel;

		memcpy(&rel, t + 8 * mid, 4);
		if (m->hdr_vaddr + (int64_t)rel <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	int32_t rel;

	memcpy(&rel, t + 8 * (lo - 1), 4);
	*start = m->hdr_vaddr + (int64_t)rel;
	return true;
}

static int anon_label(struct labels *l, struct module *m, uint64_t vaddr, uint32_t *id)
{
	char buf[300];
	uint64_t start = vaddr;
	int err;

	if (m->has_table)
		fde_start(m, vaddr, &start);
	if (idmap_get(&m->anon_label, start, id))
		return 0;
	snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, m->base, start);
	if ((err = labels_intern(l, buf, id)))
		return err;
	return idmap_put(&m->anon_label, start, *id);
}

int sym_label(struct labels *l, struct module *m, uint64_t vaddr, uint32_t *id)
{
	const struct sym *s;
	int err;

	if (!m->syms_loaded && m->elf && (err = load_syms(m)))
		return err;
	s = lookup(m->syms, m->nsyms, vaddr);
	if (!s)
		return anon_label(l, m, vaddr, id);
	size_t i = (size_t)(s - m->syms);

	if (m->sym_label[i] == IDMAP_EMPTY && (err = labels_intern(l, s->name, &m->sym_label[i])))
		return err;
	*id = m->sym_label[i];
	return 0;
}

void sym_free(struct module *m)
{
	for (size_t i = 0; i < m->ndwarf_names; i++)
		free(m->dwarf_names[i]);
	free(m->dwarf_names);
	m->dwarf_names = NULL;
	m->ndwarf_names = 0;
	free(m->syms);
	free(m->sym_label);
	idmap_free(&m->anon_label);
	if (m->dbg_elf)
		elf_end(m->dbg_elf);
	if (m->dbg_fd >= 0)
		close(m->dbg_fd);
	m->syms = NULL;
	m->sym_label = NULL;
	m->nsyms = 0;
	m->dbg_elf = NULL;
	m->dbg_fd = -1;
	m->syms_loaded = false;
}
