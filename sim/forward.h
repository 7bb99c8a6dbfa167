/*
 * forward.h - the whole-model forward pass (`hetero-sim infer`, the
 * engine's tests and benchmark): the step's operator graph
 * (models/graph.h) run node by node, each whole, through the one
 * definition of every node's arithmetic (sim/node-compute.h) that the
 * simulator's checked plans also run.
 */
#ifndef SIM_FORWARD_H
#define SIM_FORWARD_H

#include <glib.h>
#include <stdint.h>

#include "engine/model.h"
#include "models/spec.h"

/*
 * Run @n tokens of the model @spec describes (weights @m) at positions
 * [pos0, pos0 + n) — the cache must hold [0, pos0) — file their K/V in
 * the cache, and write the logits of every position to @logits [n, vocab].
 */
void sim_forward(EngModel *m, const MdlSpec *spec, EngKV *kv, const uint32_t *tokens,
                 uint32_t n, uint32_t pos0, float *logits);

/* Prefill: sim_forward at the cache's current length. */
void sim_forward_prefill(EngModel *m, const MdlSpec *spec, EngKV *kv, const uint32_t *tokens,
                         uint32_t n, float *logits);
/* One decode step: @token at the next position; logits [vocab]. */
void sim_forward_decode(EngModel *m, const MdlSpec *spec, EngKV *kv, uint32_t token,
                        float *logits);

#endif /* SIM_FORWARD_H */
