# SPDX-License-Identifier: MIT
"""Loading of libditto and the ctypes declarations of the C functions used.

The library is found through the environment variable DITTO_LIBRARY (a path)
when it is set, else where meson installed it along with this package, else
as ``libditto.so.0`` through the dynamic loader (LD_LIBRARY_PATH, ldconfig:
how a package installed with pip finds it).
Every function the package calls is declared here with its argument and
result types; nothing else in the package calls a C function undeclared.
"""

import ctypes
import ctypes.util
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_bool, c_char_p, c_double,
                    c_int, c_int64, c_size_t, c_uint, c_uint16, c_uint64,
                    c_void_p)

SONAME = 'libditto.so.0'

# Error codes of ditto.h (returned negated).
ECORRUPT = 4000
ESCHEMA = 4001
EINVALID = 4002
ELIMIT = 4003
EMISMATCH = 4004
ENOTFOUND = 4005
ETYPE = 4006
EOPTS = 4007
EBUILD = 4008

# enum ditto_hist_kind
HIST_LOG2 = 1
HIST_EXACT = 2
HIST_LOGLIN = 3

# enum ditto_value_type
VALUE_NIL = 1
VALUE_BOOL = 2
VALUE_INT = 3
VALUE_UINT = 4
VALUE_FLOAT = 5
VALUE_STRING = 6
VALUE_BINARY = 7
VALUE_ARRAY = 8
VALUE_MAP = 9
VALUE_HIST = 10

# enum ditto_metric_kind
METRIC_SCALAR = 1
METRIC_DISTRIBUTION = 2
METRIC_ONLY_A = 3
METRIC_ONLY_B = 4


# --- options structs: same layout as the C ones (the trailing `size_t :0`
# --- only rounds the size up to the alignment ctypes gives them anyway) ---

class JsonOpts(Structure):
    _fields_ = [('sz', c_size_t), ('pretty', c_bool)]


class LoadOpts(Structure):
    _fields_ = [('sz', c_size_t), ('max_bytes', c_size_t),
                ('max_depth', c_uint), ('no_validate', c_bool)]


# typedef void (*ditto_problem_fn)(const char *path, const char *msg, void *user);
PROBLEM_FN = CFUNCTYPE(None, c_char_p, c_char_p, c_void_p)


class Sockopt(Structure):
    """struct ditto_sockopt (model.h)."""
    _fields_ = [('level', c_uint64), ('name', c_uint64), ('value', c_uint64),
                ('connections', c_uint64), ('calls', c_uint64)]


class ValidateOpts(Structure):
    _fields_ = [('sz', c_size_t), ('problem', PROBLEM_FN), ('user', c_void_p),
                ('warning', PROBLEM_FN)]


class CompareOpts(Structure):
    _fields_ = [('sz', c_size_t), ('min_error', c_double)]


class DotOpts(Structure):
    _fields_ = [('sz', c_size_t), ('sources', c_uint)]


# typedef void (*ditto_progress_fn)(double elapsed_s, double duration_s,
#                                   uint64_t syscalls, uint64_t requests, void *user);
PROGRESS_FN = CFUNCTYPE(None, c_double, c_double, c_uint64, c_uint64, c_void_p)


class ProfileOpts(Structure):
    _fields_ = [('sz', c_size_t), ('duration_s', c_double), ('service_name', c_char_p),
                ('requests', c_uint64), ('sample_hz', c_int), ('progress', PROGRESS_FN),
                ('user', c_void_p), ('cpu_windows', c_int), ('cpu_window_insts', c_uint64),
                ('cpu_spacing_s', c_double), ('cpu_step_mode', c_int),
                ('keep_launched', c_bool), ('launch_grace_s', c_double), ('graph', c_bool)]


class DiscoverOpts(Structure):
    _fields_ = [('sz', c_size_t), ('cgroup', c_char_p), ('ports', POINTER(ctypes.c_uint16)),
                ('nports', c_size_t)]


class CpuOpts(Structure):
    _fields_ = [('sz', c_size_t), ('windows', c_uint), ('window_insts', c_uint64),
                ('spacing_s', c_double), ('window_timeout_s', c_double),
                ('stop', POINTER(c_int)), ('step_mode', c_int)]


class TraceOpts(Structure):
    _fields_ = [('sz', c_size_t), ('format', c_int), ('uncorrected', c_bool),
                ('max_spans', c_size_t), ('max_file_bytes', c_size_t)]


class OtlpOpts(Structure):
    _fields_ = [('sz', c_size_t), ('max_body', c_size_t), ('max_buffered', c_size_t),
                ('max_connections', c_uint), ('timeout_s', c_double), ('max_spans', c_size_t),
                ('allow_remote', c_bool)]


OTLP_STAT_NAMES = ('connections', 'requests', 'accepted', 'spans', 'spans_rejected',
                   'bad_request', 'not_found', 'bad_method', 'length_required', 'too_large',
                   'bad_media_type', 'head_too_large', 'busy', 'timeouts')


class OtlpStats(Structure):
    _fields_ = [('sz', c_size_t)] + [(n, c_uint64) for n in OTLP_STAT_NAMES]


class SynthOpts(Structure):
    _fields_ = [('sz', c_size_t), ('service', c_char_p), ('seed', c_uint64), ('port', c_uint),
                ('force', c_bool), ('no_clamp', c_bool), ('knobs', c_void_p)]


class BuildOpts(Structure):
    _fields_ = [('sz', c_size_t), ('cc', c_char_p), ('static_link', c_bool),
                ('cache_dir', c_char_p)]


class DeployOpts(Structure):
    _fields_ = [('sz', c_size_t), ('targets', c_uint), ('k8s_namespace', c_char_p),
                ('image_prefix', c_char_p), ('build', c_bool)]


class SynthGraphOpts(Structure):
    _fields_ = [('sz', c_size_t), ('seed', c_uint64), ('force', c_bool), ('no_clamp', c_bool),
                ('knobs', c_void_p), ('keep', POINTER(c_char_p)), ('keep_count', c_size_t)]


class SynthUpOpts(Structure):
    _fields_ = [('sz', c_size_t), ('port_base', c_uint), ('max_seconds', c_double),
                ('ready_timeout_s', c_double), ('grace_s', c_double)]


# tune: load generator
class LoadgenOpts(Structure):
    _fields_ = [('sz', c_size_t), ('host', c_char_p), ('port', c_uint), ('framing', c_uint),
                ('mode', c_int), ('qps', c_double), ('connections', c_uint),
                ('duration_s', c_double), ('requests', c_uint64), ('warmup_s', c_double),
                ('value_bytes', c_uint64), ('write_share', c_double), ('model', c_void_p),
                ('service', c_char_p), ('seed', c_uint64), ('timeout_s', c_double),
                ('stop', POINTER(c_int)), ('deadline_s', c_double), ('http_path', c_char_p)]


# tune: measurement
BACKEND_CACHEGRIND = 1 << 0
BACKEND_PROFILE = 1 << 1
BACKEND_COUNTERS = 1 << 2
BACKEND_CPU = 1 << 3


class MeasureOpts(Structure):
    _fields_ = [('sz', c_size_t), ('backends', c_uint), ('argv', POINTER(c_char_p)),
                ('load', POINTER(LoadgenOpts)), ('startup_timeout_s', c_double),
                ('work_dir', c_char_p), ('stop', POINTER(c_int))]


# tune: feedback loop
# typedef void (*ditto_tune_progress_fn)(unsigned iteration, double max_error,
#     const char *worst, bool best, const char *note, void *user);
TUNE_PROGRESS_FN = CFUNCTYPE(None, c_uint, c_double, c_char_p, c_bool, c_char_p, c_void_p)


class TuneOpts(Structure):
    _fields_ = [('sz', c_size_t), ('dir', c_char_p), ('service', c_char_p),
                ('original_argv', POINTER(c_char_p)), ('original_port', c_uint),
                ('port', c_uint), ('max_iterations', c_uint), ('bound', c_double),
                ('requests', c_uint64), ('connections', c_uint), ('latency', c_bool),
                ('latency_s', c_double), ('seed', c_uint64), ('cc', c_char_p),
                ('progress', TUNE_PROGRESS_FN), ('user', c_void_p), ('stop', POINTER(c_int))]


class TuneGraphOpts(Structure):
    _fields_ = [('sz', c_size_t), ('dir', c_char_p), ('original_argv', POINTER(c_char_p)),
                ('original_port', c_uint), ('max_iterations', c_uint), ('bound', c_double),
                ('connections', c_uint), ('duration_s', c_double), ('latency', c_bool),
                ('latency_s', c_double), ('http_path', c_char_p), ('keep', POINTER(c_char_p)),
                ('keep_count', c_size_t),
                ('seed', c_uint64), ('cc', c_char_p), ('progress', TUNE_PROGRESS_FN),
                ('user', c_void_p), ('stop', POINTER(c_int)), ('busy', c_void_p),
                ('busy_connections', c_uint), ('profile_targets', c_bool),
                ('idle_qps', c_double), ('tail', c_bool)]


def make_opts(cls, **fields):
    """An options struct with sz set and every other field zero unless given."""
    o = cls(**fields)
    o.sz = ctypes.sizeof(cls)
    return o


_P = c_void_p            # any opaque handle
_PP = POINTER(c_void_p)  # an out handle, or an out buffer
_S = c_char_p            # a C string (in) / borrowed C string (out)
_E = c_int               # an enum
_U64P = POINTER(c_uint64)

_SIGS = {
    # profile.h
    'ditto_profile_new': (c_int, [POINTER(ProfileOpts), _PP]),
    'ditto_profile_free': (None, [_P]),
    'ditto_profile_attach': (c_int, [_P, c_int]),
    'ditto_profile_attach_many': (c_int, [_P, POINTER(c_int), c_size_t]),
    'ditto_profile_discover': (c_int, [_P, POINTER(c_int), c_size_t, POINTER(c_size_t)]),
    'ditto_profile_name_port': (c_int, [_P, ctypes.c_uint16, c_char_p]),
    'ditto_profile_launch': (c_int, [_P, POINTER(c_char_p)]),
    'ditto_profile_fd': (c_int, [_P]),
    'ditto_profile_step': (c_int, [_P, c_int]),
    'ditto_profile_run': (c_int, [_P]),
    'ditto_profile_cancel': (None, [_P]),
    'ditto_profile_finish': (c_int, [_P, _PP]),
    'ditto_profile_gaps': (c_uint, [_P]),
    'ditto_profile_cpu': (c_int, [c_int, POINTER(c_int), c_size_t, POINTER(CpuOpts), _P]),
    'ditto_profile_import_traces': (c_int, [_P, POINTER(c_char_p), c_size_t,
                                            POINTER(TraceOpts)]),
    'ditto_trace_format_name': (_S, [c_int]),
    'ditto_trace_format_parse': (c_int, [_S, POINTER(c_int)]),
    'ditto_otlp_receiver_start': (c_int, [_S, POINTER(OtlpOpts), _PP]),
    'ditto_otlp_receiver_port': (ctypes.c_uint16, [_P]),
    'ditto_otlp_receiver_stats': (c_int, [_P, POINTER(OtlpStats)]),
    'ditto_otlp_receiver_stop': (None, [_P]),
    'ditto_otlp_receiver_finish': (c_int, [_P, _P, c_bool]),
    'ditto_otlp_receiver_free': (None, [_P]),
    'ditto_step_mode_name': (_S, [c_int]),
    'ditto_step_mode_parse': (c_int, [_S, POINTER(c_int)]),
    'ditto_step_mode_detect': (c_int, []),
    'ditto_step_breakpoints_work': (c_int, []),
    # synth.h
    'ditto_synth_write': (c_int, [_P, _S, POINTER(SynthOpts)]),
    'ditto_synth_build': (c_int, [_S, POINTER(BuildOpts)]),
    'ditto_synth_deploy': (c_int, [_S, POINTER(DeployOpts)]),
    'ditto_deploy_targets_parse': (c_int, [_S, POINTER(c_uint)]),
    'ditto_synth_graph_write': (c_int, [_P, _S, POINTER(SynthGraphOpts)]),
    'ditto_synth_graph_build': (c_int, [_S, POINTER(BuildOpts)]),
    'ditto_synth_up': (c_int, [_S, POINTER(SynthUpOpts), POINTER(c_void_p)]),
    'ditto_synth_up_front': (_S, [_P]),
    'ditto_synth_up_tier_count': (c_size_t, [_P]),
    'ditto_synth_up_tier': (c_int, [_P, c_size_t, POINTER(c_char_p), POINTER(c_int),
                                    POINTER(c_uint)]),
    'ditto_synth_up_wait': (c_int, [_P, c_double]),
    'ditto_synth_up_stop': (c_int, [_P]),
    'ditto_synth_up_free': (None, [_P]),
    'ditto_synth_down': (c_int, [_S, POINTER(SynthUpOpts)]),
    'ditto_synth_knob_count': (c_size_t, []),
    'ditto_synth_knob': (c_int, [c_size_t, POINTER(c_char_p), POINTER(c_double),
                                 POINTER(c_double), POINTER(c_double)]),
    # tune: load generator
    'ditto_load_run': (c_int, [POINTER(LoadgenOpts), _PP]),
    'ditto_load_result_free': (None, [_P]),
    'ditto_load_result_completed': (c_uint64, [_P]),
    'ditto_load_result_errors': (c_uint64, [_P]),
    'ditto_load_result_errors_by': (c_uint64, [_P, c_int]),
    'ditto_load_error_name': (_S, [c_int]),
    'ditto_load_result_offered_qps': (c_double, [_P]),
    'ditto_load_result_achieved_qps': (c_double, [_P]),
    'ditto_load_result_elapsed_s': (c_double, [_P]),
    'ditto_load_result_bytes_sent': (c_uint64, [_P]),
    'ditto_load_result_bytes_received': (c_uint64, [_P]),
    'ditto_load_result_latency': (_P, [_P]),
    'ditto_load_result_to_json': (c_int, [_P, _PP]),
    # tune: measurement
    'ditto_metrics_new': (c_int, [_PP]),
    'ditto_metrics_free': (None, [_P]),
    'ditto_metrics_count': (c_size_t, [_P]),
    'ditto_metrics_entry': (c_int, [_P, c_size_t, POINTER(c_char_p), POINTER(c_double)]),
    'ditto_metrics_get': (c_int, [_P, _S, POINTER(c_double)]),
    'ditto_metrics_set': (c_int, [_P, _S, c_double]),
    'ditto_measure': (c_int, [POINTER(MeasureOpts), _PP]),
    'ditto_counters_available': (c_bool, []),
    # tune: feedback loop
    'ditto_tune': (c_int, [_P, POINTER(TuneOpts), _PP]),
    'ditto_tune_graph': (c_int, [_P, POINTER(TuneGraphOpts), _PP]),
    'ditto_tune_report_free': (None, [_P]),
    'ditto_tune_report_iterations': (c_uint, [_P]),
    'ditto_tune_report_converged': (c_bool, [_P]),
    'ditto_tune_report_count': (c_size_t, [_P]),
    'ditto_tune_report_row': (c_int, [_P, c_size_t, POINTER(c_char_p), POINTER(c_double),
                                      POINTER(c_double), POINTER(c_double),
                                      POINTER(c_double)]),
    'ditto_tune_report_to_json': (c_int, [_P, _PP]),
    'ditto_tune_report_plot_svg': (c_int, [_P, _S]),
    'ditto_tune_report_stall_count': (c_size_t, [_P]),
    'ditto_tune_report_stall': (c_int, [_P, c_size_t, POINTER(c_char_p), POINTER(c_char_p),
                                        POINTER(c_int), POINTER(c_uint), POINTER(c_char_p)]),
    'ditto_tune_report_verdict': (c_char_p, [_P]),
    # model.h: tuning
    # Getters only read (NULL for an absent section); the _ensure twins
    # (since 0.5) create what is missing, for writing.
    'ditto_model_tuning': (_P, [_P]),
    'ditto_model_tuning_ensure': (_P, [_P]),
    'ditto_tuning_knobs': (_P, [_P]),
    'ditto_tuning_knobs_ensure': (_P, [_P]),
    'ditto_tuning_iteration_count': (c_size_t, [_P]),
    'ditto_tuning_iteration': (_P, [_P, c_size_t]),
    'ditto_tuning_iter_index': (c_uint64, [_P]),
    'ditto_tuning_iter_accepted': (c_bool, [_P]),
    'ditto_tuning_iter_note': (_S, [_P]),
    'ditto_tuning_iter_knobs': (_P, [_P]),
    'ditto_tuning_iter_errors': (_P, [_P]),
    'ditto_values_new': (_P, []),
    'ditto_values_free': (None, [_P]),
    'ditto_values_size': (c_size_t, [_P]),
    'ditto_values_entry': (c_int, [_P, c_size_t, POINTER(c_char_p), POINTER(c_double)]),
    'ditto_values_get': (c_int, [_P, _S, POINTER(c_double)]),
    'ditto_values_set': (c_int, [_P, _S, c_double]),
    # model.h: counts maps
    'ditto_counts_size': (c_size_t, [_P]),
    'ditto_counts_entry': (c_int, [_P, c_size_t, POINTER(c_char_p), _U64P]),
    'ditto_counts_get': (c_uint64, [_P, _S]),
    'ditto_counts_add': (c_int, [_P, _S, c_uint64]),
    'ditto_counts_total': (c_uint64, [_P]),
    # model.h: cpu
    'ditto_service_cpu_count': (c_size_t, [_P]),
    'ditto_service_cpu': (_P, [_P, c_size_t]),
    'ditto_service_find_cpu': (_P, [_P, _S]),
    'ditto_service_add_cpu': (_P, [_P, _S]),
    'ditto_cpu_thread_class': (_S, [_P]),
    'ditto_cpu_mix': (_P, [_P]),
    'ditto_cpu_mix_ensure': (_P, [_P]),
    'ditto_cpu_stepping': (_P, [_P]),
    'ditto_cpu_miss_rate': (c_double, [_P, c_bool, c_uint64, c_bool]),
    'ditto_cpu_windows': (c_uint64, [_P]),
    'ditto_cpu_set_windows': (c_int, [_P, c_uint64]),
    'ditto_cpu_instructions': (c_uint64, [_P]),
    'ditto_cpu_set_instructions': (c_int, [_P, c_uint64]),
    'ditto_cpu_undecoded': (c_uint64, [_P]),
    'ditto_cpu_set_undecoded': (c_int, [_P, c_uint64]),
    'ditto_cpu_loads': (c_uint64, [_P]),
    'ditto_cpu_set_loads': (c_int, [_P, c_uint64]),
    'ditto_cpu_stores': (c_uint64, [_P]),
    'ditto_cpu_set_stores': (c_int, [_P, c_uint64]),
    'ditto_cpu_chased_loads': (c_uint64, [_P]),
    'ditto_cpu_set_chased_loads': (c_int, [_P, c_uint64]),
    'ditto_cpu_dws_cold': (c_uint64, [_P]),
    'ditto_cpu_set_dws_cold': (c_int, [_P, c_uint64]),
    'ditto_cpu_iws_cold': (c_uint64, [_P]),
    'ditto_cpu_set_iws_cold': (c_int, [_P, c_uint64]),
    'ditto_cpu_jit_instructions': (c_uint64, [_P]),
    'ditto_cpu_set_jit_instructions': (c_int, [_P, c_uint64]),
    'ditto_cpu_stepped_ns': (c_uint64, [_P]),
    'ditto_cpu_set_stepped_ns': (c_int, [_P, c_uint64]),
    'ditto_cpu_insts_per_request': (_P, [_P]),
    'ditto_cpu_branches': (_P, [_P]),
    'ditto_cpu_dws': (_P, [_P]),
    'ditto_cpu_iws': (_P, [_P]),
    'ditto_cpu_raw': (_P, [_P]),
    'ditto_cpu_war': (_P, [_P]),
    'ditto_cpu_waw': (_P, [_P]),
    'ditto_cpu_mem_raw': (_P, [_P]),
    'ditto_cpu_insts_per_request_ensure': (_P, [_P]),
    'ditto_cpu_branches_ensure': (_P, [_P]),
    'ditto_cpu_dws_ensure': (_P, [_P]),
    'ditto_cpu_iws_ensure': (_P, [_P]),
    'ditto_cpu_raw_ensure': (_P, [_P]),
    'ditto_cpu_war_ensure': (_P, [_P]),
    'ditto_cpu_waw_ensure': (_P, [_P]),
    'ditto_cpu_mem_raw_ensure': (_P, [_P]),

    # ditto.h: version, errors, memory
    'ditto_version': (_S, []),
    'ditto_version_number': (c_uint, []),
    'ditto_strerror': (_S, [c_int]),
    'ditto_last_error': (_S, []),
    'ditto_free': (None, [c_void_p]),

    # ditto.h: histograms
    'ditto_hist_new': (_P, [_E, c_uint]),
    'ditto_hist_free': (None, [_P]),
    'ditto_hist_dup': (_P, [_P]),
    'ditto_hist_kind': (_E, [_P]),
    'ditto_hist_precision': (c_uint, [_P]),
    'ditto_hist_add': (c_int, [_P, c_uint64, c_uint64]),
    'ditto_hist_merge': (c_int, [_P, _P]),
    'ditto_hist_clear': (None, [_P]),
    'ditto_hist_total': (c_uint64, [_P]),
    'ditto_hist_bucket_count': (c_size_t, [_P]),
    'ditto_hist_bucket': (c_int, [_P, c_size_t, _U64P, _U64P, _U64P]),
    'ditto_hist_quantile': (c_double, [_P, c_double]),
    'ditto_hist_mean': (c_double, [_P]),
    'ditto_hist_distance': (c_double, [_P, _P]),

    # model.h: enum names
    'ditto_framing_name': (_S, [_E]),
    'ditto_role_name': (_S, [_E]),
    'ditto_io_model_name': (_S, [_E]),
    'ditto_fd_kind_name': (_S, [_E]),
    'ditto_call_mode_name': (_S, [_E]),
    'ditto_framing_parse': (c_int, [_S, POINTER(_E)]),
    'ditto_role_parse': (c_int, [_S, POINTER(_E)]),
    'ditto_io_model_parse': (c_int, [_S, POINTER(_E)]),
    'ditto_fd_kind_parse': (c_int, [_S, POINTER(_E)]),
    'ditto_call_mode_parse': (c_int, [_S, POINTER(_E)]),

    # model.h: lifecycle and codec
    'ditto_model_new': (_P, []),
    'ditto_model_free': (None, [_P]),
    'ditto_model_dup': (c_int, [_P, _PP]),
    'ditto_model_decode': (c_int, [c_char_p, c_size_t, POINTER(LoadOpts), _PP]),
    'ditto_model_load': (c_int, [c_char_p, POINTER(LoadOpts), _PP]),
    'ditto_model_encode': (c_int, [_P, _PP, POINTER(c_size_t)]),
    'ditto_model_save': (c_int, [_P, c_char_p]),
    'ditto_model_to_json': (c_int, [_P, POINTER(JsonOpts), _PP]),
    'ditto_model_schema': (c_int, [_P]),
    'ditto_model_validate': (c_int, [_P, POINTER(ValidateOpts)]),
    'ditto_model_merge': (c_int, [_P, _P]),

    # model.h: compare
    'ditto_model_compare': (c_int, [_P, _P, POINTER(CompareOpts), _PP]),
    'ditto_comparison_free': (None, [_P]),
    'ditto_comparison_count': (c_size_t, [_P]),
    'ditto_comparison_metric': (c_int, [_P, c_size_t, POINTER(c_char_p), POINTER(_E),
                                        POINTER(c_double), POINTER(c_double),
                                        POINTER(c_double)]),
    'ditto_comparison_max_error': (c_double, [_P]),
    'ditto_comparison_to_json': (c_int, [_P, _PP]),

    # model.h: generic path access
    'ditto_model_get_type': (c_int, [_P, _S, POINTER(_E)]),
    'ditto_model_get_bool': (c_int, [_P, _S, POINTER(c_bool)]),
    'ditto_model_get_i64': (c_int, [_P, _S, POINTER(c_int64)]),
    'ditto_model_get_u64': (c_int, [_P, _S, _U64P]),
    'ditto_model_get_f64': (c_int, [_P, _S, POINTER(c_double)]),
    'ditto_model_get_str': (c_int, [_P, _S, POINTER(c_char_p)]),
    'ditto_model_get_hist': (c_int, [_P, _S, _PP]),
    'ditto_model_get_len': (c_int, [_P, _S, POINTER(c_size_t)]),
    'ditto_model_get_json': (c_int, [_P, _S, POINTER(JsonOpts), _PP]),

    # model.h: meta
    'ditto_model_meta': (_P, [_P]),
    'ditto_model_meta_ensure': (_P, [_P]),
    'ditto_meta_tool_version': (_S, [_P]),
    'ditto_meta_created': (c_uint64, [_P]),
    'ditto_meta_set_created': (c_int, [_P, c_uint64]),
    'ditto_meta_window_s': (c_double, [_P]),
    'ditto_meta_set_window_s': (c_int, [_P, c_double]),
    'ditto_meta_sources': (c_uint64, [_P]),

    # model.h: services
    'ditto_model_service_count': (c_size_t, [_P]),
    'ditto_model_service': (_P, [_P, c_size_t]),
    'ditto_model_find_service': (_P, [_P, _S]),
    'ditto_model_add_service': (_P, [_P, _S]),
    'ditto_service_name': (_S, [_P]),
    'ditto_service_framing': (_E, [_P]),
    'ditto_service_set_framing': (c_int, [_P, _E]),
    'ditto_service_processes': (c_uint64, [_P]),
    'ditto_service_set_processes': (c_int, [_P, c_uint64]),
    'ditto_service_port_count': (c_size_t, [_P]),
    'ditto_service_port': (c_uint16, [_P, c_size_t]),
    'ditto_service_add_port': (c_int, [_P, c_uint16]),
    'ditto_service_per_request': (c_double, [_P, c_double]),

    # model.h: thread classes
    'ditto_service_thread_count': (c_size_t, [_P]),
    'ditto_service_thread': (_P, [_P, c_size_t]),
    'ditto_service_find_thread': (_P, [_P, _S]),
    'ditto_service_add_thread': (_P, [_P, _S]),
    'ditto_thread_class_name': (_S, [_P]),
    'ditto_thread_class_count': (c_uint64, [_P]),
    'ditto_thread_class_set_count': (c_int, [_P, c_uint64]),
    'ditto_thread_class_role': (_E, [_P]),
    'ditto_thread_class_set_role': (c_int, [_P, _E]),
    'ditto_thread_class_io_model': (_E, [_P]),
    'ditto_thread_class_set_io_model': (c_int, [_P, _E]),
    'ditto_thread_class_cpu_ns': (c_uint64, [_P]),
    'ditto_thread_class_set_cpu_ns': (c_int, [_P, c_uint64]),
    'ditto_thread_class_wakeups': (c_uint64, [_P]),
    'ditto_thread_class_set_wakeups': (c_int, [_P, c_uint64]),

    # model.h: syscalls
    'ditto_service_syscall_count': (c_size_t, [_P]),
    'ditto_service_syscall': (_P, [_P, c_size_t]),
    'ditto_service_find_syscall': (_P, [_P, _S, _S, _E]),
    'ditto_service_add_syscall': (_P, [_P, _S, _S, _E]),
    'ditto_syscall_thread_class': (_S, [_P]),
    'ditto_syscall_name': (_S, [_P]),
    'ditto_syscall_fd_kind': (_E, [_P]),
    'ditto_syscall_nr': (c_uint64, [_P]),
    'ditto_syscall_set_nr': (c_int, [_P, c_uint64]),
    'ditto_syscall_calls': (c_uint64, [_P]),
    'ditto_syscall_set_calls': (c_int, [_P, c_uint64]),
    'ditto_syscall_errors': (c_uint64, [_P]),
    'ditto_syscall_set_errors': (c_int, [_P, c_uint64]),
    'ditto_syscall_sequential': (c_uint64, [_P]),
    'ditto_syscall_set_sequential': (c_int, [_P, c_uint64]),
    'ditto_syscall_size_total': (c_uint64, [_P]),
    'ditto_syscall_set_size_total': (c_int, [_P, c_uint64]),
    'ditto_syscall_ret_total': (c_uint64, [_P]),
    'ditto_syscall_set_ret_total': (c_int, [_P, c_uint64]),
    'ditto_syscall_iovecs_total': (c_uint64, [_P]),
    'ditto_syscall_set_iovecs_total': (c_int, [_P, c_uint64]),
    'ditto_syscall_size': (_P, [_P]),
    'ditto_syscall_ret': (_P, [_P]),
    'ditto_syscall_flags': (_P, [_P]),
    'ditto_syscall_errnos': (_P, [_P]),
    'ditto_syscall_offset': (_P, [_P]),
    'ditto_syscall_latency': (_P, [_P]),
    'ditto_syscall_size_ensure': (_P, [_P]),
    'ditto_syscall_ret_ensure': (_P, [_P]),
    'ditto_syscall_flags_ensure': (_P, [_P]),
    'ditto_syscall_errnos_ensure': (_P, [_P]),
    'ditto_syscall_offset_ensure': (_P, [_P]),
    'ditto_syscall_latency_ensure': (_P, [_P]),

    # model.h: network
    'ditto_service_network': (_P, [_P]),
    'ditto_service_network_ensure': (_P, [_P]),
    'ditto_network_io_model': (_E, [_P]),
    'ditto_network_set_io_model': (c_int, [_P, _E]),
    'ditto_network_accept_dispatch': (c_bool, [_P]),
    'ditto_network_set_accept_dispatch': (c_int, [_P, c_bool]),
    'ditto_network_network_dispatch': (c_bool, [_P]),
    'ditto_network_set_network_dispatch': (c_int, [_P, c_bool]),
    'ditto_network_serial_connections': (c_bool, [_P]),
    'ditto_network_master_process': (c_bool, [_P]),
    'ditto_network_set_master_process': (c_int, [_P, c_bool]),
    'ditto_network_set_serial_connections': (c_int, [_P, c_bool]),
    'ditto_network_network_threads': (c_uint64, [_P]),
    'ditto_network_set_network_threads': (c_int, [_P, c_uint64]),
    'ditto_network_processes': (c_uint64, [_P]),
    'ditto_network_set_processes': (c_int, [_P, c_uint64]),
    'ditto_network_client_connections': (c_uint64, [_P]),
    'ditto_network_set_client_connections': (c_int, [_P, c_uint64]),
    'ditto_network_client_mode': (_E, [_P]),
    'ditto_network_set_client_mode': (c_int, [_P, _E]),
    'ditto_network_sockopts_known': (c_bool, [_P]),
    'ditto_network_set_sockopts_known': (c_int, [_P]),
    'ditto_network_sockopt_connections': (c_uint64, [_P]),
    'ditto_network_set_sockopt_connections': (c_int, [_P, c_uint64]),
    'ditto_network_sockopt_count': (c_size_t, [_P]),
    'ditto_network_sockopt': (c_int, [_P, c_size_t, POINTER(Sockopt)]),
    'ditto_network_add_sockopt': (c_int, [_P, POINTER(Sockopt)]),

    # model.h: requests
    'ditto_service_requests': (_P, [_P]),
    'ditto_service_requests_ensure': (_P, [_P]),
    'ditto_requests_count': (c_uint64, [_P]),
    'ditto_requests_set_count': (c_int, [_P, c_uint64]),
    'ditto_requests_connections': (c_uint64, [_P]),
    'ditto_requests_set_connections': (c_int, [_P, c_uint64]),
    'ditto_requests_pipelined': (c_uint64, [_P]),
    'ditto_requests_set_pipelined': (c_int, [_P, c_uint64]),
    'ditto_requests_request_bytes_total': (c_uint64, [_P]),
    'ditto_requests_set_request_bytes_total': (c_int, [_P, c_uint64]),
    'ditto_requests_response_bytes_total': (c_uint64, [_P]),
    'ditto_requests_set_response_bytes_total': (c_int, [_P, c_uint64]),
    'ditto_requests_request_bytes': (_P, [_P]),
    'ditto_requests_response_bytes': (_P, [_P]),
    'ditto_requests_per_connection': (_P, [_P]),
    'ditto_requests_service_ns': (_P, [_P]),
    'ditto_requests_after_response_ns': (_P, [_P]),
    'ditto_requests_request_bytes_ensure': (_P, [_P]),
    'ditto_requests_response_bytes_ensure': (_P, [_P]),
    'ditto_requests_per_connection_ensure': (_P, [_P]),
    'ditto_requests_service_ns_ensure': (_P, [_P]),
    'ditto_requests_after_response_ns_ensure': (_P, [_P]),
    # model.h: graph
    'ditto_model_graph': (_P, [_P]),
    'ditto_model_graph_ensure': (_P, [_P]),
    'ditto_graph_node_count': (c_size_t, [_P]),
    'ditto_graph_node': (_S, [_P, c_size_t]),
    'ditto_graph_add_node': (c_int, [_P, _S]),
    'ditto_graph_edge_count': (c_size_t, [_P]),
    'ditto_graph_edge': (_P, [_P, c_size_t]),
    'ditto_graph_find_source_edge': (_P, [_P, _E, _S, _S]),
    'ditto_graph_add_source_edge': (_P, [_P, _E, _S, _S]),
    'ditto_edge_from': (_S, [_P]),
    'ditto_edge_to': (_S, [_P]),
    'ditto_edge_source': (_E, [_P]),
    'ditto_edge_mode': (_E, [_P]),
    'ditto_edge_set_mode': (c_int, [_P, _E]),
    'ditto_edge_order': (_E, [_P]),
    'ditto_edge_set_order': (c_int, [_P, _E]),
    'ditto_edge_calls': (c_uint64, [_P]),
    'ditto_edge_set_calls': (c_int, [_P, c_uint64]),
    'ditto_edge_parent_requests': (c_uint64, [_P]),
    'ditto_edge_set_parent_requests': (c_int, [_P, c_uint64]),
    'ditto_edge_ambiguous': (c_uint64, [_P]),
    'ditto_edge_set_ambiguous': (c_int, [_P, c_uint64]),
    'ditto_edge_unattributed': (c_uint64, [_P]),
    'ditto_edge_set_unattributed': (c_int, [_P, c_uint64]),
    'ditto_edge_fanout': (_P, [_P]),
    'ditto_edge_request_bytes': (_P, [_P]),
    'ditto_edge_response_bytes': (_P, [_P]),
    'ditto_edge_latency_ns': (_P, [_P]),
    'ditto_edge_fanout_ensure': (_P, [_P]),
    'ditto_edge_request_bytes_ensure': (_P, [_P]),
    'ditto_edge_response_bytes_ensure': (_P, [_P]),
    'ditto_edge_latency_ns_ensure': (_P, [_P]),
    'ditto_graph_external_count': (c_size_t, [_P]),
    'ditto_graph_external': (_P, [_P, c_size_t]),
    'ditto_graph_find_external': (_P, [_P, _S]),
    'ditto_graph_add_external': (_P, [_P, _S]),
    'ditto_external_name': (_S, [_P]),
    'ditto_external_address': (_S, [_P]),
    'ditto_external_set_address': (c_int, [_P, _S]),
    'ditto_external_port': (c_uint64, [_P]),
    'ditto_external_set_port': (c_int, [_P, c_uint64]),
    'ditto_external_framing': (_E, [_P]),
    'ditto_external_set_framing': (c_int, [_P, _E]),
    'ditto_graph_traces': (_P, [_P]),
    'ditto_graph_traces_ensure': (_P, [_P]),
    'ditto_traces_files': (c_uint64, [_P]),
    'ditto_traces_set_files': (c_int, [_P, c_uint64]),
    'ditto_traces_spans': (c_uint64, [_P]),
    'ditto_traces_set_spans': (c_int, [_P, c_uint64]),
    'ditto_traces_traces': (c_uint64, [_P]),
    'ditto_traces_set_traces': (c_int, [_P, c_uint64]),
    'ditto_traces_orphan_spans': (c_uint64, [_P]),
    'ditto_traces_set_orphan_spans': (c_int, [_P, c_uint64]),
    'ditto_traces_rejected_spans': (c_uint64, [_P]),
    'ditto_traces_set_rejected_spans': (c_int, [_P, c_uint64]),
    'ditto_traces_sample_ratio': (c_double, [_P]),
    'ditto_traces_set_sample_ratio': (c_int, [_P, c_double]),
    'ditto_traces_corrected': (c_bool, [_P]),
    'ditto_traces_set_corrected': (c_int, [_P, c_bool]),
    'ditto_edge_source_name': (_S, [_E]),
    'ditto_edge_source_parse': (c_int, [_S, POINTER(_E)]),
    'ditto_call_order_name': (_S, [_E]),
    'ditto_call_order_parse': (c_int, [_S, POINTER(_E)]),
    'ditto_graph_compare': (c_int, [_P, _E, _P, _E, POINTER(CompareOpts), _PP]),
    'ditto_graph_write_dot': (c_int, [_P, POINTER(DotOpts), _PP]),
    # model.h: outbound (since 0.5)
    'ditto_service_outbound_count': (c_size_t, [_P]),
    'ditto_service_outbound': (_P, [_P, c_size_t]),
    'ditto_service_find_outbound': (_P, [_P, _S, c_uint16]),
    'ditto_service_add_outbound': (_P, [_P, _S, c_uint16]),
    'ditto_outbound_address': (_S, [_P]),
    'ditto_outbound_port': (c_uint16, [_P]),
    'ditto_outbound_framing': (_E, [_P]),
    'ditto_outbound_set_framing': (c_int, [_P, _E]),
    'ditto_outbound_connections': (c_uint64, [_P]),
    'ditto_outbound_set_connections': (c_int, [_P, c_uint64]),
    'ditto_outbound_calls': (c_uint64, [_P]),
    'ditto_outbound_set_calls': (c_int, [_P, c_uint64]),
    'ditto_outbound_sends': (c_uint64, [_P]),
    'ditto_outbound_set_sends': (c_int, [_P, c_uint64]),
    'ditto_outbound_receives': (c_uint64, [_P]),
    'ditto_outbound_set_receives': (c_int, [_P, c_uint64]),
    'ditto_outbound_request_bytes_total': (c_uint64, [_P]),
    'ditto_outbound_set_request_bytes_total': (c_int, [_P, c_uint64]),
    'ditto_outbound_response_bytes_total': (c_uint64, [_P]),
    'ditto_outbound_set_response_bytes_total': (c_int, [_P, c_uint64]),
    'ditto_outbound_request_bytes': (_P, [_P]),
    'ditto_outbound_response_bytes': (_P, [_P]),
    'ditto_outbound_request_bytes_ensure': (_P, [_P]),
    'ditto_outbound_response_bytes_ensure': (_P, [_P]),
}


class _Missing:
    """Stands for a function the loaded library does not export."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args):
        raise NotImplementedError('%s: not exported by the loaded libditto' % self.name)


def _installed_path():
    """libditto.so.0 where meson installed it next to this package, or None
    (a source checkout, or a package pip installed without the library)."""
    try:
        from ._build_info import LIBDIR, PACKAGE_DIR
    except ImportError:
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.normpath(os.path.join(here, os.path.relpath(LIBDIR, PACKAGE_DIR), SONAME))
    return path if os.path.exists(path) else None


def _open():
    path = os.environ.get('DITTO_LIBRARY') or _installed_path()
    if path:
        return ctypes.CDLL(path)
    try:
        return ctypes.CDLL(SONAME)
    except OSError:
        found = ctypes.util.find_library('ditto')
        if found:
            return ctypes.CDLL(found)
        raise


class _Lib:
    """The declared functions of libditto, as attributes named like in C."""

    def __init__(self, dll):
        self.dll = dll
        self.missing = []
        for name, (restype, argtypes) in _SIGS.items():
            try:
                fn = getattr(dll, name)
            except AttributeError:
                self.missing.append(name)
                setattr(self, name, _Missing(name))
                continue
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)


try:
    lib = _Lib(_open())
except OSError as e:
    raise ImportError('ditto: cannot load libditto (%s); set DITTO_LIBRARY to its path' % e) from e


def decode(b):
    """A C string returned by the library, as str (None stays None)."""
    if b is None:
        return None
    return b.decode('utf-8', 'surrogateescape')


def encode(s):
    """A Python string, bytes or path as a C string argument."""
    if isinstance(s, bytes):
        return s
    if isinstance(s, str):
        return s.encode('utf-8', 'surrogateescape')
    return os.fsencode(s)


def take_string(ptr, size=None):
    """Copy a library-allocated buffer into Python and ditto_free() it."""
    if not ptr:
        return b''
    try:
        if size is None:
            return ctypes.string_at(ptr)
        return ctypes.string_at(ptr, size)
    finally:
        lib.ditto_free(ptr)
