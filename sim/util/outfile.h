/*
 * outfile.h - output files that appear whole or not at all, and never
 * destroy what the user points them at.
 *
 * Where the target is a regular file or does not exist, traces, recordings
 * and logit dumps are written to a temporary file in the destination's
 * folder and renamed over it on commit, so an interrupted or failed run
 * never leaves a half-written file that looks complete.  A symbolic link is
 * followed: the file it names is replaced, the link stays.  A character
 * device or a FIFO (/dev/null, /dev/full, a pipe to another program) is
 * written directly, never replaced (a FIFO waits for its reader, as a
 * shell's redirection does); /dev/stdout and /dev/fd/N are written through
 * our own descriptor; a directory, a block device or a socket is refused.  Every write failure names the file and the reason.
 *
 * An output that is one of the run's inputs (the same file: device and
 * inode) is refused before it is touched: every input read through
 * hs_json_load_file() or noted with hs_input_note() is remembered.
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

/* FALSE, with "PATH: cannot write: REASON", once a write to @f failed. */
gboolean hs_outfile_ok(HsOutFile *f, GError **error);

/* Flush, close and rename into place; frees @f.  FALSE on any I/O error
 * (the temporary file is removed). */
gboolean hs_outfile_commit(HsOutFile *f, GError **error);

/* Close and remove the temporary file; frees @f.  NULL is a no-op. */
void hs_outfile_abort(HsOutFile *f);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsOutFile, hs_outfile_abort)

/* Write a whole buffer atomically. */
gboolean hs_outfile_write_all(const char *path, const void *data, gsize len,
                              GError **error);

/*
 * Several files that appear together or not at all (probe --out DIR,
 * validate's CSV + SVG): each is written to its temporary file as it comes,
 * and only when every one is written are they renamed into place (renames
 * within a folder we just wrote in do not fail short of the folder going
 * away under us).  Freeing a group that was not committed removes the
 * temporary files.
 */
typedef struct HsOutGroup HsOutGroup;
HsOutGroup *hs_outgroup_new(void);
gboolean hs_outgroup_write(HsOutGroup *g, const char *path, const void *data, gsize len,
                           GError **error);
/* Rename every file into place; frees @g. */
gboolean hs_outgroup_commit(HsOutGroup *g, GError **error);
void hs_outgroup_free(HsOutGroup *g);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsOutGroup, hs_outgroup_free)

/* FALSE with "--out DIR: expected a directory (got a file)" when @dir
 * names something other than a folder: said before the work, not after. */
gboolean hs_outdir_check(const char *dir, GError **error);

/* Make folder @dir (and its parents) for an --out DIR: hs_outdir_check(),
 * then "--out DIR: cannot create the directory: REASON". */
gboolean hs_outdir_make(const char *dir, GError **error);

/* Remember @path (following symbolic links) as an input of this run; a
 * file that does not exist is ignored.  Thread-safe. */
void hs_input_note(const char *path);

/* hs_input_note() for each regular file directly inside folder @dir (a
 * model directory: config.json and the weights). */
void hs_input_note_dir(const char *dir);

/* FALSE (HS_CONFIG_ERROR_IO, exit status 1) when @path names a file noted
 * as an input: "PATH: is an input of this run (INPUT); refusing to
 * overwrite it", or a file that may not be written (no write bit, even
 * for root, or no permission): "PATH: cannot write: REASON (mode NNNN);
 * refusing to change it".  "-" and files that do not exist pass.  hs_outfile_open()
 * checks this itself; a command whose outputs are written after the work
 * calls it first, so the refusal comes before anything runs. */
gboolean hs_outfile_check(const char *path, GError **error);

#endif /* HS_OUTFILE_H */
