/* SPDX-License-Identifier: MIT */
/*
 * ELF modules mapped into traced processes, opened once and shared by every
 * process that maps them (libunwind's own remote mode would re-read maps and
 * ELF files on every unwind). A module gives the unwinder its .eh_frame_hdr
 * search table and file bytes, and the symbolizer its symbol tables.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "threads_int.h"

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_datarel_sdata4 0x3b
#define NT_GNU_BUILD_ID_TYPE 3

/* Size of a DWARF pointer encoding's value; 0 when we do not handle it. */
static size_t encoded_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;	/* absptr, udata8, sdata8 */
	case 0x03: case 0x0b: return 4;			/* udata4, sdata4 */
	case 0x02: case 0x0a: return 2;			/* udata2, sdata2 */
	default: return 0;
	}
}

static uint64_t read_unsigned(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	memcpy(&v, p, n);	/* little-endian host and target (x86-64) */
	return v;
}

/*
 * .eh_frame_hdr: version, three encodings, eh_frame_ptr, fde_count, then a
 * sorted table of (initial location, FDE address) pairs relative to the
 * header. libunwind's remote table lookup wants datarel|sdata4 pairs.
 */
static void parse_eh_frame_hdr(struct module *m, uint64_t off, uint64_t vaddr, uint64_t len)
{
	const uint8_t *h = m->image + off;
	size_t ptr_len, cnt_len, at = 4;

	if (off > m->size || len < 4 || len > m->size - off || h[0] != 1)
		return;
	ptr_len = encoded_size(h[1]);
	cnt_len = encoded_size(h[2]);
	if (h[1] == DW_EH_PE_omit || h[2] == DW_EH_PE_omit || !ptr_len || !cnt_len ||
	    (h[2] & 0x70) || h[3] != DW_EH_PE_datarel_sdata4 || at + ptr_len + cnt_len > len)
		return;
	at += ptr_len;
	m->fde_count = read_unsigned(h + at, cnt_len);
	at += cnt_len;
	if (m->fde_count > (len - at) / 8)
		return;
	m->hdr_vaddr = vaddr;
	m->table_vaddr = vaddr + at;
	m->table_off = off + at;
	m->has_table = m->fde_count > 0;
}

static void parse_build_id(struct module *m, uint64_t off, uint64_t len)
{
	const uint8_t *p = m->image + off, *end;

	if (off > m->size || len > m->size - off)
		return;
	for (end = p + len; end - p >= 12;) {
		uint32_t namesz = (uint32_t)read_unsigned(p, 4), descsz = (uint32_t)read_unsigned(p + 4, 4);
		uint32_t type = (uint32_t)read_unsigned(p + 8, 4);
		size_t name_pad = (namesz + 3) & ~3u, desc_pad = (descsz + 3) & ~3u;

		if ((size_t)(end - p - 12) < name_pad + desc_pad)
			return;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 && !memcmp(p + 12, "GNU", 4) &&
		    descsz <= 20) {
			for (uint32_t i = 0; i < descsz; i++)
				snprintf(m->build_id + 2 * i, 3, "%02x", p[12 + name_pad + i]);
			return;
		}
		p += 12 + name_pad + desc_pad;
	}
}

static int add_segment(struct module *m, const GElf_Phdr *ph)
{
	struct segment *v = realloc(m->segs, (m->nsegs + 1) * sizeof(*v));

	if (!v)
		return ditto_err(-ENOMEM, "threads: out of memory");
	m->segs = v;
	v[m->nsegs++] = (struct segment){ ph->p_vaddr, ph->p_memsz, ph->p_offset, ph->p_filesz,
					  ph->p_flags };
	if (m->nsegs == 1 || ph->p_vaddr < m->lo)
		m->lo = ph->p_vaddr;
	if (ph->p_vaddr + ph->p_memsz > m->hi)
		m->hi = ph->p_vaddr + ph->p_memsz;
	return 0;
}

/* Program headers only: they survive section-header stripping, and the vDSO has them. */
static int parse_elf(struct module *m)
{
	GElf_Ehdr eh;
	size_t nph;

	if (elf_kind(m->elf) != ELF_K_ELF || !gelf_getehdr(m->elf, &eh) ||
	    gelf_getclass(m->elf) != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    elf_getphdrnum(m->elf, &nph) != 0)
		return -ENOEXEC;
	m->entry = eh.e_entry;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		int err;

		if (!gelf_getphdr(m->elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type == PT_LOAD && (err = add_segment(m, &ph)))
			return err;
		if (ph.p_type == PT_GNU_EH_FRAME)
			parse_eh_frame_hdr(m, ph.p_offset, ph.p_vaddr, ph.p_filesz);
		if (ph.p_type == PT_NOTE && !m->build_id[0])
			parse_build_id(m, ph.p_offset, ph.p_filesz);
	}
	return m->nsegs ? 0 : -ENOEXEC;
}

static struct module *new_module(const char *path, uint64_t dev, uint64_t ino)
{
	struct module *m = calloc(1, sizeof(*m));
	const char *slash;

	if (!m || !(m->path = strdup(path))) {
		free(m);
		return NULL;
	}
	slash = strrchr(m->path, '/');
	m->base = slash ? slash + 1 : m->path;
	m->dev = dev;
	m->ino = ino;
	m->fd = -1;
	m->dbg_fd = -1;
	return m;
}

/* Forget a module's contents but keep the entry, so a bad file is not retried. */
static void make_stub(struct module *m)
{
	if (m->elf)
		elf_end(m->elf);
	if (m->fd >= 0)
		close(m->fd);
	free(m->owned);
	free(m->segs);
	m->elf = NULL;
	m->fd = -1;
	m->owned = NULL;
	m->segs = NULL;
	m->nsegs = 0;
	m->image = NULL;
	m->has_table = false;
}

int module_open(const char *path, const char *open_path, uint64_t dev, uint64_t ino,
		struct module **out)
{
	struct module *m = new_module(path, dev, ino);
	int err = 0;

	if (!m)
		return ditto_err(-ENOMEM, "threads: out of memory");
	m->fd = open(open_path, O_RDONLY | O_CLOEXEC);
	if (m->fd >= 0)
		m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (m->elf)
		m->image = (const uint8_t *)elf_rawfile(m->elf, &m->size);
	if (m->image)
		err = parse_elf(m);
	if (err == -ENOMEM) {
		module_free(m);
		return err;
	}
	if (!m->image || err) {
		ditto_debug("threads: cannot read %s: frames in it stay unresolved", path);
		make_stub(m);
	}
	*out = m;
	return 0;
}

/* Extent of an in-memory ELF image: the furthest of its segments and section headers. */
static size_t vdso_size(const uint8_t *base)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;

	for (size_t i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	return size;
}

/*
 * Every x86-64 process of this kernel maps the same vDSO, so our own copy
 * stands for theirs (it has unwind tables: clock_gettime samples unwind).
 */
int module_open_vdso(struct module **out)
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	struct module *m;

	if (!base || memcmp(base, ELFMAG, SELFMAG) != 0)
		return -ENOENT;
	m = new_module("[vdso]", 0, 0);
	if (!m)
		return ditto_err(-ENOMEM, "threads: out of memory");
	m->size = vdso_size(base);
	m->owned = malloc(m->size);
	if (!m->owned) {
		module_free(m);
		return ditto_err(-ENOMEM, "threads: out of memory");
	}
	memcpy(m->owned, base, m->size);
	m->image = m->owned;
	m->elf = elf_memory((char *)m->owned, m->size);
	if (!m->elf || parse_elf(m) != 0) {
		module_free(m);
		return -ENOEXEC;
	}
	*out = m;
	return 0;
}

static bool prot_matches(const struct segment *s, unsigned prot)
{
	return (s->flags & (PF_R | PF_W | PF_X)) == prot;
}

/*
 * Two segments can share a file page (the end of one, the start of the
 * next), so pgoff alone can match both: prefer the one whose permissions
 * are the mapping's.
 */
int module_bias(const struct module *m, uint64_t start, uint64_t pgoff, unsigned prot,
		uint64_t *bias)
{
	const struct segment *hit = NULL;

	for (size_t i = 0; i < m->nsegs; i++) {
		const struct segment *s = &m->segs[i];
		uint64_t page_off = s->off & ~(uint64_t)0xfff;

		if (pgoff < page_off || pgoff >= s->off + (s->filesz ? s->filesz : 1))
			continue;
		if (!hit || prot_matches(s, prot))
			hit = s;
	}
	if (!hit)
		return -ENOENT;
	/* The mapping puts file offset pgoff at start; the segment puts off at vaddr. */
	*bias = start - (hit->vaddr - hit->off + pgoff);
	return 0;
}

void module_free(struct module *m)
{
	if (!m)
		return;
	sym_free(m);
	make_stub(m);
	free(m->path);
	free(m);
}
