/**
 * A first-come first-served async lock: the asynchronous trainer's generations and updates take
 * turns on a policy that both samples and trains (the in-process engine holds one set of weights;
 * an update must not change them under a generation in progress).
 */
export class AsyncLock {
  private tail: Promise<void> = Promise.resolve();

  /** Resolves with the release function once every earlier holder has released. */
  acquire(): Promise<() => void> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const turn = this.tail.then(() => release);
    this.tail = this.tail.then(() => released);
    return turn;
  }

  /** Runs `work` holding the lock. */
  async with<T>(work: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }
}
