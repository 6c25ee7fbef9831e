/* SPDX-License-Identifier: MIT */
/*
 * Profile stage: collectors that fill a model from a live service (syscalls via eBPF,
 * thread model via perf sampling, network model, CPU via ptrace + Capstone).
 *
 * Nothing is declared here yet: the foundation release ships the model
 * (model.h) that this stage reads and writes. Later releases add the
 * ditto_profile_* functions to this header without changing existing ones.
 */
#ifndef DITTO_PROFILE_H
#define DITTO_PROFILE_H

#include <ditto/ditto.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* DITTO_PROFILE_H */
