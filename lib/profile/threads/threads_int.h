/* SPDX-License-Identifier: MIT */
/* Shared declarations of lib/profile/threads: one section per source file. */
#ifndef DITTO_THREADS_INT_H
#define DITTO_THREADS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libunwind.h>
#include <gelf.h>

#include "core_int.h"
#include "threads.h"

/* --- labels.c: interned frame labels, ids dense from 0 --- */
struct labels {
	char **str;
	size_t n, cap;
	uint32_t *slots;	/* hash slots holding ids, IDMAP_EMPTY when free */
	size_t nslots;
};
int labels_intern(struct labels *l, const char *s, uint32_t *id);
const char *labels_str(const struct labels *l, uint32_t id);
/* rank[id] = position of the label in strcmp order; caller frees. */
int labels_rank(const struct labels *l, uint32_t **rank);
void labels_free(struct labels *l);

/* --- calltree.c: per-thread weighted prefix tree; node 0 is the root --- */
#define CT_NONE UINT32_MAX
struct ctnode {
	uint64_t weight;	/* inclusive: samples whose path passes here */
	uint32_t label;
	uint32_t parent, first_child, last_child, next_sibling;
};
struct calltree {
	struct ctnode *v;
	size_t n, cap;
	struct idmap kids;	/* (parent << 32 | label) -> child */
};
int calltree_init(struct calltree *t, uint32_t root_label);
/* Add a sample of weight w along path[0..len) (outermost frame first). */
int calltree_add(struct calltree *t, const uint32_t *path, size_t len, uint64_t w);
void calltree_free(struct calltree *t);

/* --- tree_distance.c: weighted Zhang-Shasha tree edit distance --- */
#define TED_MIN_SHARE 0.01
#define TED_MAX_NODES 256
struct ted_tree {
	size_t n;		/* nodes, in postorder */
	uint32_t *label;
	double *w;
	uint32_t *lml;		/* leftmost leaf of each node's subtree */
	uint32_t *kr;		/* keyroots, ascending */
	size_t nkr;
	double total;		/* sum of w */
};
/*
 * Postorder form of t keeping nodes with >= min_share of the root's weight,
 * at most max_nodes of them (the heaviest), siblings sorted by rank[label]
 * when rank is not NULL (else first-seen order). t NULL: an empty tree.
 */
int ted_tree_build(const struct calltree *t, const uint32_t *rank, double min_share,
		   size_t max_nodes, struct ted_tree *out);
/* Weights as shares of the root's (the samples through the tree's root);
 * empty trees stay. */
void ted_tree_normalise(struct ted_tree *t);
/* ted_tree_build of the subtree at node root (0: the whole tree). */
int ted_tree_build_at(const struct calltree *t, uint32_t root, const uint32_t *rank,
		      double min_share, size_t max_nodes, struct ted_tree *out);
/* Where two threads' trees are compared by shape: the first frame, down
 * each tree's heaviest children from the root, that both have among the
 * frames holding share of their samples (*ra in a, *rb in b). Above it
 * are frames one thread passed through and the other not, such as how it
 * was started (main() or start_thread() before a common loop). Trees with
 * no such frame: both roots (0). */
#define TED_TRUNK_MAX 64
void calltree_common_roots(const struct calltree *a, const struct calltree *b, double share,
			   uint32_t *ra, uint32_t *rb);
/* raw TED and TED / (total(a) + total(b)); either pointer may be NULL. */
int ted_distance(const struct ted_tree *a, const struct ted_tree *b, double *raw, double *norm);
void ted_tree_free(struct ted_tree *t);

/* --- cluster.c: average-linkage agglomerative clustering --- */
/* d: n*n symmetric distances. Merge while the nearest pair is < threshold. */
int cluster_average(const double *d, size_t n, double threshold, int *class_of,
		    size_t *nclasses);

/* --- modules.c: ELF files (and the vDSO) as mapped into traced processes --- */
struct segment {
	uint64_t vaddr, memsz, off, filesz;
	uint32_t flags;		/* PF_R | PF_W | PF_X */
};
struct sym {
	uint64_t start, size;
	const char *name;	/* points into the module's ELF string tables */
};
struct module {
	char *path;
	const char *base;	/* basename of path, for "module+0x..." labels */
	uint64_t dev, ino;
	int fd;
	Elf *elf;
	const uint8_t *image;	/* whole file, read-only */
	size_t size;
	uint8_t *owned;		/* image copy we allocated (vDSO) */
	struct segment *segs;
	size_t nsegs;
	uint64_t lo, hi;	/* vaddr extent of the PT_LOAD segments */
	uint64_t entry;
	/* .eh_frame_hdr binary search table (DW_EH_PE_datarel|sdata4 pairs) */
	bool has_table;
	uint64_t hdr_vaddr, table_vaddr, table_off, fde_count;
	char build_id[41];
	/* symbols.c, loaded on first lookup */
	bool syms_loaded;
	struct sym *syms;
	size_t nsyms;
	uint32_t *sym_label;	/* label id per symbol, IDMAP_EMPTY until used */
	struct idmap anon_label; /* function start vaddr -> label, unnamed code */
	int dbg_fd;
	Elf *dbg_elf;		/* separate debug file holding .symtab, if found */
	char **dwarf_names;	/* names copied from DWARF (dwarf_syms.c) */
	size_t ndwarf_names;
};
/*
 * Open path (reading it through open_path). A file that cannot be read
 * still gives a module, with image NULL, so that it is not retried; only
 * running out of memory fails.
 */
int module_open(const char *path, const char *open_path, uint64_t dev, uint64_t ino,
		struct module **out);
int module_open_vdso(struct module **out);
/* Load bias of a mapping of file offset pgoff at address start with PF_* prot. */
int module_bias(const struct module *m, uint64_t start, uint64_t pgoff, unsigned prot,
		uint64_t *bias);
void module_free(struct module *m);

/* --- symbols.c: frame labels for module-relative addresses --- */
/* Label of code at vaddr: symbol name, else "module+0x<function start>". */
int sym_label(struct labels *l, struct module *m, uint64_t vaddr, uint32_t *id);
void sym_free(struct module *m);

/* --- procs.c: traced processes: their mappings and memory --- */
struct mapping {
	uint64_t start, end, pgoff, bias;
	uint64_t dev, ino;
	char *path;		/* NULL for anonymous memory */
	struct module *mod;	/* resolved on first use */
	unsigned prot;		/* PF_R | PF_W | PF_X */
	bool resolved;
};
struct proc {
	int tgid;
	int memfd;		/* /proc/PID/mem, -1 when not open */
	struct mapping *maps;
	size_t nmaps;
	size_t last;		/* index of the last mapping hit */
	unw_addr_space_t as;
	unsigned reread_gen;	/* drain pass of the last maps re-read */
	bool flush;		/* maps changed: flush libunwind's cache after this unwind */
	bool exec;		/* it ran execve: re-read maps before the next unwind */
	bool gone;		/* maps could not be read: the process has exited */
};
struct modcache {
	struct module **v;
	size_t n, cap;
	struct module *vdso;
	bool vdso_failed;
};
int proc_new(int tgid, unw_accessors_t *acc, struct proc **out);
int proc_load_maps(struct proc *p);
struct mapping *proc_find(struct proc *p, uint64_t addr);
/* The mapping's module with its bias, NULL for anonymous or unreadable ones. */
struct module *proc_module(struct modcache *mc, struct proc *p, struct mapping *m);
int proc_read(struct proc *p, uint64_t addr, void *buf, size_t n);
void proc_free(struct proc *p);
void modcache_free(struct modcache *mc);

/* --- sampler.c: per-CPU perf events and their rings --- */
/* Positions of the registers in a sample's user regs (perf's bit order). */
enum sreg {
	SR_AX, SR_BX, SR_CX, SR_DX, SR_SI, SR_DI, SR_BP, SR_SP, SR_IP,
	SR_R8, SR_R9, SR_R10, SR_R11, SR_R12, SR_R13, SR_R14, SR_R15, SR_COUNT
};
struct sample {
	int tgid, tid;
	uint64_t time;		/* CLOCK_MONOTONIC ns */
	bool kernel;		/* taken while the thread ran in the kernel */
	const uint64_t *regs;	/* SR_COUNT user registers */
	const uint8_t *stack;	/* copy of the user stack from regs[SR_SP] */
	uint64_t stack_len;
};
struct perf_ring {
	int fd;
	int cpu;
	uint8_t *base;		/* control page, then data_size bytes of ring */
	size_t len;
	size_t data_size;
};
struct perf_sampler {
	struct perf_ring *rings;
	size_t nrings;
	int epfd;
	uint8_t *bounce;	/* records that wrap the ring's end are copied here */
	uint64_t read, lost;
	bool exclude_kernel;
};
struct perf_handlers {
	int (*sample)(void *arg, const struct sample *s);
	void (*exec)(void *arg, int tgid);	/* tgid replaced its program: maps are stale */
	void *arg;
};
int perf_sampler_open(struct perf_sampler *ps, int hz);
int perf_sampler_read(struct perf_sampler *ps, const struct perf_handlers *h);
void perf_sampler_disable(struct perf_sampler *ps);
void perf_sampler_close(struct perf_sampler *ps);

/* --- perf_check.c: why perf sampling is refused, in words --- */
int perf_check_access(int hz);
int perf_open_error(int err, int cpu, int hz);

/* --- unwind.c: libunwind remote unwinding of a sample's stack copy --- */
struct unwinder {
	unw_accessors_t acc;
	struct proc **procs;
	size_t nprocs, cap;
	struct idmap by_tgid;
	struct modcache mods;
	struct labels *labels;
	unsigned gen;		/* drain pass, bounds maps re-reads */
	uint64_t maps_reads;
};
struct unwound {
	uint32_t label[THREAD_SAMPLER_MAX_FRAMES];	/* innermost first */
	size_t n;
	bool complete;		/* stopped where the CFI says the stack ends */
	bool named_end;		/* and the outermost frame has a known name */
};
void unwinder_init(struct unwinder *u, struct labels *labels);
void unwinder_new_pass(struct unwinder *u);
void unwinder_exec(struct unwinder *u, int tgid);
int unwind_sample(struct unwinder *u, const struct sample *s, struct unwound *out);
/* Release processes and modules (fds, mappings); labels stay. */
void unwinder_fini(struct unwinder *u);

/* dwarf_syms.c: add(ctx, start, size, name) for every DWARF subprogram of
 * the module open on fd; *found when it has DWARF at all. */
typedef int (*dwarf_sym_fn)(void *ctx, uint64_t start, uint64_t size, const char *name);
int dwarf_collect(int fd, dwarf_sym_fn add, void *ctx, bool *found);

#endif /* DITTO_THREADS_INT_H */
