/*
 * error.h - GError domains shared by every folder of hetero-sim.
 *
 * Users get GError messages; developers get g_assert (STYLE.md A).  A message
 * is one phrase, no newline, no final full stop, and says where the problem
 * is, what was wanted and what was found:
 *
 *   configs/x.json: $.processors[2].tile_rows: expected an integer in [1, 1024] (got 0)
 *
 * Inner code knows the JSON path; the loader prefixes the file name with
 * g_prefix_error().  main() prints the message once and picks the exit
 * status from the domain (usage errors exit 2, everything else 1).
 */
#ifndef HS_ERROR_H
#define HS_ERROR_H

#include <glib.h>

/* Bad configuration or data file: SoC JSON, model config.json, points. */
#define HS_CONFIG_ERROR (hs_config_error_quark())
typedef enum {
    HS_CONFIG_ERROR_IO,          /* cannot open / read the file */
    HS_CONFIG_ERROR_PARSE,       /* not valid JSON */
    HS_CONFIG_ERROR_MISSING_KEY, /* a required key is absent */
    HS_CONFIG_ERROR_BAD_VALUE,   /* wrong type or out of range */
    HS_CONFIG_ERROR_UNKNOWN_KEY, /* a key no table knows (typo?) */
    HS_CONFIG_ERROR_NOT_FOUND,   /* a named SoC / model does not exist */
} HsConfigError;
GQuark hs_config_error_quark(void);

/* Bad command line: unknown command or option, missing argument.  Exit 2. */
#define HS_USAGE_ERROR (hs_usage_error_quark())
typedef enum {
    HS_USAGE_ERROR_BAD_OPTION,
    HS_USAGE_ERROR_BAD_COMMAND,
} HsUsageError;
GQuark hs_usage_error_quark(void);

/* Bad or inconsistent trace / plan file. */
#define HS_TRACE_ERROR (hs_trace_error_quark())
typedef enum {
    HS_TRACE_ERROR_PARSE,
    HS_TRACE_ERROR_VERSION,
    HS_TRACE_ERROR_BAD_VALUE,
    HS_TRACE_ERROR_BAD_PLAN,
} HsTraceError;
GQuark hs_trace_error_quark(void);

/* Bad model directory or weights (safetensors). */
#define HS_MODEL_ERROR (hs_model_error_quark())
typedef enum {
    HS_MODEL_ERROR_IO,
    HS_MODEL_ERROR_FORMAT,
    HS_MODEL_ERROR_MISSING_TENSOR,
    HS_MODEL_ERROR_SHAPE,
    HS_MODEL_ERROR_DTYPE,
} HsModelError;
GQuark hs_model_error_quark(void);

/* A simulation that cannot finish: deadlock, unrunnable task. */
#define HS_SIM_ERROR (hs_sim_error_quark())
typedef enum {
    HS_SIM_ERROR_DEADLOCK,
    HS_SIM_ERROR_UNSUPPORTED,
    HS_SIM_ERROR_MISMATCH,       /* a checked run computed wrong values, or the
                                  * plan is wrong (a dropped sync): exit 3 */
    HS_SIM_ERROR_HORIZON,        /* a time beyond SIM_TIME_HORIZON_PS: a config
                                  * rate far outside what a phone does */
} HsSimError;
GQuark hs_sim_error_quark(void);

#endif /* HS_ERROR_H */
