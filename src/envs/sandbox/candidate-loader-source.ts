/**
 * The JavaScript evaluated INSIDE the candidate realm (a `vm` context with a null-prototype
 * global, code generation from strings off), from this source string, so no host function or
 * object ever crosses into it. It is a small CommonJS loader over the candidate's files plus the
 * candidate half of the copy-only boundary (copy-boundary-source.ts is the host half):
 *
 *   __agentrl.define(path, kind, factory, text)   at setup, before any candidate code runs
 *   __agentrl.invoke(requestJson) → answerJson    every later crossing: strings in, strings out
 *
 * Values cross as JSON text in a tagged encoding: JSON primitives as themselves; `{t: …}` for
 * undefined, special numbers, bigint, arrays, plain objects, Map, Set, Date and errors (copied);
 * anything else (functions, class instances, cycles) as `{t: 'handle', id}` — the host gets a
 * proxy whose every operation is another `invoke`. Promises are `{t: 'promise', id}`, read back
 * with `settle` once the context's microtasks have drained.
 *
 * Candidate code can patch everything here (it shares the realm); that only changes what its own
 * code answers. The host trusts nothing in an answer but its being a string of JSON.
 */
export const candidateLoaderSource = String.raw`(function () {
  'use strict';
  const parse = JSON.parse, stringify = JSON.stringify, isArray = Array.isArray, keysOf = Object.keys;
  const getPrototypeOf = Object.getPrototypeOf, defineProperty = Object.defineProperty, freeze = Object.freeze;
  const apply = Reflect.apply, construct = Reflect.construct, reflectGet = Reflect.get, reflectSet = Reflect.set, reflectHas = Reflect.has;
  const reflectDelete = Reflect.deleteProperty, getOwn = Reflect.getOwnPropertyDescriptor;
  const ObjectPrototype = Object.prototype, ErrorType = Error, SyntaxErrorType = SyntaxError, MapType = Map, SetType = Set, DateType = Date, PromiseType = Promise, SymbolType = Symbol;
  const definitions = new MapType(), cache = new MapType(), handles = [], handleIds = new MapType(), promiseStates = new MapType();
  const assertNames = ['assert', 'node:assert', 'assert/strict', 'node:assert/strict'];
  let assertModule = null;

  function normalize(path) {
    const out = [];
    for (const part of path.split('/')) {
      if (part === '' || part === '.') continue;
      if (part === '..') { if (out.length === 0) throw new ErrorType('path leaves the repository: ' + path); out.pop(); } else out.push(part);
    }
    return out.join('/');
  }
  function dirname(path) { const at = path.lastIndexOf('/'); return at < 0 ? '' : path.slice(0, at); }
  function resolve(from, request) {
    if (!(request.startsWith('./') || request.startsWith('../'))) {
      throw new ErrorType("Cannot find module '" + request + "': only relative paths inside the repository load in the sandbox (no node built-ins, no packages)");
    }
    const base = normalize(dirname(from) + '/' + request);
    for (const path of [base, base + '.js', base + '.json', base + '/index.js']) if (definitions.has(path)) return path;
    throw new ErrorType("Cannot find module '" + request + "' from " + from);
  }
  function requireFrom(from) {
    return function require(request) {
      request = String(request);
      if (assertModule !== null && assertNames.includes(request)) return assertModule;
      return load(resolve(from, request)).exports;
    };
  }
  function load(path) {
    const cached = cache.get(path);
    if (cached !== undefined) return cached;
    const definition = definitions.get(path);
    const module = { exports: {}, id: path, filename: path, loaded: false };
    cache.set(path, module);
    try {
      if (definition.kind === 'json') module.exports = parse(definition.text);
      else if (definition.kind === 'broken') throw new SyntaxErrorType(definition.text + ' (' + path + ')');
      else apply(definition.factory, module.exports, [module.exports, requireFrom(path), module, path, dirname(path)]);
    } catch (error) {
      cache.delete(path);
      throw error;
    }
    module.loaded = true;
    return module;
  }

  function handleOf(value) {
    let id = handleIds.get(value);
    if (id === undefined) { id = handles.length; handles.push(value); handleIds.set(value, id); }
    return id;
  }
  function encodeNumber(value) {
    if (value !== value || value === Infinity || value === -Infinity) return { t: 'number', v: String(value) };
    return value === 0 && 1 / value < 0 ? { t: 'number', v: '-0' } : value;
  }
  function encode(value, depth, seen) {
    const type = typeof value;
    if (type === 'undefined') return { t: 'undefined' };
    if (type === 'number') return encodeNumber(value);
    if (type === 'string' || type === 'boolean' || value === null) return value;
    if (type === 'bigint') return { t: 'bigint', v: String(value) };
    if (type === 'symbol') return { t: 'symbol', v: String(value.description) };
    if (type === 'function') return { t: 'handle', id: handleOf(value), callable: true };
    if (value instanceof PromiseType) {
      const id = handleOf(value);
      if (!promiseStates.has(id)) {
        const state = { state: 'pending', value: undefined };
        promiseStates.set(id, state);
        value.then((result) => { state.state = 'fulfilled'; state.value = result; }, (error) => { state.state = 'rejected'; state.value = error; });
      }
      return { t: 'promise', id };
    }
    if (depth > 32 || seen.has(value)) return { t: 'handle', id: handleOf(value), callable: false };
    seen.add(value);
    const next = (item) => encode(item, depth + 1, seen);
    if (isArray(value)) { const items = []; for (let i = 0; i < value.length; i++) items.push(next(value[i])); return { t: 'array', v: items }; }
    if (value instanceof MapType) { const entries = []; for (const [key, item] of value) entries.push([next(key), next(item)]); return { t: 'map', v: entries }; }
    if (value instanceof SetType) { const items = []; for (const item of value) items.push(next(item)); return { t: 'set', v: items }; }
    if (value instanceof DateType) return { t: 'date', v: encodeNumber(value.getTime()) };
    if (value instanceof ErrorType) return describeError(value);
    const prototype = getPrototypeOf(value);
    if (prototype === ObjectPrototype || prototype === null) {
      const entries = [];
      for (const key of keysOf(value)) entries.push([key, next(value[key])]);
      return { t: 'object', v: entries };
    }
    return { t: 'handle', id: handleOf(value), callable: false };
  }
  function describeError(error) {
    try {
      const code = error.code;
      return { t: 'error', name: String(error.name), message: String(error.message), code: typeof code === 'string' ? code : null };
    } catch (unreadable) {
      return { t: 'error', name: 'Error', message: 'unreadable error', code: null };
    }
  }
  function decode(value) {
    if (value === null || typeof value !== 'object') return value;
    const items = (list) => { const out = []; for (const item of list) out.push(decode(item)); return out; };
    switch (value.t) {
      case 'undefined': return undefined;
      case 'number': return Number(value.v);
      case 'bigint': return BigInt(value.v);
      case 'ref': return handles[value.id];
      case 'array': return items(value.v);
      case 'map': { const out = new MapType(); for (const pair of value.v) out.set(decode(pair[0]), decode(pair[1])); return out; }
      case 'set': return new SetType(items(value.v));
      case 'date': return new DateType(decode(value.v));
      case 'error': { const error = new ErrorType(value.message); error.name = value.name; return error; }
      case 'object': {
        const out = {};
        for (const [key, item] of value.v) defineProperty(out, key, { value: decode(item), writable: true, enumerable: true, configurable: true });
        return out;
      }
      default: throw new ErrorType('unknown value kind ' + value.t);
    }
  }
  function keyOf(key) { return typeof key === 'string' ? key : SymbolType[key.symbol]; }

  function answer(request) {
    const target = request.target === undefined ? undefined : handles[request.target];
    switch (request.op) {
      case 'require': {
        const exported = load(resolve(request.from, request.request)).exports;
        const kind = typeof exported;
        return kind === 'function' || (kind === 'object' && exported !== null) ? { t: 'handle', id: handleOf(exported), callable: kind === 'function' } : encode(exported, 0, new SetType());
      }
      case 'get': return encode(reflectGet(target, keyOf(request.key)), 0, new SetType());
      case 'set': return reflectSet(target, keyOf(request.key), decode(request.value));
      case 'has': return reflectHas(target, keyOf(request.key));
      case 'delete': return reflectDelete(target, keyOf(request.key));
      case 'keys': return encode(keysOf(target), 0, new SetType());
      case 'own': { const own = getOwn(target, request.key); return own === undefined ? false : own.enumerable === true; }
      case 'call': return encode(apply(target, decode(request.this), items(request.args)), 0, new SetType());
      case 'construct': return encode(construct(target, items(request.args)), 0, new SetType());
      case 'settle': { const state = promiseStates.get(request.target); return { t: 'array', v: [state.state, encode(state.value, 0, new SetType())] }; }
      default: throw new ErrorType('unknown operation ' + request.op);
    }
    function items(list) { const out = []; for (const item of list) out.push(decode(item)); return out; }
  }

  const bridge = freeze({
    define(path, kind, factory, text) {
      definitions.set(path, { kind, factory, text });
    },
    useAssert(factory) {
      const module = { exports: {} };
      apply(factory, module.exports, [module.exports, module]);
      assertModule = module.exports;
    },
    invoke(requestText) {
      try {
        return stringify({ ok: true, value: answer(parse(requestText)) });
      } catch (error) {
        try {
          return stringify({ ok: false, thrown: error instanceof ErrorType ? describeError(error) : encode(error, 0, new SetType()) });
        } catch (unreadable) {
          return '{"ok":false,"thrown":{"t":"error","name":"Error","message":"unreadable thrown value","code":null}}';
        }
      }
    },
  });
  defineProperty(globalThis, '__agentrl', { value: bridge, writable: false, enumerable: false, configurable: false });
})();
`;
