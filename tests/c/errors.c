/* Heap errors the hooks can see: a double free (twice on one path, to check
 * it is reported once with a count), a free of a pointer never allocated (a
 * stack address and an interior pointer), and a realloc of a freed block.
 * The program must go on and exit normally. */
#include <stdio.h>
#include <stdlib.h>

/* Pointers go through a volatile so gcc cannot delete the malloc/free pairs. */
void *volatile sink;

__attribute__((noinline)) void double_free(void)
{
    for (int i = 0; i < 2; i++) {
        sink = malloc(32);
        free(sink);
        free(sink);
    }
}

__attribute__((noinline)) void bogus_free(void)
{
    int local = 0;
    sink = &local;
    free(sink);
    sink = malloc(64);
    free((char *) sink + 16);
    free(sink);
}

__attribute__((noinline)) void realloc_freed(void)
{
    sink = malloc(80);
    free(sink);
    sink = realloc(sink, 160);
    free(sink);
}

int main(void)
{
    double_free();
    bogus_free();
    realloc_freed();
    printf("survived\n");
    return 0;
}
