import { availableParallelism } from 'node:os';

/** Worker threads the wasm backend uses (AGENTRL_THREADS, default the machine's cores); 1 disables the pool (single-threaded, synchronous). */
export const threadCount = (() => {
  const raw = process.env.AGENTRL_THREADS;
  const parsed = raw === undefined ? NaN : Number.parseInt(raw, 10);
  return Number.isFinite(parsed) && parsed >= 1 ? parsed : Math.max(1, availableParallelism());
})();
