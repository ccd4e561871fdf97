/* todo.h: rl_todo(), how an unfinished lab step reports itself. */
#ifndef RDMALAB_TODO_H
#define RDMALAB_TODO_H

#include <errno.h>
#include <stdio.h>

/*
 * Each lab's header defines RL_LAB, its number, before including this.
 * rl_todo(N) prints "step N not implemented: see docs/labL.md#step-N" and
 * returns -ENOSYS, so callers treat an unfinished step like a failed one.
 */
#define rl_todo(step) rl_todo_lab(RL_LAB, (step))

static inline int rl_todo_lab(int lab, int step)
{
	fprintf(stderr, "step %d not implemented: see docs/lab%d.md#step-%d\n", step, lab, step);
	return -ENOSYS;
}

#endif
