/*
 * workload-json.h - a workload (SimWorkload) as the "workload" member of
 * a recording, written and read through one field table (issue #20 item
 * 5, "one schema" for the workload as report-fields.c is for the report).
 *
 * Not yet used by traces/record.c, whose write side (streaming) and read
 * side (hostile input) were being changed by others at the time: they
 * can adopt it by replacing their hand-written member list with
 * trc_workload_to_json() and trc_workload_from_json().  The JSON it writes
 * is byte for byte what record.c writes today (test-traces-record checks
 * it), so adopting it changes no recording.
 */
#ifndef TRC_WORKLOAD_JSON_H
#define TRC_WORKLOAD_JSON_H

#include <glib.h>

#include "sim/run.h"
#include "sim/util/json.h"
#include "sim/util/param.h"

/* The workload's keys with a type and range (prompt, decode, batch,
 * sync, seed, options); "functional" and "render" are written and read
 * beside them (their values are not a struct member each). */
extern const HsParam trc_workload_params[];

/* { "prompt":.., "decode":.., "batch":.., "sync":.., "functional":..,
 *   "seed":.., "options":{..}[, "render":{..}] }  (transfer full) */
cJSON *trc_workload_to_json(const SimWorkload *w);

/* Read @obj (at JSON path @path) into @w (sim_workload_init first).
 * Errors: HS_CONFIG_ERROR with the JSON path. */
gboolean trc_workload_from_json(const cJSON *obj, const char *path, SimWorkload *w,
                                GError **error);

#endif /* TRC_WORKLOAD_JSON_H */
