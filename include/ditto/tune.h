/* SPDX-License-Identifier: MIT */
/*
 * Tune stage: load generation, measurement and the feedback loop that
 * brings a clone within bounds of its original.
 *
 * Nothing is declared here yet: the foundation release ships the model
 * (model.h) that this stage reads and writes. Later releases add the
 * ditto_tune_* functions to this header without changing existing ones.
 */
#ifndef DITTO_TUNE_H
#define DITTO_TUNE_H

#include <ditto/ditto.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* DITTO_TUNE_H */
