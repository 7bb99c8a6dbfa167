/*
 * safetensors.h - reading Hugging Face *.safetensors files.
 *
 * Format: 8 bytes little-endian header length N, N bytes of JSON
 * {"name": {"dtype": "F32"|"F16"|"BF16"|..., "shape": [..],
 * "data_offsets": [begin, end]}, "__metadata__": {...}}, then the data.
 * Files are memory-mapped; tensors are converted to FP32 on request.
 * Every error names the file and, where there is one, the tensor.
 */
#ifndef ENG_SAFETENSORS_H
#define ENG_SAFETENSORS_H

#include <glib.h>
#include <stdint.h>

typedef struct EngSafetensors EngSafetensors;

/* Open every *.safetensors file of @dir (sorted by name).  (transfer full) */
EngSafetensors *eng_safetensors_open_dir(const char *dir, GError **error);
void eng_safetensors_free(EngSafetensors *st);

/* The same from one file's bytes held in memory (borrowed: they must outlive
 * the result); @what names it in errors.  The fuzz target's entry point. */
EngSafetensors *eng_safetensors_open_bytes(const void *data, size_t len, const char *what,
                                           GError **error);

/* Names of every tensor, sorted.  (transfer full) */
GStrv eng_safetensors_names(const EngSafetensors *st);

/* Rank and shape of tensor @name, or -1 if there is none. */
int eng_safetensors_shape(const EngSafetensors *st, const char *name, uint64_t shape[8]);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EngSafetensors, eng_safetensors_free)

/* Is there a tensor called @name? */
gboolean eng_safetensors_has(const EngSafetensors *st, const char *name);

/* Names of the tensors eng_safetensors_read_f32() has not read (yet),
 * sorted.  (transfer full) */
GStrv eng_safetensors_unread(const EngSafetensors *st);

/*
 * Copy tensor @name, which must have exactly the shape @shape (@rank
 * dims), into @out as FP32.  Errors (HS_MODEL_ERROR): missing tensor,
 * wrong shape, unsupported dtype, a NaN or infinite value.
 */
gboolean eng_safetensors_read_f32(const EngSafetensors *st, const char *name,
                                  const uint64_t *shape, int rank, float *out,
                                  GError **error);

#endif /* ENG_SAFETENSORS_H */
