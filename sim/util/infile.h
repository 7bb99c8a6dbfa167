/*
 * infile.h - what an input file may be.
 *
 * Every config, model, points, spec and measurement file is read whole,
 * so a path that is not a file is refused by name before it is read: a
 * directory, and a character or block device (/dev/zero or /dev/urandom
 * would be read until memory ran out).  A FIFO or a pipe (/dev/stdin fed
 * by another program, a shell's <(...)) is read as a file.
 */
#ifndef HS_INFILE_H
#define HS_INFILE_H

#include <glib.h>

/* FALSE with "PATH: is a directory, expected WHAT" or "PATH: is a device,
 * expected WHAT" (@domain, @code) when @path is one; TRUE otherwise, also
 * when it does not exist (reading it then says so). */
gboolean hs_infile_check(const char *path, const char *what, GQuark domain, gint code,
                         GError **error);

/* Read @path whole (hs_infile_check first) into @text (NUL-terminated;
 * @len may be NULL).  FALSE with "PATH: cannot read: REASON" (the
 * system's reason: No such file or directory, Permission denied). */
gboolean hs_infile_read(const char *path, const char *what, GQuark domain, gint code,
                        char **text, gsize *len, GError **error);

#endif /* HS_INFILE_H */
