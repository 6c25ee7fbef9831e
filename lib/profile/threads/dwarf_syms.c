/* SPDX-License-Identifier: MIT */
/*
 * Function names from DWARF (libdwarf), for modules that carry debug
 * information but no .symtab (stripped of symbols, not of .debug_info).
 * Names are copied: libdwarf's strings end with dwarf_finish().
 */
#include <stdlib.h>
#include <string.h>

#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>

#include "threads_int.h"

#define MAX_DEPTH 8	/* namespaces inside namespaces */

struct dwarf_walk {
	Dwarf_Debug dbg;
	dwarf_sym_fn add;
	void *ctx;
	int err;
};

static void add_subprogram(struct dwarf_walk *w, Dwarf_Die die)
{
	enum Dwarf_Form_Class cls;
	Dwarf_Addr lo, hi;
	Dwarf_Error e = NULL;
	Dwarf_Half form;
	char *name = NULL;

	if (dwarf_lowpc(die, &lo, &e) != DW_DLV_OK ||
	    dwarf_highpc_b(die, &hi, &form, &cls, &e) != DW_DLV_OK ||
	    dwarf_diename(die, &name, &e) != DW_DLV_OK || !name || !*name)
		return;
	/* DWARF 4 and later give high_pc as an offset from low_pc. */
	if (cls == DW_FORM_CLASS_CONSTANT)
		hi += lo;
	if (hi > lo)
		w->err = w->add(w->ctx, lo, hi - lo, name);
}

static void walk(struct dwarf_walk *w, Dwarf_Die parent, int depth)
{
	Dwarf_Die die = NULL, next;
	Dwarf_Error e = NULL;

	if (depth > MAX_DEPTH || dwarf_child(parent, &die, &e) != DW_DLV_OK)
		return;
	while (die && !w->err) {
		Dwarf_Half tag = 0;

		if (dwarf_tag(die, &tag, &e) == DW_DLV_OK) {
			if (tag == DW_TAG_subprogram)
				add_subprogram(w, die);
			else if (tag == DW_TAG_namespace)
				walk(w, die, depth + 1);
		}
		next = NULL;
		if (dwarf_siblingof_b(w->dbg, die, 1, &next, &e) != DW_DLV_OK)
			next = NULL;
		dwarf_dealloc_die(die);
		die = next;
	}
}

int dwarf_collect(int fd, dwarf_sym_fn add, void *ctx, bool *found)
{
	struct dwarf_walk w = { .add = add, .ctx = ctx };
	Dwarf_Error e = NULL;
	int res;

	*found = false;
	res = dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &w.dbg, &e);
	if (res != DW_DLV_OK) {
		/* An init error is allocated outside any handle: free it here. */
		if (res == DW_DLV_ERROR && e)
			dwarf_dealloc_error(NULL, e);
		return 0; /* no debug information: not an error */
	}
	for (;;) {
		Dwarf_Unsigned next = 0;
		Dwarf_Half cu_type = 0;
		Dwarf_Die cu = NULL;

		if (dwarf_next_cu_header_d(w.dbg, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
					   &next, &cu_type, &e) != DW_DLV_OK)
			break;
		if (dwarf_siblingof_b(w.dbg, NULL, 1, &cu, &e) != DW_DLV_OK)
			break;
		*found = true;
		walk(&w, cu, 0);
		dwarf_dealloc_die(cu);
		if (w.err)
			break;
	}
	dwarf_finish(w.dbg, &e);
	return w.err;
}
