/* Three blocks of 1000 bytes, never written by the program, whose pointers
 * are dropped: memcheck reports all three definitely lost. */
#include <stdlib.h>
#include <stdio.h>

__attribute__((noinline)) void lose_uninitialised(void)
{
    for (int i = 0; i < 3; i++) {
        void *p = malloc(1000);
        __asm__ volatile("" : : "r"(p) : "memory");
    }
}

__attribute__((noinline)) void scrub(void)
{
    volatile char buf[16384];
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = 0;
}

int main(void)
{
    lose_uninitialised();
    scrub();
    return 0;
}
