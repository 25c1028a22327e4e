/**
 * The candidate realm's only sources of nondeterminism — `Math.random` and the clock (`Date.now`,
 * `new Date()`, `Date()`, `Intl.DateTimeFormat#format()` / `formatToParts()` without a date) —
 * replaced before any candidate code runs (function-runner.ts), so that a run can be made
 * repeatable and any use of them is seen:
 *
 *   const install = vm.runInContext(realmEntropySource, context);
 *   const readUse = install(seed, clockMs);   // seed null: the real sources, still recorded
 *   …candidate code…
 *   readUse()   // bit 1: it read Math.random; bit 2: it read the clock
 *
 * With a seed, `Math.random` is mulberry32 from that seed and the clock stands still at `clockMs`.
 * The realm has no other: no `crypto`, `performance`, timers or I/O (a `vm` context with a
 * null-prototype global holds the language built-ins only). The original `Date` is unreachable
 * afterwards: the global and `Date.prototype.constructor` both name the replacement, whose
 * `prototype` is the original's, so `instanceof Date` and every date method keep working.
 * The use record lives in the installer's closure: candidate code can call the replacements but
 * never reset what they recorded.
 */
export const entropyUse = { random: 1, clock: 2 } as const;

/** Names of the sources a `readUse()` bitmask says were read. */
export function entropySourcesOf(used: number): string[] {
  const names: string[] = [];
  if ((used & entropyUse.random) !== 0) names.push('Math.random');
  if ((used & entropyUse.clock) !== 0) names.push('the clock (Date, Intl.DateTimeFormat)');
  return names;
}

/** Source of `(seed: number | null, clockMs: number) => readUse`, evaluated in the candidate realm before its code. */
export const realmEntropySource = `(function installEntropy(seed, clockMs) {
  'use strict';
  const RealDate = Date, realRandom = Math.random, realNow = Date.now, imul = Math.imul;
  const construct = Reflect.construct, defineProperty = Object.defineProperty;
  const seeded = typeof seed === 'number';
  let used = 0;
  let state = seeded ? seed >>> 0 : 0;
  const random = function random() {
    used |= ${entropyUse.random};
    if (!seeded) return realRandom();
    state = (state + 0x6d2b79f5) | 0;
    let t = imul(state ^ (state >>> 15), state | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const now = function now() {
    used |= ${entropyUse.clock};
    return seeded ? clockMs : realNow();
  };
  const PatchedDate = function Date(year, month, day, hours, minutes, seconds, ms) {
    const args = [];
    for (let i = 0; i < arguments.length; i++) args[i] = arguments[i];
    if (new.target === undefined) return construct(RealDate, [now()], RealDate).toString();
    return construct(RealDate, args.length === 0 ? [now()] : args, new.target);
  };
  defineProperty(PatchedDate, 'prototype', { value: RealDate.prototype });
  defineProperty(RealDate.prototype, 'constructor', { value: PatchedDate, writable: true, configurable: true });
  PatchedDate.now = now;
  PatchedDate.parse = RealDate.parse;
  PatchedDate.UTC = RealDate.UTC;
  globalThis.Date = PatchedDate;
  Math.random = random;
  const formats = Intl.DateTimeFormat.prototype;
  const formatGetter = Object.getOwnPropertyDescriptor(formats, 'format').get;
  const realFormatToParts = formats.formatToParts;
  const call = Function.prototype.call.bind(Function.prototype.call);
  defineProperty(formats, 'format', {
    configurable: true,
    get() {
      const format = call(formatGetter, this);
      return (date) => format(date === undefined ? now() : date);
    },
  });
  defineProperty(formats, 'formatToParts', {
    writable: true,
    configurable: true,
    value: function formatToParts(date) {
      return call(realFormatToParts, this, date === undefined ? now() : date);
    },
  });
  return function readUse() { return used; };
})`;
