/**
 * The host half of the candidate realm, as JavaScript source for a sandbox script (it runs in the
 * sandbox process's own, trusted realm): `createCandidateRealm(files, options)` builds the
 * candidate realm (candidate-loader-source.ts), compiles the candidate's files into it, and
 * returns `{ require(from, request) }`, whose result is a proxy onto the candidate's exports.
 *
 * The copy-only boundary: every crossing is `vm.runInContext('__agentrl.invoke("<json>")')`
 * with a per-crossing CPU timeout; what comes back is used only when it is a string, parsed
 * with this realm's JSON. Arguments go in as data (a host function argument is refused); results
 * come out as data or as a proxy whose traps are further crossings; a thrown candidate error
 * becomes a host Error of the same name with the message copied. The host never reads a property
 * of a candidate object (not even an error's `stack`, whose formatting would hand a host-realm
 * CallSite array to a candidate `Error.prepareStackTrace`).
 */
import { candidateLoaderSource } from './candidate-loader-source.ts';

const copyBoundarySource = String.raw`
function createCandidateRealm(files, options) {
  'use strict';
  const vm = require('node:vm');
  const { isProxy } = require('node:util').types;
  const callTimeoutMs = options.callTimeoutMs;
  const context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false }, microtaskMode: 'afterEvaluate' });
  vm.runInContext(CANDIDATE_LOADER_SOURCE, context, { filename: 'agentrl:candidate-loader.js', timeout: callTimeoutMs });
  const bridge = vm.runInContext('__agentrl', context);
  const define = bridge.define, useAssert = bridge.useAssert;
  const parameters = ['exports', 'require', 'module', '__filename', '__dirname'];
  const compile = (source, filename, names) => vm.compileFunction(source, names, { parsingContext: context, filename });
  for (const path of Object.keys(files).sort()) {
    const source = files[path];
    if (path.endsWith('.json')) define(path, 'json', null, source);
    else if (path.endsWith('.js') || path.endsWith('.cjs')) {
      let factory = null;
      try {
        factory = compile(source, path, parameters);
      } catch (error) {
        define(path, 'broken', null, 'SyntaxError: ' + String(error && error.message).slice(0, 200));
        continue;
      }
      define(path, 'js', factory, null);
    }
  }
  if (options.assertSource !== undefined) useAssert(compile(options.assertSource, 'agentrl:assert.js', ['exports', 'module']));

  const hostErrors = { Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };
  const proxies = new Map();
  const proxyIds = new WeakMap();
  const wellKnown = ['iterator', 'asyncIterator', 'hasInstance', 'toPrimitive', 'toStringTag', 'isConcatSpreadable', 'species'];

  function crossing(request) {
    let text;
    try {
      text = vm.runInContext('__agentrl.invoke(' + JSON.stringify(JSON.stringify(request)) + ')', context, { timeout: callTimeoutMs, filename: 'agentrl:crossing' });
    } catch (error) {
      // A vm timeout error is made in the candidate's context; read only own data properties (no getters, no traps).
      const own = (key) => { const found = error !== null && typeof error === 'object' && !isProxy(error) ? Reflect.getOwnPropertyDescriptor(error, key) : undefined; return found !== undefined && typeof found.value === 'string' ? found.value : null; };
      if (own('code') === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new Error('Script execution timed out after ' + callTimeoutMs + 'ms');
      throw new Error('candidate code failed outside the boundary' + (own('message') === null ? '' : ': ' + own('message').slice(0, 200)));
    }
    if (typeof text !== 'string') throw new Error('the candidate realm answered with something other than text');
    let answer;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new Error('the candidate realm answered with unreadable JSON');
    }
    if (answer === null || typeof answer !== 'object') throw new Error('the candidate realm answered with no result');
    if (answer.ok === true) return decode(answer.value);
    const thrown = decode(answer.thrown);
    throw thrown;
  }

  function decode(value) {
    if (value === null || typeof value !== 'object') return value;
    const list = (items) => { if (!Array.isArray(items)) throw new Error('malformed value from the candidate realm'); return items.map(decode); };
    const pairs = (items) => { if (!Array.isArray(items)) throw new Error('malformed value from the candidate realm'); return items.map((pair) => [decode(pair[0]), decode(pair[1])]); };
    switch (value.t) {
      case 'undefined': return undefined;
      case 'number': return Number(value.v);
      case 'bigint': return BigInt(String(value.v));
      case 'symbol': return Symbol(String(value.v));
      case 'array': return list(value.v);
      case 'map': return new Map(pairs(value.v));
      case 'set': return new Set(list(value.v));
      case 'date': return new Date(decode(value.v));
      case 'error': {
        const name = String(value.name);
        const Type = Object.hasOwn(hostErrors, name) ? hostErrors[name] : Error;
        const error = new Type(String(value.message));
        if (Type === Error && name !== 'Error') Object.defineProperty(error, 'name', { value: name, writable: true, configurable: true });
        if (typeof value.code === 'string') error.code = value.code;
        return error;
      }
      case 'object': {
        const out = {};
        for (const [key, item] of pairs(value.v)) Object.defineProperty(out, String(key), { value: item, writable: true, enumerable: true, configurable: true });
        return out;
      }
      case 'handle': return proxyOf(Number(value.id), value.callable === true);
      case 'promise': return promiseOf(Number(value.id));
      default: throw new Error('malformed value from the candidate realm');
    }
  }

  function encode(value, depth) {
    const type = typeof value;
    if (type === 'undefined') return { t: 'undefined' };
    if (type === 'number') return Number.isFinite(value) && !Object.is(value, -0) ? value : { t: 'number', v: Object.is(value, -0) ? '-0' : String(value) };
    if (type === 'string' || type === 'boolean' || value === null) return value;
    if (type === 'bigint') return { t: 'bigint', v: String(value) };
    if (proxyIds.has(value)) return { t: 'ref', id: proxyIds.get(value) };
    if (type === 'symbol' || type === 'function') throw new TypeError('a ' + type + ' cannot be passed to candidate code: only data crosses the sandbox boundary');
    if (depth > 32) throw new TypeError('value too deep to pass to candidate code');
    const next = (item) => encode(item, depth + 1);
    if (Array.isArray(value)) return { t: 'array', v: value.map(next) };
    if (value instanceof Map) return { t: 'map', v: [...value].map(([key, item]) => [next(key), next(item)]) };
    if (value instanceof Set) return { t: 'set', v: [...value].map(next) };
    if (value instanceof Date) return { t: 'date', v: encode(value.getTime(), depth) };
    if (value instanceof Error) return { t: 'error', name: String(value.name), message: String(value.message) };
    return { t: 'object', v: Object.keys(value).map((key) => [key, next(value[key])]) };
  }

  function keyOf(key) {
    if (typeof key === 'string') return key;
    const name = wellKnown.find((candidate) => Symbol[candidate] === key);
    return name === undefined ? undefined : { symbol: name };
  }

  function proxyOf(id, callable) {
    const known = proxies.get(id);
    if (known !== undefined) return known;
    const handler = {
      get: (_target, key) => { const k = keyOf(key); return k === undefined ? undefined : crossing({ op: 'get', target: id, key: k }); },
      set: (_target, key, value) => { const k = keyOf(key); return k !== undefined && crossing({ op: 'set', target: id, key: k, value: encode(value, 0) }) === true; },
      has: (_target, key) => { const k = keyOf(key); return k !== undefined && crossing({ op: 'has', target: id, key: k }) === true; },
      deleteProperty: (_target, key) => { const k = keyOf(key); return k !== undefined && crossing({ op: 'delete', target: id, key: k }) === true; },
      apply: (_target, self, args) => crossing({ op: 'call', target: id, this: encode(self, 0), args: args.map((arg) => encode(arg, 0)) }),
      construct: (_target, args) => crossing({ op: 'construct', target: id, args: args.map((arg) => encode(arg, 0)) }),
    };
    if (!callable) {
      handler.ownKeys = () => { const keys = crossing({ op: 'keys', target: id }); return Array.isArray(keys) ? keys.filter((key) => typeof key === 'string') : []; };
      handler.getOwnPropertyDescriptor = (_target, key) =>
        typeof key === 'string' && crossing({ op: 'own', target: id, key }) === true ? { value: handler.get(_target, key), writable: true, enumerable: true, configurable: true } : undefined;
    }
    const proxy = new Proxy(callable ? function candidateFunction() {} : {}, handler);
    proxies.set(id, proxy);
    proxyIds.set(proxy, id);
    return proxy;
  }

  function promiseOf(id) {
    return new Promise((resolve, reject) => {
      setImmediate(() => {
        try {
          const [state, value] = crossing({ op: 'settle', target: id });
          if (state === 'fulfilled') resolve(value);
          else if (state === 'rejected') reject(value);
          else reject(new Error('a candidate promise never settled (the sandbox has no timers or I/O)'));
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  return { require: (from, request) => crossing({ op: 'require', from, request }) };
}
`;

/** Sandbox-script source that defines `createCandidateRealm(files, { callTimeoutMs, assertSource? })`. */
export const candidateRealmSource = `const CANDIDATE_LOADER_SOURCE = ${JSON.stringify(candidateLoaderSource)};\n${copyBoundarySource}`;
