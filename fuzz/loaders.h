/*
 * loaders.h - each input format through the function the CLI uses, from
 * bytes in memory: what the fuzz targets call, and what
 * tests/test-hostile.c calls on every input the fuzzers found.  @what names
 * the input in messages.  A new format adds one function here.
 */
#ifndef HS_FUZZ_LOADERS_H
#define HS_FUZZ_LOADERS_H

#include <glib.h>
#include <stdint.h>

/* SoC config JSON (--soc FILE) and `soc show`'s dumps of it. */
gboolean hs_load_soc(const uint8_t *data, size_t size, const char *what, GError **error);

/* Model config.json (--model FILE) and its parameter count and dump. */
gboolean hs_load_model(const uint8_t *data, size_t size, const char *what, GError **error);

/* A points file (sim/cli/points.c, what `validate` reads). */
gboolean hs_load_points(const uint8_t *data, size_t size, const char *what, GError **error);

/* A software stack profile (hw/stack.c, what --stack and policies read). */
gboolean hs_load_stack(const uint8_t *data, size_t size, const char *what, GError **error);

/* A sweep spec (`sweep SPEC`), every point's `run` arguments built. */
gboolean hs_load_sweep(const uint8_t *data, size_t size, const char *what, GError **error);

/* A sweep database (`sweep --show DB`, `plot DB`, resuming a sweep on
 * it): checked, shown, its rows read, opened to write. */
gboolean hs_load_sweep_db(const uint8_t *data, size_t size, const char *what, GError **error);

/* A recording (`replay FILE`), read and checked. */
gboolean hs_load_record(const uint8_t *data, size_t size, const char *what, GError **error);

/* A recording as `replay FILE` takes it: read and checked against its
 * model's graph, its plan put on the recorded SoC (configs/), checked and
 * timed (plans of at most 4096 tasks; values off). */
gboolean hs_load_replay(const uint8_t *data, size_t size, const char *what, GError **error);

/* One *.safetensors file, every tensor read back as FP32 at its shape. */
gboolean hs_load_safetensors(const uint8_t *data, size_t size, const char *what,
                             GError **error);

#endif /* HS_FUZZ_LOADERS_H */
