/**
 * The code env's shipped tasks, written for agentrl: a one-line spec, the function's signature,
 * unit tests (arguments → expected JSON value) and a reference solution (the expert's answer; a
 * test checks that every reference passes every test in the sandbox).
 */
import { algorithmTasks } from './algorithm-tasks.ts';
import type { CodeTask } from './code-task.ts';
import { everydayTasks } from './everyday-tasks.ts';
import { warmUpTasks } from './warm-up-tasks.ts';

export type { CodeTask } from './code-task.ts';

/** Every shipped task, in the order a seed picks them from (the order of the three files). */
export const codeTasks: readonly CodeTask[] = [...warmUpTasks, ...everydayTasks, ...algorithmTasks];
