/**
 * The test harness, as sandbox-script source (run-tests.ts runs it). It lives in the sandbox
 * process's trusted realm; the candidate's files live only in the candidate realm
 * (sandbox/copy-boundary-source.ts). `input.tests` lists the test files in order:
 *
 * - `{ file, source }`: a TRUSTED test file (from the instance data, never from the candidate's
 *   copy): compiled here, with the real `node:assert`; its `require('../src/x.js')` returns a
 *   proxy onto the candidate's module, so tests reach candidate code only through the copy-only
 *   boundary and candidate code cannot patch `assert`, `Object.entries` or anything else here;
 * - `{ file }`: one of the candidate's own test files (the agent's `run_tests`): loaded and run
 *   inside the candidate realm with its small assert (sandbox/candidate-assert-source.ts).
 *
 * A test file exports `{ 'test name': () => { … } }`; each test is awaited. The outcomes go back
 * through `emit`, which only this realm can reach.
 */
export const testHarnessSource = String.raw`
(async () => {
  'use strict';
  const vm = require('node:vm');
  const assertNames = ['assert', 'node:assert', 'assert/strict', 'node:assert/strict'];
  const message = (error) => {
    try { return String(error && error.message !== undefined ? error.message : error).replace(/\s+/g, ' ').slice(0, 160); } catch { return 'unreadable error'; }
  };
  const outcomes = [];
  let realm;
  try {
    realm = createCandidateRealm(input.candidateFiles, { callTimeoutMs: input.callTimeoutMs, assertSource: input.assertSource });
  } catch (error) {
    emit({ failure: 'the candidate files could not be set up: ' + message(error), outcomes });
    return;
  }
  const loadTrusted = (file, source) => {
    const module = { exports: {} };
    const directory = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
    const trustedRequire = (request) => (assertNames.includes(request) ? require(request) : realm.require(file, String(request)));
    const factory = vm.compileFunction(source, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: 'trusted/' + file });
    factory.call(module.exports, module.exports, trustedRequire, module, file, directory);
    return module.exports;
  };
  for (const test of input.tests) {
    let tests;
    let names;
    try {
      tests = test.source !== undefined ? loadTrusted(test.file, test.source) : realm.require('', './' + test.file);
      names = Object.keys(tests);
    } catch (error) {
      outcomes.push({ file: test.file, name: '(load)', pass: false, error: message(error) });
      continue;
    }
    for (const name of names) {
      try {
        await tests[name]();
        outcomes.push({ file: test.file, name, pass: true });
      } catch (error) {
        outcomes.push({ file: test.file, name, pass: false, error: message(error) });
      }
    }
  }
  emit({ failure: null, outcomes });
})();
`;
