/* SPDX-License-Identifier: MIT */
/*
 * Synth stage: turn a model into a self-contained clone source tree.
 *
 * Nothing is declared here yet: the foundation release ships the model
 * (model.h) that this stage reads and writes. Later releases add the
 * ditto_synth_* functions to this header without changing existing ones.
 */
#ifndef DITTO_SYNTH_H
#define DITTO_SYNTH_H

#include <ditto/ditto.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* DITTO_SYNTH_H */
