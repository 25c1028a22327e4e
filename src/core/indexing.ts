/**
 * Checked index access. Under `noUncheckedIndexedAccess` `array[i]` is typed `T | undefined`;
 * `at(array, i)` returns `T` and throws an `IndexOutOfRangeError` naming the index and the length
 * when `i` is not an integer in `[0, length)`; `entry(record, key)` returns `record[key]` and throws
 * an `UnknownNameError` listing the keys there are when `key` is not one of them. The helpers for
 * the whole codebase: use them instead of a `!` assertion wherever a loop, destructuring or a `Map`
 * cannot carry the bound.
 *
 * Hot inner loops over typed arrays (ONNX kernels, per-token losses) should not need it: loop to the
 * array's own `length` and read a local, or keep the lengths checked once before the loop.
 */
import { IndexOutOfRangeError, UnknownNameError } from './errors.ts';

/** `array[index]`, checked: throws `IndexOutOfRangeError` when `index` is not an integer in `[0, array.length)`. */
export function at<T>(array: ArrayLike<T>, index: number, what = 'array'): T {
  if (!Number.isInteger(index) || index < 0 || index >= array.length)
    throw new IndexOutOfRangeError(what, index, array.length);
  return array[index] as T;
}

/** `record[key]`, checked: throws `UnknownNameError` (naming `what` and the keys there are) unless `key` is an own key of `record`. */
export function entry<T>(record: Readonly<Record<string, T>>, key: string, what = 'key'): T {
  if (!Object.hasOwn(record, key)) throw new UnknownNameError(what, key, Object.keys(record));
  return record[key] as T;
}
