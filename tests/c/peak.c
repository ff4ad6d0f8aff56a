/* Peak and temporary allocations known by construction (no stdio, so the C
 * library allocates nothing of its own):
 *   churn():     1000 blocks of 50 bytes, each freed right after its malloc:
 *                temporary;
 *   main():      500 blocks of 64 bytes freed after another allocation (a
 *                64-byte marker, never freed): not temporary;
 *   hold_big():  100 blocks of 100000 bytes, written to (so they are
 *                resident), then a second 64-byte marker (mark(), so the
 *                last big block is not temporary), held for 150 ms, then
 *                freed: the peak is 10 000 128 bytes live, exactly the big
 *                blocks under hold_big and the two markers under main and
 *                mark.
 *   The program then idles 100 ms and leaves. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink;
void *blocks[500];
void *big[100];

__attribute__((noinline)) void churn(void)
{
    for (int i = 0; i < 1000; i++) {
        sink = malloc(50);
        free(sink);
    }
}

__attribute__((noinline)) void mark(void)
{
    sink = malloc(64);
}

__attribute__((noinline)) void hold_big(void)
{
    for (int i = 0; i < 100; i++) {
        big[i] = malloc(100000);
        memset(big[i], 1, 100000);
    }
    mark();
    usleep(150000);
    for (int i = 0; i < 100; i++)
        free(big[i]);
}

int main(void)
{
    churn();
    for (int i = 0; i < 500; i++)
        blocks[i] = malloc(64);
    sink = malloc(64);
    for (int i = 0; i < 500; i++)
        free(blocks[i]);
    hold_big();
    usleep(100000);
    return 0;
}
