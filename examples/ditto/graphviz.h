/* SPDX-License-Identifier: MIT */
/* Running Graphviz's `dot` on DOT text (graphviz.c). */
#ifndef DITTO_GRAPHVIZ_H
#define DITTO_GRAPHVIZ_H

/*
 * Render dot_text as SVG into svg_path with `dot -Tsvg` found on PATH,
 * run by fork/exec (no shell: the path is an argument, never parsed).
 * The SVG appears whole or not at all (written beside it, then renamed).
 * CLI_OK, or CLI_EINPUT after a message on stderr (dot missing, failed
 * or killed).
 */
int graphviz_svg(const char *dot_text, const char *svg_path);

#endif /* DITTO_GRAPHVIZ_H */
