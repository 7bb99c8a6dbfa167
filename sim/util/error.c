/*
 * error.c - the quarks behind error.h.
 */
#include "sim/util/error.h"

G_DEFINE_QUARK(hs-config-error-quark, hs_config_error)
G_DEFINE_QUARK(hs-usage-error-quark, hs_usage_error)
G_DEFINE_QUARK(hs-trace-error-quark, hs_trace_error)
G_DEFINE_QUARK(hs-model-error-quark, hs_model_error)
G_DEFINE_QUARK(hs-sim-error-quark, hs_sim_error)
