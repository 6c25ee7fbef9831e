/* SPDX-License-Identifier: MIT */
/* `ditto model ...`: the group and its subcommands (argv[0] = own name). */
#ifndef DITTO_CMD_MODEL_H
#define DITTO_CMD_MODEL_H

int cmd_model(int argc, char **argv);

int cmd_model_show(int argc, char **argv);
int cmd_model_json(int argc, char **argv);
int cmd_model_get(int argc, char **argv);
int cmd_model_validate(int argc, char **argv);
int cmd_model_merge(int argc, char **argv);
int cmd_model_diff(int argc, char **argv);
int cmd_model_sample(int argc, char **argv);

#endif /* DITTO_CMD_MODEL_H */
