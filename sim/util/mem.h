/*
 * mem.h - refusing, up front, work that would not fit in memory.
 *
 * GLib aborts the process when an allocation fails, so a request whose
 * buffers cannot fit must be turned down before they are allocated, with
 * an error that says how much it needed.
 */
#ifndef HS_MEM_H
#define HS_MEM_H

#include <glib.h>
#include <stdint.h>

/* Physical memory of this machine in bytes, 0 if unknown. */
uint64_t hs_mem_physical(void);

/*
 * TRUE if @need bytes are at most 80 % of physical memory (or it is
 * unknown).  Otherwise FALSE with a usage error "@what needs about X GiB,
 * more than 80 % of this machine's Y GiB; @advice".
 */
gboolean hs_mem_fits(uint64_t need, const char *what, const char *advice, GError **error);

/* @n runs share this machine at once (a sweep's workers): each gets
 * 1/@n of the 80 %.  Set once per process, before any run (default 1). */
void hs_mem_set_concurrent(unsigned n);

/*
 * @bytes of zeroed memory (aborts like g_malloc when there is none).  A
 * large buffer is 2 MiB-aligned and asks the kernel for transparent huge
 * pages, which Debian gives only to memory that asks (madvise mode): the
 * functional check writes hundreds of MiB of fresh buffers per run, and
 * faulting them in 4 KiB pages took more time than the arithmetic
 * (compare --prompt 1024: 21 s, 12 s with huge pages).  Free with free().
 */
void *hs_mem_alloc0(size_t bytes);

/*
 * Free @p, a buffer of @bytes from hs_mem_alloc0 (NULL is a no-op).  A
 * large one is kept (up to HS_MEM_POOL_MIB of them, the most recently
 * freed) for the next hs_mem_alloc0 of the same size, which zeroes it
 * instead of faulting in fresh pages: the functional check frees and
 * asks again for the same node buffers run after run (2.7 GB of fresh
 * buffers in the default compare, whose page faults and kernel zeroing
 * took 15 % of its CPU).  Thread-safe.
 */
void hs_mem_free(void *p, size_t bytes);
#define HS_MEM_POOL_MIB 96       /* assumed: a checked prefill's node buffers of one
                                  * layer at prompt 256 (Llama-3-8B) fit; bounded so
                                  * that the default compare stays under 1 GB */

#endif
