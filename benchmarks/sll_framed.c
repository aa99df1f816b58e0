/* sll_framed: a packet queue where every HEADER packet is followed by its PAYLOAD
 * packet and stand-alone ACK packets come between frames: (ACK | HEADER PAYLOAD)*. A
 * reader that meets a HEADER checks that the next packet is its PAYLOAD. Proved by
 * keeping the order of the `kind` values along the list's segment (which value follows
 * which), not only the set of values it holds. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_framed.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

#define HEADER 1
#define PAYLOAD 2
#define ACK 3

struct packet {
    struct packet *next;
    int kind;
};

static struct packet *push(struct packet *tail, int k) {
    struct packet *p = malloc(sizeof(*p));
    if (!p)
        abort();
    p->next = NULL;
    p->kind = k;
    tail->next = p;
    return p;
}

int main(void) {
    struct packet *queue = malloc(sizeof(*queue));
    if (!queue)
        abort();
    queue->next = NULL;
    queue->kind = ACK;
    struct packet *tail = queue;
    while (__VERIFIER_nondet_int()) {
        if (__VERIFIER_nondet_int()) {
            tail = push(tail, ACK);
        } else {
            tail = push(tail, HEADER);
            tail = push(tail, PAYLOAD);
        }
    }
    // read the frames
    struct packet *p = queue;
    while (p) {
        if (p->kind == HEADER) {
            p = p->next;
            if (!p || p->kind != PAYLOAD)
                reach_error();
        }
        p = p->next;
    }
    // free the queue
    while (queue) {
        p = queue->next;
        free(queue);
        queue = p;
    }
    return 0;
}
