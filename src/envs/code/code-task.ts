/** One code task: what the function must do, how it is tested and the reference answer. */
export interface CodeTask {
  id: string;
  /** `name(a, b)`: the function to write. */
  signature: string;
  spec: string;
  tests: Array<[args: unknown[], expected: unknown]>;
  solution: string;
}
