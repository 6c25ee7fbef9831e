/* SPDX-License-Identifier: MIT */
/* `ditto load` (drive a service), `ditto measure` (measure a service
 * command under load) and `ditto tune` (the feedback loop). */
#ifndef DITTO_CMD_TUNE_H
#define DITTO_CMD_TUNE_H

int cmd_load(int argc, char **argv);
int cmd_measure(int argc, char **argv);
int cmd_tune(int argc, char **argv);

#endif
