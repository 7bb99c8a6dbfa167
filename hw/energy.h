/*
 * energy.h - joules from activity: each processor's power while it is busy
 * at each of its operating points (hw/dvfs.h: active_w at the top one,
 * less at lower ones, by f V^2) and its idle power otherwise, DRAM
 * background power, DRAM access energy per byte moved, and the device
 * baseline (screen, idle platform) when the SoC config sets one.  The
 * caller (sim/run.c) measures busy time per point and bytes from the
 * executed timeline; this file owns the power model.
 *
 * Calibration (configs/sd8gen3.json): the one published figure, HeteroLLM
 * §5.5's 2.23 W for hetero-layer prefill of Llama-8B at 256 tokens, pins
 * the NPU's active power (the NPU is busy nearly all of that prefill);
 * every other power number is an assumption with its reason in the config.
 */
#ifndef HW_ENERGY_H
#define HW_ENERGY_H

#include "hw/soc.h"

/*
 * Energy of an interval of @secs in which processor p was busy for
 * busy_s[p] seconds (0 <= busy_s[p] <= secs; one entry per processor of
 * @soc) and @dram_bytes moved through DRAM.  @point_s (may be NULL: all at
 * the top point) splits each busy time by operating point:
 * point_s[p * HW_DVFS_MAX_POINTS + k] seconds at point k, summing to
 * busy_s[p].  With every busy second at the top point this is exactly
 * sum(active_w x busy + idle_w x idle) + DRAM energy (+ baseline).
 */
double hw_energy_j(const HwSoc *soc, double secs, const double *busy_s,
                   const double *point_s, double dram_bytes);

/* Power while busy at point @k of processor @p (active_w without a table). */
double hw_energy_busy_w(const HwSoc *soc, uint32_t p, uint32_t k);

#endif /* HW_ENERGY_H */
