/* Direct self-recursion: down(20) calls itself 20 times and the innermost
 * call allocates 8 bytes. The profile folds the 21 levels of down into one
 * node (with a recursion count), so deep recursion cannot grow the tree or
 * the file. Usage: selfrec [times] (default 50). */
#include <stdio.h>
#include <stdlib.h>

void *volatile sink;

__attribute__((noinline)) void *down(int n)
{
    void *p = n == 0 ? malloc(8) : down(n - 1);
    sink = 0; /* not a tail call */
    return p;
}

int main(int argc, char **argv)
{
    long times = argc > 1 ? atol(argv[1]) : 50;
    for (long i = 0; i < times; i++)
        sink = down(20);
    printf("bytes %ld\n", times * 8);
    return 0;
}
