/* The mprof paper's Figure 1: a producer/consumer simulation whose consumer
 * never frees red widgets. random_flip is a deterministic LCG so the leak is
 * known in advance: the program prints the number of red widgets it made.
 * Usage: widgets [count] (default 10000).
 *
 * Build and profile it (from the repository root):
 *
 *   cargo build --release -p mprof-ffi -p mprof-cli
 *   gcc -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls \
 *       -o widgets ffi-c/examples/widgets.c
 *   LD_PRELOAD=target/release/libmprof.so ./widgets
 *   target/release/mprof report mprof.out
 *
 * The leak table then shows exactly the red widgets, as the paper's Figure 2:
 *
 *   4919 1003476 (99) || > main > make_red_widget > make_widget
 *
 * -fno-optimize-sibling-calls matters: at -O2 gcc turns a call in tail
 * position into a jump, so make_red_widget's frame would vanish from the
 * stack and its widgets would be charged to main > make_widget. */
#include <stdio.h>
#include <stdlib.h>

enum color { BLUE, RED };

typedef struct {
    enum color c;
    int data[50];
} widget;

#define WSIZE sizeof(widget)

static unsigned long long seed = 12345;

static int random_flip(void)
{
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int)((seed >> 33) & 1);
}

widget *make_widget(void)
{
    widget *w;
    w = (widget *) malloc(WSIZE);
    return w;
}

widget *make_blue_widget(void)
{
    widget *w;
    w = make_widget();
    w->c = BLUE;
    return w;
}

widget *make_red_widget(void)
{
    widget *w;
    w = make_widget();
    w->c = RED;
    return w;
}

void consume_widget(widget *w)
{
    if (w->c == BLUE) {
        /* record blue widget */
        free(w);
    } else {
        /* record red widget: the bug, never freed */
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000;
    long i, red = 0;
    widget **wqueue = malloc(n * sizeof *wqueue);

    for (i = 0; i < n; i++)
        if (random_flip())
            wqueue[i] = make_blue_widget();
        else {
            wqueue[i] = make_red_widget();
            red++;
        }
    for (i = 0; i < n; i++)
        consume_widget(wqueue[i]);
    free(wqueue);
    printf("red %ld bytes %ld\n", red, red * (long) WSIZE);
    return 0;
}
