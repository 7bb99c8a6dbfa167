/*
 * config.h - a run's fully resolved configuration: the SoC and model
 * loaded with the --set overrides applied, and its hash.
 *
 * The hash is SHA-256 of the canonical JSON (hs_config_resolved: cJSON's
 * compact printing of the SoC and model as their loaders read them, with
 * defaults filled in, and the workload), so two runs with the same hash
 * simulated the same thing however it was spelled (a file edited, or the
 * same key set with --set).
 */
#ifndef HS_CLI_CONFIG_H
#define HS_CLI_CONFIG_H

#include "hw/soc.h"
#include "models/spec.h"
#include "sim/run.h"
#include "sim/util/override.h"

/* Load a SoC / model by name or path with @ovr (may be NULL) applied.
 * A loader error about an overridden key names the --set option. */
HwSoc *hs_config_load_soc(const char *name, const HsOverrides *ovr, GError **error);
MdlSpec *hs_config_load_model(const char *name, const HsOverrides *ovr, GError **error);

/* {"soc": {...}, "model": {...}, "workload": {...}}  (transfer full) */
cJSON *hs_config_resolved(const HwSoc *soc, const MdlSpec *spec, const SimWorkload *w);

/* Lower-case hex SHA-256 of hs_config_resolved's compact print.
 * (transfer full) */
char *hs_config_hash(const HwSoc *soc, const MdlSpec *spec, const SimWorkload *w);

/* {"overrides": ["npu.sram_kib=16384"], "hash": "..."}: what a report
 * records of its configuration.  (transfer full) */
cJSON *hs_config_json(const HsOverrides *ovr, const HwSoc *soc, const MdlSpec *spec,
                      const SimWorkload *w);

#endif /* HS_CLI_CONFIG_H */
