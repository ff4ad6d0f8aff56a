/* Four threads allocate concurrently; each leaks a known number of blocks on
 * its own path, so the profile's counts can be checked exactly.
 * Thread t makes n blocks of 48 bytes in keep_block and frees every block
 * whose LCG draw is odd; it also makes t+1 blocks of 3000 bytes in
 * big_block and leaks them. Prints the expected totals. Usage: threads [n] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4

struct job { long n; unsigned long long seed; long leaked; };

/* noinline and a volatile sink keep gcc from inlining the paths away or
 * deleting an allocation whose result is unused. */
void *volatile sink;
__attribute__((noinline)) void *keep_block(void) { void *p = malloc(48); return p; }
__attribute__((noinline)) void *big_block(void) { void *p = malloc(3000); return p; }

__attribute__((noinline)) void *worker(void *arg)
{
    struct job *j = arg;
    void **kept = malloc(j->n * sizeof *kept);
    long k = 0;
    for (long i = 0; i < j->n; i++) {
        void *p = keep_block();
        j->seed = j->seed * 6364136223846793005ULL + 1442695040888963407ULL;
        if ((j->seed >> 33) & 1)
            free(p);
        else
            kept[k++] = p;
    }
    j->leaked = k;
    free(kept);
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    pthread_t t[THREADS];
    struct job jobs[THREADS];
    long leaked = 0, big = 0;
    for (int i = 0; i < THREADS; i++) {
        jobs[i].n = n;
        jobs[i].seed = 1000 + i;
        pthread_create(&t[i], NULL, worker, &jobs[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        for (int b = 0; b <= i; b++, big++)
            sink = big_block();
        pthread_join(t[i], NULL);
        leaked += jobs[i].leaked;
    }
    printf("allocs %ld leaked %ld big %ld\n", n * THREADS, leaked, big);
    return 0;
}
