/* The optional API: allocations while stopped are not counted, a reset
 * forgets what came before, and mprof_dump writes a file on request.
 * Usage: api <dump-path> */
#include <stdio.h>
#include <stdlib.h>
#include "mprof.h"

void *volatile sink;
__attribute__((noinline)) void *before_reset(void) { void *p = malloc(11); return p; }
__attribute__((noinline)) void *while_stopped(void) { void *p = malloc(22); return p; }
__attribute__((noinline)) void *counted(void) { void *p = malloc(33); return p; }

int main(int argc, char **argv)
{
    void *old = before_reset();
    mprof_reset();
    free(old); /* allocated before the reset: not counted */
    mprof_stop();
    for (int i = 0; i < 4; i++)
        sink = while_stopped();
    mprof_start();
    for (int i = 0; i < 6; i++)
        sink = counted();
    if (argc > 1 && mprof_dump(argv[1]) != 0)
        return 2;
    if (mprof_dump("/nonexistent-dir/x.out") != -1)
        return 3;
    printf("done\n");
    return 0;
}
