/*
 * escape.h - user text made safe for a one-line message.
 *
 * A key or string read from an input file may hold a newline (which would
 * forge a second "hetero-sim:" line), terminal control bytes or invalid
 * UTF-8.  Every such text put into an error message goes through
 * hs_escape(): printable UTF-8 is kept, anything else is written as a C
 * escape (\n, \t, \xNN, \u00NN for C1 controls), and a very long text is cut.
 */
#ifndef HS_ESCAPE_H
#define HS_ESCAPE_H

#include <glib.h>

/* Longest escaped text kept, in bytes of input: a message stays one line
 * a terminal can show, whatever the input holds. */
#define HS_ESCAPE_MAX_BYTES 256

/* @s escaped (NULL gives "(null)").  (transfer full) */
char *hs_escape(const char *s);

/* The same for @len bytes that need not be NUL-terminated. */
char *hs_escape_len(const char *s, gsize len);

/*
 * A whole message as main() prints it: control characters, line breaks and
 * invalid UTF-8 escaped as above, everything else (backslashes included)
 * kept and nothing cut.  The last line of defence: a message built from input
 * text somewhere that did not escape it still prints as one line.
 * (transfer full)
 */
char *hs_escape_message(const char *msg);

#endif /* HS_ESCAPE_H */
