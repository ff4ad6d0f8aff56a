/* Allocation-heavy C workloads for comparing libmprof with other profilers.
 * Each prints the exact leak its own LCG implies, so a profiler's leak
 * report can be checked, not just timed.
 *
 *   bench widget N R   the paper's widget program: R rounds of N widgets
 *                      (204 bytes, 50% red), consumed through a queue of
 *                      1024; red widgets leak.
 *   bench deep N       N leaves reached through rec_a/rec_b mutual recursion
 *                      30-60 deep; each leaf makes 8 blocks of 16..4096 bytes
 *                      and leaks about 1 in 64 of them.
 *   bench mt N R T     T threads, each running the widget loop (seed 1000+i).
 *
 * Build: gcc -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -pthread
 * (sibling calls off: at -O2 a call in tail position becomes a jump and the
 * caller's frame vanishes from every stack). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum color { BLUE, RED };
typedef struct { enum color c; int data[50]; } widget;

static unsigned long long next(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

__attribute__((noinline)) widget *make_widget(void)
{
    widget *w = malloc(sizeof(widget));
    return w;
}

__attribute__((noinline)) widget *make_blue_widget(void)
{
    widget *w = make_widget();
    w->c = BLUE;
    return w;
}

__attribute__((noinline)) widget *make_red_widget(void)
{
    widget *w = make_widget();
    w->c = RED;
    return w;
}

__attribute__((noinline)) void consume_widget(widget *w)
{
    if (w->c == BLUE)
        free(w);
}

#define QUEUE 1024

struct widget_job { long n, rounds; unsigned long long seed; long red; };

static void *widget_loop(void *arg)
{
    struct widget_job *j = arg;
    widget *queue[QUEUE];
    long red = 0;
    for (long r = 0; r < j->rounds; r++) {
        long filled = 0;
        for (long i = 0; i < j->n; i++) {
            if (next(&j->seed) & 1) {
                queue[filled++] = make_blue_widget();
            } else {
                queue[filled++] = make_red_widget();
                red++;
            }
            if (filled == QUEUE || i == j->n - 1) {
                for (long k = 0; k < filled; k++)
                    consume_widget(queue[k]);
                filled = 0;
            }
        }
    }
    j->red = red;
    return NULL;
}

/* ---- deep */
static unsigned long long deep_seed = 7;
static long leaked_blocks, leaked_bytes;
static void *volatile sink;

__attribute__((noinline)) void leaf(void)
{
    void *blocks[8];
    size_t sizes[8];
    for (int i = 0; i < 8; i++) {
        unsigned long long r = next(&deep_seed);
        unsigned cls = r % 16;
        size_t size = cls < 5 ? 16 + r % 17 : cls < 10 ? 33 + r % 224 : cls < 15 ? 257 + r % 1792 : 2049 + r % 2048;
        sizes[i] = size;
        blocks[i] = malloc(size);
        memset(blocks[i], i, 16);
    }
    for (int i = 0; i < 8; i++) {
        if (next(&deep_seed) % 64 == 0) {
            leaked_blocks++;
            leaked_bytes += sizes[i];
            sink = blocks[i];
        } else {
            free(blocks[i]);
        }
    }
}

void rec_b(int depth);

__attribute__((noinline)) void rec_a(int depth)
{
    if (depth == 0)
        leaf();
    else
        rec_b(depth - 1);
    sink = 0; /* not a tail call */
}

__attribute__((noinline)) void rec_b(int depth)
{
    if (depth == 0)
        leaf();
    else
        rec_a(depth - 1);
    sink = 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "widget";
    long n = argc > 2 ? atol(argv[2]) : 100000;
    long rounds = argc > 3 ? atol(argv[3]) : 1;
    if (strcmp(what, "widget") == 0) {
        struct widget_job j = { n, rounds, 12345, 0 };
        widget_loop(&j);
        printf("expected leak %ld blocks %ld bytes\n", j.red, j.red * (long) sizeof(widget));
    } else if (strcmp(what, "deep") == 0) {
        for (long i = 0; i < n; i++)
            rec_a(30 + (int) (next(&deep_seed) % 31));
        printf("expected leak %ld blocks %ld bytes\n", leaked_blocks, leaked_bytes);
    } else if (strcmp(what, "mt") == 0) {
        int threads = argc > 4 ? atoi(argv[4]) : 4;
        pthread_t t[64];
        struct widget_job jobs[64];
        long red = 0;
        if (threads > 64) threads = 64;
        for (int i = 0; i < threads; i++) {
            jobs[i] = (struct widget_job) { n, rounds, 1000 + i, 0 };
            pthread_create(&t[i], NULL, widget_loop, &jobs[i]);
        }
        for (int i = 0; i < threads; i++) {
            pthread_join(t[i], NULL);
            red += jobs[i].red;
        }
        printf("expected leak %ld blocks %ld bytes\n", red, red * (long) sizeof(widget));
    } else {
        fprintf(stderr, "usage: bench widget N R | deep N | mt N R T\n");
        return 2;
    }
    return 0;
}
