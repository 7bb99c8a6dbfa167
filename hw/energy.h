/*
 * energy.h - joules from activity: each processor's active power while it
 * is busy and idle power otherwise, DRAM background power, and DRAM access
 * energy per byte moved.  The caller (sim/run.c) measures busy time and
 * bytes from the executed timeline; this file owns the power model.
 *
 * Calibration (configs/sd8gen3.json): the one published figure, HeteroLLM
 * §5.5's 2.23 W for hetero-layer prefill of Llama-8B at 256 tokens, pins
 * the NPU's active power (the NPU is busy nearly all of that prefill);
 * every other power number is an assumption with its reason in the config.
 */
#ifndef HW_ENERGY_H
#define HW_ENERGY_H

#include "hw/soc.h"

/* Energy of an interval of @secs in which processor p was busy for
 * busy_s[p] seconds (0 <= busy_s[p] <= secs; one entry per processor of
 * @soc) and @dram_bytes moved through DRAM. */
double hw_energy_j(const HwSoc *soc, double secs, const double *busy_s, double dram_bytes);

#endif /* HW_ENERGY_H */
