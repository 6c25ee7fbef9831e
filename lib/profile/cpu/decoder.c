/* SPDX-License-Identifier: MIT */
/*
 * Decode cache: code is read from the target's memory (process_vm_readv,
 * so binaries in other mount namespaces need no path) and decoded once per
 * address. Code in writable or anonymous executable mappings (JIT,
 * self-modifying code) is decoded afresh on every execution.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "core_int.h"
#include "cpu_int.h"

struct exec_map {
	uint64_t lo, hi;
	bool jit;
};

struct decoder {
	pid_t pid;
	struct insn_classifier *cls;
	cs_insn *ci;
	struct insn *slots;	/* open addressing on addr; addr 0 = empty */
	size_t cap, used;
	struct keytab *kt;
	struct exec_map *maps;
	size_t nmaps;
	struct insn scratch;	/* JIT code and undecodable bytes */
};

static int load_maps(struct decoder *d)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)d->pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	d->nmaps = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, inode;
		char perms[8], dev[16];
		int name = 0;
		struct exec_map *m;

		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %n", &lo, &hi, perms, &off, dev, &inode,
			   &name) < 6 || perms[2] != 'x')
			continue;
		m = realloc(d->maps, (d->nmaps + 1) * sizeof(*m));
		if (!m)
			break;
		d->maps = m;
		/* [vdso] and [vsyscall] are anonymous but fixed code. */
		m[d->nmaps++] = (struct exec_map){ lo, hi, perms[1] == 'w' ||
						   (inode == 0 && line[name] != '[') };
	}
	fclose(f);
	return 0;
}

static const struct exec_map *find_map(const struct decoder *d, uint64_t addr)
{
	for (size_t i = 0; i < d->nmaps; i++)
		if (addr >= d->maps[i].lo && addr < d->maps[i].hi)
			return &d->maps[i];
	return NULL;
}

/* Whether addr lies in JIT or self-modifiable code; maps reread on a miss. */
static bool is_jit(struct decoder *d, uint64_t addr)
{
	const struct exec_map *m = find_map(d, addr);

	if (!m && load_maps(d) == 0)
		m = find_map(d, addr);
	return m ? m->jit : false;
}

struct keytab {
	char **keys;
	size_t n, cap;
};

struct keytab *keytab_new(void)
{
	return calloc(1, sizeof(struct keytab));
}

void keytab_free(struct keytab *kt)
{
	if (!kt)
		return;
	for (size_t i = 0; i < kt->n; i++)
		free(kt->keys[i]);
	free(kt->keys);
	free(kt);
}

const char *keytab_key(const struct keytab *kt, size_t i)
{
	return i < kt->n ? kt->keys[i] : NULL;
}

static int intern_key(struct keytab *kt, const char *key)
{
	for (size_t i = 0; i < kt->n; i++)
		if (!strcmp(kt->keys[i], key))
			return (int)i;
	if (kt->n == kt->cap) {
		size_t cap = kt->cap ? kt->cap * 2 : 64;
		char **k = realloc(kt->keys, cap * sizeof(*k));

		if (!k)
			return -1;
		kt->keys = k;
		kt->cap = cap;
	}
	if (!(kt->keys[kt->n] = strdup(key)))
		return -1;
	return (int)kt->n++;
}

static bool grow(struct decoder *d)
{
	size_t cap = d->cap ? d->cap * 2 : 4096;
	struct insn *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return false;
	for (size_t i = 0; i < d->cap; i++) {
		size_t j;

		if (!d->slots[i].addr)
			continue;
		for (j = cpu_hash64(d->slots[i].addr) & (cap - 1); slots[j].addr; j = (j + 1) & (cap - 1))
			;
		slots[j] = d->slots[i];
	}
	free(d->slots);
	d->slots = slots;
	d->cap = cap;
	return true;
}

/* Decode into *out; false when the bytes do not decode. */
static bool decode(struct decoder *d, uint64_t addr, struct insn *out)
{
	uint8_t code[16];
	struct iovec local = { code, sizeof(code) }, remote = { (void *)(uintptr_t)addr, sizeof(code) };
	ssize_t n = process_vm_readv(d->pid, &local, 1, &remote, 1, 0);
	const uint8_t *p = code;
	size_t left = n > 0 ? (size_t)n : 0;
	uint64_t a = addr;
	char key[64];
	int k;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	out->len = 1;
	out->undecoded = true;
	if (!left || !cs_disasm_iter(insn_classifier_handle(d->cls), &p, &left, &a, d->ci))
		return false;
	insn_classify(d->cls, d->ci, out, key, sizeof(key));
	if ((k = intern_key(d->kt, key)) < 0)
		return false;
	out->cls = (uint16_t)k;
	return true;
}

const struct insn *decoder_get(struct decoder *d, uint64_t addr)
{
	size_t j;

	if (d->cap && addr) {
		for (j = cpu_hash64(addr) & (d->cap - 1); d->slots[j].addr; j = (j + 1) & (d->cap - 1))
			if (d->slots[j].addr == addr)
				return &d->slots[j];
	}
	if (!addr || is_jit(d, addr)) {
		decode(d, addr, &d->scratch);
		d->scratch.jit = addr != 0;
		return &d->scratch;
	}
	if (!decode(d, addr, &d->scratch))
		return &d->scratch;	/* retried next time: the page may appear */
	if ((d->used + 1) * 2 > d->cap && !grow(d))
		return &d->scratch;
	for (j = cpu_hash64(addr) & (d->cap - 1); d->slots[j].addr; j = (j + 1) & (d->cap - 1))
		;
	d->slots[j] = d->scratch;
	d->used++;
	return &d->slots[j];
}

const struct insn_classifier *decoder_classifier(const struct decoder *d)
{
	return d->cls;
}

int decoder_new(pid_t pid, struct keytab *kt, struct decoder **out)
{
	struct decoder *d = calloc(1, sizeof(*d));
	int err;

	*out = NULL;
	if (!d)
		return ditto_err(-ENOMEM, "out of memory");
	d->pid = pid;
	d->kt = kt;
	if ((err = insn_classifier_new(&d->cls)))
		goto fail;
	if (!(d->ci = cs_malloc(insn_classifier_handle(d->cls))) || !grow(d)) {
		err = ditto_err(-ENOMEM, "out of memory");
		goto fail;
	}
	if ((err = load_maps(d))) {
		/* Readable under the same rule as ptrace: say which. */
		if (err == -EACCES || err == -EPERM)
			err = ptrace_perm_error(pid, -EPERM);
		else
			err = ditto_err(err, "cannot read /proc/%d/maps: %s", (int)pid,
					strerror(-err));
		goto fail;
	}
	*out = d;
	return 0;
fail:
	decoder_free(d);
	return err;
}

void decoder_free(struct decoder *d)
{
	if (!d)
		return;
	if (d->ci)
		cs_free(d->ci, 1);
	insn_classifier_free(d->cls);
	free(d->slots);
	free(d->maps);
	free(d);
}
