/*
 * version-info.h - which hetero-sim built this binary, from git.
 *
 * hs_version() is "<project version>+g<git describe>", e.g.
 * "0.1.0+g7185599" or "0.1.0+g7185599-dirty" (a build from a tree with
 * uncommitted changes: two such builds may differ and still say the
 * same), or the bare project version when the source is not a git
 * checkout.  The sweep database keeps it in each row (results made by
 * another version are re-run).  HS_VERSION (meson.build) stays the
 * release number `--version` prints.
 */
#ifndef HS_VERSION_INFO_H
#define HS_VERSION_INFO_H

const char *hs_version(void);

#endif /* HS_VERSION_INFO_H */
