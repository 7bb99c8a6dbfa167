/*
 * outfile.h - output files that appear whole or not at all.
 *
 * Traces, recordings and logit dumps are written to a temporary file in the
 * destination's folder and renamed over it on commit, so an interrupted or
 * failed run never leaves a half-written file that looks complete.
 */
#ifndef HS_OUTFILE_H
#define HS_OUTFILE_H

#include <glib.h>
#include <stdio.h>

typedef struct HsOutFile HsOutFile;

/* Open "@path" for writing ("-" means stdout).  (transfer full) */
HsOutFile *hs_outfile_open(const char *path, GError **error);

/* The stream to write to.  (transfer none) */
FILE *hs_outfile_stream(HsOutFile *f);

/* Flush, close and rename into place; frees @f.  FALSE on any I/O error
 * (the temporary file is removed). */
gboolean hs_outfile_commit(HsOutFile *f, GError **error);

/* Close and remove the temporary file; frees @f.  NULL is a no-op. */
void hs_outfile_abort(HsOutFile *f);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsOutFile, hs_outfile_abort)

/* Write a whole buffer atomically. */
gboolean hs_outfile_write_all(const char *path, const void *data, gsize len,
                              GError **error);

#endif /* HS_OUTFILE_H */
