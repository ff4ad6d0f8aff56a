/* Peak and temporary allocations known by construction (no stdio, so the C
 * library allocates nothing of its own):
 *   1000 blocks of 50 bytes, each freed right after its malloc: temporary;
 *   500 blocks of 64 bytes freed after another allocation (a 64-byte marker,
 *   never freed): not temporary;
 *   100 blocks of 100000 bytes, written to (so they are resident), then a
 *   second 64-byte marker, held for 150 ms, then freed: the peak is
 *   10 000 128 bytes live (the big blocks and the markers, nothing else).
 *   The program then idles 100 ms and leaves. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink;
void *blocks[500];
void *big[100];

int main(void)
{
    for (int i = 0; i < 1000; i++) {
        sink = malloc(50);
        free(sink);
    }
    for (int i = 0; i < 500; i++)
        blocks[i] = malloc(64);
    sink = malloc(64);
    for (int i = 0; i < 500; i++)
        free(blocks[i]);
    for (int i = 0; i < 100; i++) {
        big[i] = malloc(100000);
        memset(big[i], 1, 100000);
    }
    sink = malloc(64); /* a second marker: the last big block is not temporary */
    usleep(150000);
    for (int i = 0; i < 100; i++)
        free(big[i]);
    usleep(100000);
    return 0;
}
