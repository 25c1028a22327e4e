/**
 * Prepares Node 20 for @jax-js/jax 0.1.25. Must be evaluated before the library is imported
 * (the wasm backend decides at import time whether it can use worker threads), so every model
 * file imports the library through `./jax.ts`, which imports this module first.
 *
 * What it installs, and why (measured facts in ../shared/notes/tensor-library.md):
 * - `Float16Array` placeholder: jax-js probes for it when reading Float64Array input.
 * - iterator helpers `map`/`filter` on iterator prototypes: `np.einsum` uses them; Node 20 lacks them.
 * - `navigator.hardwareConcurrency`: sets the size of the wasm worker pool (AGENTRL_THREADS, default
 *   the machine's cores); Node 20 has no `navigator`.
 * - `Worker`: a Web Worker over `node:worker_threads`, so the wasm backend runs kernels on several
 *   cores. The pool's worker source is a blob URL; the node worker resolves it and evaluates it
 *   with a `self`/`postMessage` scope.
 */
import { Worker as NodeWorker } from 'node:worker_threads';
import { resolveObjectURL } from 'node:buffer';
import { threadCount } from './thread-count.ts';

const g = globalThis as Record<string, unknown>;

export { threadCount };

if (typeof g.Float16Array === 'undefined') {
  g.Float16Array = class Float16ArrayUnavailable {};
}

function installIteratorHelpers(proto: Record<string, unknown>): void {
  if (typeof proto.map !== 'function') {
    Object.defineProperty(proto, 'map', {
      configurable: true,
      writable: true,
      value: function* map(this: Iterable<unknown>, fn: (value: unknown, index: number) => unknown) {
        let index = 0;
        for (const value of this) yield fn(value, index++);
      },
    });
  }
  if (typeof proto.filter !== 'function') {
    Object.defineProperty(proto, 'filter', {
      configurable: true,
      writable: true,
      value: function* filter(this: Iterable<unknown>, fn: (value: unknown, index: number) => boolean) {
        let index = 0;
        for (const value of this) if (fn(value, index++)) yield value;
      },
    });
  }
}
// %IteratorPrototype% (covers array, string and RegExp-string iterators) and generators.
installIteratorHelpers(Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())));

if (typeof g.navigator === 'undefined') {
  g.navigator = { hardwareConcurrency: threadCount, userAgent: `Node.js/${process.version}` };
} else {
  try {
    Object.defineProperty(g.navigator, 'hardwareConcurrency', { configurable: true, get: () => threadCount });
  } catch {
    // read-only navigator: the pool then sizes itself from the platform's value
  }
}

/**
 * Runs inside the node worker. Blob URLs are not shared between Node threads, so the main side
 * resolves the URL and sends the source as the first message; the worker evaluates it in a Web
 * Worker scope and then forwards every later message to `self.onmessage`.
 */
const WORKER_BOOTSTRAP = `
const { parentPort } = require('node:worker_threads');
const self = globalThis;
self.self = self;
self.postMessage = (data) => parentPort.postMessage(data);
let started = false;
parentPort.on('message', (data) => {
  if (!started) {
    started = true;
    (0, eval)(data.source);
    return;
  }
  if (self.onmessage) self.onmessage({ data });
});
`;

class NodeWebWorker {
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onerror: ((event: { message: string }) => void) | null = null;
  private readonly worker: NodeWorker;
  /** Messages posted before the source has been read from the blob URL. */
  private pending: unknown[] | null = [];
  private outstanding = 0;

  constructor(url: string | URL) {
    this.worker = new NodeWorker(WORKER_BOOTSTRAP, { eval: true });
    this.worker.on('message', (data) => {
      // Every request gets exactly one reply; keep the process alive only while one is awaited.
      if (--this.outstanding === 0) this.worker.unref();
      this.onmessage?.({ data });
    });
    this.worker.on('error', (error) => this.onerror?.({ message: error.message }));
    // The pool lives as long as the process; idle, it must not keep the event loop alive.
    this.worker.unref();
    const blob = resolveObjectURL(String(url));
    if (blob === undefined) {
      queueMicrotask(() =>
        this.onerror?.({ message: `worker source ${String(url)} is not a blob URL of this thread` }),
      );
      return;
    }
    void blob.text().then((source) => {
      this.worker.postMessage({ source });
      for (const data of this.pending ?? []) this.worker.postMessage(data);
      this.pending = null;
    });
  }

  postMessage(data: unknown): void {
    if (this.outstanding++ === 0) this.worker.ref();
    if (this.pending !== null) this.pending.push(data);
    else this.worker.postMessage(data);
  }

  terminate(): void {
    void this.worker.terminate();
  }
}

if (threadCount > 1 && typeof g.Worker === 'undefined') {
  g.Worker = NodeWebWorker;
}
