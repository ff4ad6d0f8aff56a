/* A peak that lasts about a millisecond, far shorter than libmprof's 10 ms
 * sampling period: 100 blocks of 1 MiB allocated by spike(), held 1 ms, freed;
 * then small allocations. Known by construction: the peak is the marker (64
 * bytes, main) plus the 100 MiB, and at the peak those are all that is live. */
#include <stdlib.h>
#include <time.h>

static void *volatile keep;

__attribute__((noinline)) void spike(void)
{
    void *blocks[100];
    for (int i = 0; i < 100; i++)
        blocks[i] = malloc(1 << 20);
    struct timespec ms = { 0, 1000000 };
    nanosleep(&ms, NULL);
    for (int i = 0; i < 100; i++)
        free(blocks[i]);
}

__attribute__((noinline)) void after(void)
{
    for (int i = 0; i < 10; i++) {
        void *p = malloc(100);
        keep = p;
        free(p);
    }
}

int main(void)
{
    keep = malloc(64);
    void *marker = keep;
    spike();
    after();
    free(marker);
    return 0;
}
