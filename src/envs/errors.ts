/** Errors specific to environments (the generic ones live in src/core/errors.ts). */
import { AgentRlError } from '../core/index.ts';

/** A task generator found no acceptable task within its attempt budget (options too tight). */
export class TaskGenerationError extends AgentRlError {
  constructor(env: string, attempts: number, options: object) {
    super('TASK_GENERATION', `${env}: no solvable task in ${attempts} attempts; loosen the options`, {
      env,
      attempts,
      options,
    });
  }
}

/** Chromium (the browser-shop env's browser) is missing or would not start; the message says how to install it. */
export class BrowserUnavailableError extends AgentRlError {
  constructor(path: string, cause: unknown) {
    const reason = (cause instanceof Error ? cause.message : String(cause)).split('\n')[0];
    super(
      'BROWSER_UNAVAILABLE',
      `Chromium could not be started from ${path}: ${reason}. Install it with \`apt-get install -y chromium\`, or set AGENTRL_CHROMIUM to a Chromium binary.`,
      { path },
      { cause },
    );
  }
}

/** `withPrivileged`'s local copy started another episode than the env it follows (other options, another version). */
export class PrivilegedCopyMismatchError extends AgentRlError {
  constructor(env: string, seed: number, text: string, copyText: string) {
    super(
      'PRIVILEGED_COPY_MISMATCH',
      `${env} seed ${seed}: the local copy's first observation differs from the env's (${JSON.stringify(copyText.slice(0, 80))} vs ${JSON.stringify(text.slice(0, 80))}); make the copy with the options the env server was started with`,
      { env, seed },
    );
  }
}

/** One of an env's named reward functions threw or gave a non-finite number: the step rejects, naming it (never a silent 0). */
export class RewardComponentError extends AgentRlError {
  constructor(env: string, failures: Readonly<Record<string, string>>) {
    const list = Object.entries(failures)
      .map(([name, reason]) => `${name} (${reason})`)
      .join(', ');
    super('REWARD_COMPONENT', `${env}: the step's reward could not be scored: ${list}`, { env, failures });
  }
}
