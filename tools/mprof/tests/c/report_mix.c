/* A C program for the report tests (HTML page, go tool pprof): three allocating
 * functions of known sizes, so every table has a known largest and smallest row,
 * memory kept and leaked, and one double free for the heap-errors table.
 *   make_buffer: 50 x 4096 bytes, all freed   (the most bytes)
 *   make_node:   1000 x 48 bytes, 500 freed, 500 leaked
 *   make_label:  1 x 16 bytes, leaked         (the fewest bytes)
 *   free_twice:  1 x 24 bytes, freed twice    (one double free) */
#include <stdlib.h>
#include <string.h>

struct node {
    struct node *next;
    char payload[40];
};

static struct node *make_node(struct node *next) {
    struct node *n = malloc(sizeof *n);
    n->next = next;
    memset(n->payload, 0, sizeof n->payload);
    return n;
}

static char *make_buffer(void) {
    char *b = malloc(4096);
    memset(b, 1, 4096);
    return b;
}

static char *make_label(int i) {
    char *s = malloc(16);
    s[0] = (char)i;
    return s;
}

static void free_twice(void) {
    char *p = malloc(24);
    free(p);
    free(p);
}

struct node *kept;
char *label;

int main(void) {
    struct node *list = NULL;
    for (int i = 0; i < 1000; i++)
        list = make_node(list);
    for (int i = 0; i < 50; i++)
        free(make_buffer());
    /* Free every other node; the rest stay reachable from `kept`. */
    for (struct node **at = &list; *at != NULL && (*at)->next != NULL; at = &(*at)->next) {
        struct node *dead = (*at)->next;
        (*at)->next = dead->next;
        free(dead);
        if (*at == NULL) break;
    }
    kept = list;
    label = make_label(1);
    free_twice();
    return 0;
}
