/* SPDX-License-Identifier: MIT */
/*
 * Weighted ordered tree edit distance (Zhang-Shasha), in process. Costs:
 * delete or insert a node = its weight; rename = |w1 - w2| for equal labels,
 * w1 + w2 otherwise (as expensive as delete + insert). The artifact charged
 * 0 for equal labels whatever the weights, which put threads with the same
 * stacks and very different activity at distance 0.
 *
 * ZS costs O(n1 n2 min(depth, leaves)^2); call trees are deep and narrow,
 * so trees are pruned first (ted_tree_build) to keep a pair in milliseconds.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "threads_int.h"

#define TED_HARD_MAX 8192	/* n1 * n2 doubles must stay allocatable */

struct weighted_id {
	uint64_t w;
	uint32_t id;
};

static int heavier_first(const void *pa, const void *pb)
{
	const struct weighted_id *a = pa, *b = pb;

	if (a->w != b->w)
		return a->w < b->w ? 1 : -1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * Keep the top max_nodes of the kept nodes by (weight desc, index asc). A
 * parent weighs at least as much as its child and was created before it, so
 * the kept set stays a rooted subtree.
 */
static int cap_nodes(const struct calltree *t, uint32_t *newid, size_t k, size_t max_nodes)
{
	struct weighted_id *v = malloc(k * sizeof(*v));
	size_t j = 0;

	if (!v)
		return ditto_err(-ENOMEM, "threads: out of memory");
	for (size_t i = 0; i < t->n; i++)
		if (newid[i] != CT_NONE)
			v[j++] = (struct weighted_id){ t->v[i].weight, (uint32_t)i };
	qsort(v, k, sizeof(*v), heavier_first);
	for (size_t i = 0; i < t->n; i++)
		newid[i] = CT_NONE;
	for (size_t i = 0; i < max_nodes; i++)
		newid[v[i].id] = 0;
	free(v);
	return 0;
}

/* newid[i]: dense id of node i if kept (the subtree of root, whose nodes
 * come after it), CT_NONE otherwise; returns how many. */
static int select_nodes(const struct calltree *t, uint32_t root, double min_share,
			size_t max_nodes, uint32_t *newid, size_t *kept)
{
	double min_w = min_share * (double)t->v[root].weight;
	size_t k = 0;
	int err;

	for (size_t i = 0; i < t->n; i++) {
		const struct ctnode *c = &t->v[i];
		bool keep = i == root || (i > root && newid[c->parent] != CT_NONE && c->weight > 0 &&
					  (double)c->weight >= min_w);

		newid[i] = keep ? 0 : CT_NONE;
		k += keep;
	}
	if (k > max_nodes && (err = cap_nodes(t, newid, k, max_nodes)))
		return err;
	/* Renumber in creation order; a node whose parent was dropped goes too. */
	k = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (newid[i] == CT_NONE)
			continue;
		if (i > root && newid[t->v[i].parent] == CT_NONE)
			newid[i] = CT_NONE;
		else
			newid[i] = (uint32_t)k++;
	}
	*kept = k;
	return 0;
}

struct kept_tree {
	size_t n;
	uint32_t *orig;		/* kept id -> calltree node */
	uint32_t *first;	/* children of a: kids[first[a] .. first[a + 1]) */
	uint32_t *kids;
};

static void sort_kids(const struct calltree *t, struct kept_tree *k, const uint32_t *rank)
{
	/* Insertion sort: sibling lists are short. */
	for (size_t a = 0; a < k->n; a++) {
		uint32_t *s = k->kids + k->first[a];
		size_t len = k->first[a + 1] - k->first[a];

		for (size_t i = 1; i < len; i++) {
			uint32_t x = s[i];
			uint32_t rx = rank[t->v[k->orig[x]].label];
			size_t j = i;

			for (; j > 0 && rank[t->v[k->orig[s[j - 1]]].label] > rx; j--)
				s[j] = s[j - 1];
			s[j] = x;
		}
	}
}

static int link_kept(const struct calltree *t, const uint32_t *newid, struct kept_tree *k)
{
	size_t pos = 0;

	k->orig = malloc(k->n * sizeof(*k->orig));
	k->first = malloc((k->n + 1) * sizeof(*k->first));
	k->kids = malloc(k->n * sizeof(*k->kids));
	if (!k->orig || !k->first || !k->kids)
		return ditto_err(-ENOMEM, "threads: out of memory");
	for (size_t i = 0; i < t->n; i++)
		if (newid[i] != CT_NONE)
			k->orig[newid[i]] = (uint32_t)i;
	for (size_t a = 0; a < k->n; a++) {
		k->first[a] = (uint32_t)pos;
		for (uint32_t c = t->v[k->orig[a]].first_child; c != CT_NONE; c = t->v[c].next_sibling)
			if (newid[c] != CT_NONE)
				k->kids[pos++] = newid[c];
	}
	k->first[k->n] = (uint32_t)pos;
	return 0;
}

static int alloc_tree(struct ted_tree *o, size_t n)
{
	o->n = n;
	o->label = malloc(n * sizeof(*o->label));
	o->w = malloc(n * sizeof(*o->w));
	o->lml = malloc(n * sizeof(*o->lml));
	o->kr = malloc(n * sizeof(*o->kr));
	if (!o->label || !o->w || !o->lml || !o->kr)
		return ditto_err(-ENOMEM, "threads: out of memory");
	return 0;
}

/* Keyroots: the highest node of each distinct leftmost leaf, ascending. */
static int find_keyroots(struct ted_tree *o)
{
	bool *seen = calloc(o->n, sizeof(*seen));

	if (!seen)
		return ditto_err(-ENOMEM, "threads: out of memory");
	o->nkr = 0;
	for (size_t i = o->n; i-- > 0;) {
		if (!seen[o->lml[i]]) {
			seen[o->lml[i]] = true;
			o->kr[o->nkr++] = (uint32_t)i;
		}
	}
	for (size_t i = 0; i < o->nkr / 2; i++) {
		uint32_t x = o->kr[i];

		o->kr[i] = o->kr[o->nkr - 1 - i];
		o->kr[o->nkr - 1 - i] = x;
	}
	free(seen);
	return 0;
}

static int postorder(const struct calltree *t, const struct kept_tree *k, struct ted_tree *o)
{
	struct frame {
		uint32_t a, next;
	} *stk = malloc(k->n * sizeof(*stk));
	uint32_t *post = malloc(k->n * sizeof(*post));
	size_t sp = 0, out = 0;
	int err = -ENOMEM;

	if (!stk || !post) {
		err = ditto_err(-ENOMEM, "threads: out of memory");
		goto done;
	}
	stk[sp++] = (struct frame){ 0, 0 };
	while (sp) {
		struct frame *f = &stk[sp - 1];
		uint32_t a = f->a, nkids = k->first[a + 1] - k->first[a];

		if (f->next < nkids) {
			stk[sp++] = (struct frame){ k->kids[k->first[a] + f->next++], 0 };
			continue;
		}
		post[a] = (uint32_t)out;
		o->label[out] = t->v[k->orig[a]].label;
		o->w[out] = (double)t->v[k->orig[a]].weight;
		o->lml[out] = nkids ? o->lml[post[k->kids[k->first[a]]]] : (uint32_t)out;
		o->total += o->w[out];
		out++;
		sp--;
	}
	err = find_keyroots(o);
done:
	free(stk);
	free(post);
	return err;
}

static int empty_tree(struct ted_tree *o)
{
	int err = alloc_tree(o, 1);

	if (err)
		return err;
	o->label[0] = CT_NONE;
	o->w[0] = 0;
	o->lml[0] = 0;
	o->kr[0] = 0;
	o->nkr = 1;
	return 0;
}

static int build_kept(const struct calltree *t, const uint32_t *rank, const uint32_t *newid,
		      size_t n, struct ted_tree *o)
{
	struct kept_tree k = { .n = n };
	int err = link_kept(t, newid, &k);

	if (!err && rank)
		sort_kids(t, &k, rank);
	if (!err)
		err = alloc_tree(o, n);
	if (!err)
		err = postorder(t, &k, o);
	free(k.orig);
	free(k.first);
	free(k.kids);
	return err;
}

/* Down the heaviest children from the root (excluded) while a node holds
 * share of the root's samples: path[0..return). */
static size_t heavy_path(const struct calltree *t, double share, uint32_t *path, size_t max)
{
	double min_w = share * (double)t->v[0].weight;
	uint32_t at = 0;
	size_t n = 0;

	while (n < max) {
		uint32_t heavy = CT_NONE;

		for (uint32_t c = t->v[at].first_child; c != CT_NONE; c = t->v[c].next_sibling)
			if (heavy == CT_NONE || t->v[c].weight > t->v[heavy].weight)
				heavy = c;
		if (heavy == CT_NONE || (double)t->v[heavy].weight < min_w)
			break;
		path[n++] = at = heavy;
	}
	return n;
}

void calltree_common_roots(const struct calltree *a, const struct calltree *b, double share,
			   uint32_t *ra, uint32_t *rb)
{
	uint32_t pa[TED_TRUNK_MAX], pb[TED_TRUNK_MAX];
	size_t na, nb;

	*ra = *rb = 0;
	if (!a || !b || !a->n || !b->n)
		return;
	na = heavy_path(a, share, pa, TED_TRUNK_MAX);
	nb = heavy_path(b, share, pb, TED_TRUNK_MAX);
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			if (a->v[pa[i]].label == b->v[pb[j]].label) {
				*ra = pa[i];
				*rb = pb[j];
				return;
			}
}

int ted_tree_build(const struct calltree *t, const uint32_t *rank, double min_share,
		   size_t max_nodes, struct ted_tree *out)
{
	return ted_tree_build_at(t, 0, rank, min_share, max_nodes, out);
}

int ted_tree_build_at(const struct calltree *t, uint32_t root, const uint32_t *rank,
		      double min_share, size_t max_nodes, struct ted_tree *out)
{
	uint32_t *newid;
	size_t n;
	int err;

	*out = (struct ted_tree){ 0 };
	if (!t || !t->n || root >= t->n || !t->v[root].weight)
		return empty_tree(out);
	if (max_nodes < 1 || max_nodes > TED_HARD_MAX)
		max_nodes = TED_HARD_MAX;
	newid = malloc(t->n * sizeof(*newid));
	if (!newid)
		return ditto_err(-ENOMEM, "threads: out of memory");
	err = select_nodes(t, root, min_share, max_nodes, newid, &n);
	if (!err)
		err = build_kept(t, rank, newid, n, out);
	free(newid);
	if (err)
		ted_tree_free(out);
	return err;
}

void ted_tree_normalise(struct ted_tree *t)
{
	double root = t->n ? t->w[t->n - 1] : 0;

	if (root <= 0)
		return;
	t->total = 0;
	for (size_t i = 0; i < t->n; i++) {
		t->w[i] /= root;
		t->total += t->w[i];
	}
}

static double rename_cost(const struct ted_tree *a, size_t i, const struct ted_tree *b, size_t j)
{
	if (a->label[i] == b->label[j])
		return fabs(a->w[i] - b->w[j]);
	return a->w[i] + b->w[j];
}

static double min3(double x, double y, double z)
{
	double m = x < y ? x : y;

	return m < z ? m : z;
}

/* Forest distances between the subtrees rooted at keyroots i and j; fills td. */
static void forest_dist(const struct ted_tree *a, const struct ted_tree *b, size_t i, size_t j,
			double *td, double *fd)
{
	size_t li = a->lml[i], lj = b->lml[j];
	size_t rows = i - li + 2, cols = j - lj + 2, n2 = b->n;

	fd[0] = 0;
	for (size_t x = 1; x < rows; x++)
		fd[x * cols] = fd[(x - 1) * cols] + a->w[li + x - 1];
	for (size_t y = 1; y < cols; y++)
		fd[y] = fd[y - 1] + b->w[lj + y - 1];
	for (size_t x = 1; x < rows; x++) {
		size_t i1 = li + x - 1, li1 = a->lml[i1];
		double wi = a->w[i1];
		double *row = fd + x * cols, *up = row - cols;

		for (size_t y = 1; y < cols; y++) {
			size_t j1 = lj + y - 1, lj1 = b->lml[j1];
			double del = up[y] + wi, ins = row[y - 1] + b->w[j1];

			if (li1 == li && lj1 == lj) {
				row[y] = min3(del, ins, up[y - 1] + rename_cost(a, i1, b, j1));
				td[i1 * n2 + j1] = row[y];
			} else {
				double sub = fd[(li1 - li) * cols + (lj1 - lj)] + td[i1 * n2 + j1];

				row[y] = min3(del, ins, sub);
			}
		}
	}
}

int ted_distance(const struct ted_tree *a, const struct ted_tree *b, double *raw, double *norm)
{
	double *td, *fd, d;

	if (!a->n || !b->n || a->n > TED_HARD_MAX || b->n > TED_HARD_MAX)
		return ditto_err(-EINVAL, "threads: tree of %zu/%zu nodes for the edit distance",
				 a->n, b->n);
	td = malloc(a->n * b->n * sizeof(*td));
	fd = malloc((a->n + 1) * (b->n + 1) * sizeof(*fd));
	if (!td || !fd) {
		free(td);
		free(fd);
		return ditto_err(-ENOMEM, "threads: out of memory");
	}
	for (size_t x = 0; x < a->nkr; x++)
		for (size_t y = 0; y < b->nkr; y++)
			forest_dist(a, b, a->kr[x], b->kr[y], td, fd);
	d = td[a->n * b->n - 1];
	free(td);
	free(fd);
	if (raw)
		*raw = d;
	if (norm)
		*norm = a->total + b->total > 0 ? d / (a->total + b->total) : 0;
	return 0;
}

void ted_tree_free(struct ted_tree *t)
{
	free(t->label);
	free(t->w);
	free(t->lml);
	free(t->kr);
	*t = (struct ted_tree){ 0 };
}
