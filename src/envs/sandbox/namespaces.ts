/**
 * Linux namespaces for the sandbox process, through util-linux `unshare` (always installed on
 * Debian; bubblewrap is not):
 *
 *   unshare --net --pid --fork --mount-proc --kill-child=SIGKILL node …
 *
 * - a fresh network namespace holds only a downed loopback: no TCP, UDP, DNS or any other
 *   protocol leaves it, whatever API the code finds;
 * - a fresh PID namespace: the code is PID 1 of its own tree, cannot see or signal the trainer
 *   (its `process.ppid` is 0) or any other process outside;
 * - `--kill-child`: if `unshare` is killed (wall-clock timeout), the sandboxed node dies with it.
 *
 * Not root → `--user --map-root-user` first (an unprivileged user namespace). Whether this works
 * is probed once per `unshare` path (a ~10 ms run of `true`) and remembered for the process.
 */
import { spawnSync } from 'node:child_process';
import { AgentRlError } from '../../core/errors.ts';

/** The sandbox cannot isolate untrusted code as asked (namespaces unavailable); `details.missing` names what is missing. */
export class SandboxUnavailableError extends AgentRlError {
  constructor(message: string, details: { missing: string } & Record<string, unknown>) {
    super('SANDBOX_UNAVAILABLE', message, details);
  }
}

export type NamespaceSupport = { available: true; prefix: string[] } | { available: false; reason: string };

const probed = new Map<string, NamespaceSupport>();

/** The `unshare` arguments that put a command in fresh net + pid namespaces. */
function unshareArguments(): string[] {
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  return [
    ...(asRoot ? [] : ['--user', '--map-root-user']),
    '--net',
    '--pid',
    '--fork',
    '--mount-proc',
    '--kill-child=SIGKILL',
  ];
}

/** Whether `unshareCommand` can create the namespaces here (probed once per command, then remembered). */
export function probeNamespaces(unshareCommand = 'unshare'): NamespaceSupport {
  const known = probed.get(unshareCommand);
  if (known !== undefined) return known;
  const args = unshareArguments();
  const run = spawnSync(unshareCommand, [...args, 'true'], {
    timeout: 5000,
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' },
  });
  let support: NamespaceSupport;
  if (run.error !== undefined)
    support = { available: false, reason: `cannot run ${unshareCommand} (util-linux): ${run.error.message}` };
  else if (run.status !== 0)
    support = {
      available: false,
      reason: `${unshareCommand} ${args.join(' ')} failed: ${(run.stderr ?? '').trim().slice(0, 200) || `exit ${run.status ?? run.signal}`}`,
    };
  else support = { available: true, prefix: [unshareCommand, ...args] };
  probed.set(unshareCommand, support);
  return support;
}

/** The command prefix that isolates a process, or a typed error saying what is missing. */
export function namespacePrefix(unshareCommand = 'unshare'): string[] {
  const support = probeNamespaces(unshareCommand);
  if (support.available) return support.prefix;
  throw new SandboxUnavailableError(
    `the sandbox needs Linux network and PID namespaces to run untrusted code, and they are unavailable: ${support.reason}. ` +
      "Run where unprivileged user namespaces (or root) are allowed, or pass isolation: 'process-only' to accept a weaker sandbox (see docs/sandboxing.md)",
    { missing: 'network and PID namespaces (unshare --net --pid)', reason: support.reason },
  );
}
