/**
 * Checked index access. Under `noUncheckedIndexedAccess` `array[i]` is typed `T | undefined`;
 * `at(array, i)` returns `T` and throws an `IndexOutOfRangeError` naming the index and the length
 * when `i` is not an integer in `[0, length)`. One helper for the whole codebase: use it instead of
 * a `!` assertion wherever a loop or destructuring cannot carry the bound.
 *
 * Hot inner loops over typed arrays (ONNX kernels, per-token losses) should not need it: loop to the
 * array's own `length` and read a local, or keep the lengths checked once before the loop.
 */
import { IndexOutOfRangeError } from './errors.ts';

/** `array[index]`, checked: throws `IndexOutOfRangeError` when `index` is not an integer in `[0, array.length)`. */
export function at<T>(array: ArrayLike<T>, index: number, what = 'array'): T {
  if (!Number.isInteger(index) || index < 0 || index >= array.length) throw new IndexOutOfRangeError(what, index, array.length);
  return array[index] as T;
}
