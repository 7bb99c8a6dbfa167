/*
 * workload-json.h - a workload (SimWorkload) as the "workload" member of
 * a recording, written and read through one field table (one schema for the workload,
 * as report-fields.c is for the report).
 *
 * traces/record.c writes and reads the member through it; `run --set`,
 * the recording and replay thus agree on every key's range (decode up to
 * 65536 as `run --decode`).
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
 * Errors: HS_CONFIG_ERROR with the JSON path (the caller may re-domain
 * it). */
gboolean trc_workload_from_json(const cJSON *obj, const char *path, SimWorkload *w,
                                GError **error);

#endif /* TRC_WORKLOAD_JSON_H */
