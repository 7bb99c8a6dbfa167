/*
 * model-dir.h - a test's synthetic model written out as a Hugging Face
 * directory (model.safetensors, F32, Llama tensor names; config.json when
 * given), for the tests that load a directory back (test-engine-model,
 * test-sim-weights).
 */
#ifndef HS_TESTS_MODEL_DIR_H
#define HS_TESTS_MODEL_DIR_H

#include "engine/model.h"

/* @m (FP32 weights) in a new temporary directory: embedding, every layer's
 * projections (with their biases where @m has them), norms, final norm and
 * an untied LM head; @drop (may be NULL) names a tensor to leave out,
 * @config (may be NULL) is written as config.json.  (transfer full) */
char *hs_test_model_dir(EngModel *m, const char *config, const char *drop);

/* Remove what hs_test_model_dir wrote. */
void hs_test_model_dir_remove(const char *dir);

#endif /* HS_TESTS_MODEL_DIR_H */
