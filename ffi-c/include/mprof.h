/* mprof.h: the optional API of libmprof.
 *
 * No source change is needed to profile a program: preload libmprof.so or
 * link libmprof.a and every malloc/free is recorded; the profile is written
 * at exit to $MPROF_OUT (default mprof.out; %p becomes the process id).
 * Include this header only to control recording from the program.
 * All functions are safe to call from any thread, at any time. */
#ifndef MPROF_H
#define MPROF_H

#ifdef __cplusplus
extern "C" {
#endif

/* Attribute new allocations to their call paths (the default at start). */
void mprof_start(void);

/* Stop attributing new allocations. Frees of blocks recorded earlier are
 * still counted, so the leak table stays exact. */
void mprof_stop(void);

/* Forget all counts and errors so far. Blocks allocated before the reset are
 * not counted when they are freed later. */
void mprof_reset(void);

/* Write the profile now: to path, or to $MPROF_OUT when path is NULL.
 * Returns 0 on success, -1 on failure (the reason is printed on stderr).
 * Recording goes on; the file is written again at exit. */
int mprof_dump(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_H */
