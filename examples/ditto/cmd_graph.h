/* SPDX-License-Identifier: MIT */
/* `ditto graph ...`: the group and its subcommands (argv[0] = own name). */
#ifndef DITTO_CMD_GRAPH_H
#define DITTO_CMD_GRAPH_H

int cmd_graph(int argc, char **argv);

int cmd_graph_import(int argc, char **argv);
int cmd_graph_dot(int argc, char **argv);
int cmd_graph_compare(int argc, char **argv);

#endif /* DITTO_CMD_GRAPH_H */
