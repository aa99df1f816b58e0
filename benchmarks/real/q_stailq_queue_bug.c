/* q_stailq_queue_bug: builds a glibc <sys/queue.h> STAILQ as q_stailq_queue does, but the
 * last element is enqueued with the wrong macro, STAILQ_INSERT_HEAD instead of
 * STAILQ_INSERT_TAIL, so when the queue is not empty STAILQ_FOREACH does not meet it last. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "q_stailq_queue_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include <sys/queue.h>

struct job {
  int data;
  STAILQ_ENTRY(job) link;
};

STAILQ_HEAD(jobq, job);

static struct job *job_new(int d) {
  struct job *j = (struct job *) malloc(sizeof(struct job));
  if (!j) abort();
  j->data = d;
  return j;
}

int main(void) {
  struct jobq q;
  struct job *j, *p, *last = NULL, *mark = NULL;
  STAILQ_INIT(&q);
  while (__VERIFIER_nondet_int()) {
    if (!STAILQ_EMPTY(&q) && __VERIFIER_nondet_int()) {
      p = STAILQ_FIRST(&q);
      STAILQ_REMOVE_HEAD(&q, link);
      free(p);
      continue;
    }
    j = job_new(__VERIFIER_nondet_int() != 0);
    if (__VERIFIER_nondet_int()) {
      STAILQ_INSERT_TAIL(&q, j, link);
    } else if (STAILQ_EMPTY(&q) || __VERIFIER_nondet_int()) {
      STAILQ_INSERT_HEAD(&q, j, link);
    } else {
      p = STAILQ_FIRST(&q);
      while (STAILQ_NEXT(p, link) != NULL && __VERIFIER_nondet_int())
        p = STAILQ_NEXT(p, link);
      STAILQ_INSERT_AFTER(&q, p, j, link);
    }
  }
  j = job_new(2);
  STAILQ_INSERT_HEAD(&q, j, link);
  STAILQ_FOREACH(p, &q, link) {
    if (p == mark) reach_error();
    if (p != j && p->data != 0 && p->data != 1) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
    last = p;
  }
  if (last != j) reach_error();
  while (!STAILQ_EMPTY(&q)) {
    p = STAILQ_FIRST(&q);
    STAILQ_REMOVE_HEAD(&q, link);
    free(p);
  }
  return 0;
}
