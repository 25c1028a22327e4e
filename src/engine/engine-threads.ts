/**
 * How many threads the engine's onnxruntime sessions run an op on (ORT's intra-op pool): the
 * AGENTRL_THREADS environment variable when it holds a positive integer, else undefined (ORT's
 * own choice: every core). Read once, where a model creates its sessions.
 */
export function engineThreads(env: Readonly<Record<string, string | undefined>> = process.env): number | undefined {
  const raw = env.AGENTRL_THREADS;
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return undefined;
  const threads = Number.parseInt(raw, 10);
  return threads >= 1 ? threads : undefined;
}
