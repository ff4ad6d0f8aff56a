/* The mprof paper's Figure 7: main calls F, F calls G, G calls F, F calls G,
 * and G allocates 10 bytes. A caller/callee-pair monitor credits F -> G with
 * 20 bytes per call; exact paths credit every function once.
 * Usage: recursion [times] (default 100): prints the bytes allocated. */
#include <stdio.h>
#include <stdlib.h>

void *volatile sink;
void *F(int depth);

__attribute__((noinline)) void *G(int depth)
{
    void *p;
    if (depth == 0)
        p = malloc(10);
    else
        p = F(depth - 1);
    return p;
}

__attribute__((noinline)) void *F(int depth)
{
    void *p = G(depth);
    return p;
}

int main(int argc, char **argv)
{
    long times = argc > 1 ? atol(argv[1]) : 100;
    for (long i = 0; i < times; i++)
        sink = F(1); /* main > F > G > F > G > malloc, leaked */
    printf("bytes %ld\n", times * 10);
    return 0;
}
