/* SPDX-License-Identifier: MIT */
/*
 * What every command of the `ditto` CLI shares: exit codes, the command
 * table type, error reporting in one format, option and number parsing,
 * loading a model file.
 */
#ifndef DITTO_CLI_H
#define DITTO_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ditto/ditto.h>

/* Exit codes: scripts tell a bad file from a bad command line. */
enum cli_exit {
	CLI_OK = 0,
	CLI_EINPUT = 1, /* unreadable or invalid file, models that do not merge */
	CLI_EUSAGE = 2, /* unknown command or option, missing arguments */
	/* ditto tune: the loop ran as asked and the clone is out of bounds
	 * (apart from 1, so a script tells a bad clone from a failure). */
	CLI_NOT_CONVERGED = 3,
	/* ditto load: the service failed the run (no connection, no request
	 * answered, or the deadline passed): apart from a bad command line.
	 * ditto profile, ditto clone: the window saw no traffic (or could not
	 * infer the network model); the model is written all the same, but it
	 * is not the service's (ditto_profile_gaps()). --allow-idle: 0. One
	 * code: each command has only one of the two. */
	CLI_LOAD_FAILED = 4,
	CLI_IDLE = 4,
};

/* A command or subcommand; run() gets argv[0] = its own name. */
struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

const struct cli_command *cli_find(const struct cli_command *cmds, size_t n, const char *name);
/* One "  name   summary" line per command. */
void cli_list(FILE *f, const struct cli_command *cmds, size_t n);
/* A command group (`ditto model`, `ditto graph`): --help prints usage,
 * else argv[optind] names the subcommand that runs with the rest. */
int cli_group(const char *cmd, void (*usage)(FILE *f), const struct cli_command *subs, size_t n,
	      int argc, char **argv);

/*
 * The library's message for a failure with code err, without a leading
 * "context: " the library may already have put there (ditto_model_load
 * prefixes the file name), so that callers can add their own.
 */
const char *cli_message(const char *context, int err);
/* Prints "ditto: context: message" to stderr and returns CLI_EINPUT. */
int cli_fail(const char *context, int err);
/* Prints "ditto: file: path: message" for a failure at a model path. */
int cli_fail_path(const char *file, const char *path, int err);
/* Prints "ditto: fmt..." to stderr and returns CLI_EINPUT. */
int cli_failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Usage errors of command cmd ("model diff"; "" for the top level): prints
 * "ditto: cmd: fmt..." and a pointer to its --help to stderr, returns
 * CLI_EUSAGE.
 */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports what getopt_long returned as '?' or ':' (see cli_getopt_start()). */
int cli_bad_option(const char *cmd, int c, char **argv);
/*
 * Prepare getopt_long for a new argument vector. Option strings must start
 * with ':' (after an optional '+') so that a missing argument returns ':'
 * and every message comes from cli_bad_option() in the CLI's own format.
 */
void cli_getopt_start(void);

/* Load a model file, reporting failures; CLI_OK or CLI_EINPUT. */
int cli_load(const char *path, bool validate, struct ditto_model **out);
/* Whether m is a graph (several services, or edges): synth and tune then
 * work on the graph tree. */
bool cli_model_is_graph(const struct ditto_model *m);

/* Whole-string number parsing; false on junk, sign or overflow. */
bool cli_parse_u64(const char *s, uint64_t *out);
bool cli_parse_f64(const char *s, double *out);
/* Shortest "%g" text that reads back as the same double. */
void cli_print_f64(FILE *f, double v);

#endif /* DITTO_CLI_H */
