/**
 * The package's entries, imported by name through its own "exports" (a package can import itself):
 * every subpath resolves, and importing `agentrl` or `agentrl/algorithms` to compute a loss loads
 * none of the heavy dependencies — each child process records every module it resolves (a resolve
 * hook) and the test reads that list.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const heavy =
  /node_modules\/(onnxruntime-node|playwright-core|@modelcontextprotocol\/sdk|better-sqlite3)\/|^node:test$/;

// Runs in a fresh node: registers a resolve hook that posts each resolved URL back, runs `body`, prints the URLs as JSON.
const recorder = (body: string) => `
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const hook = "let port; export function initialize(data) { port = data.port; port.on('message', () => port.postMessage({ flushed: true })); port.unref(); } export async function resolve(specifier, context, next) { const result = await next(specifier, context); port.postMessage({ url: result.url }); return result; }";
const { port1, port2 } = new MessageChannel();
const resolved = [];
register('data:text/javascript,' + encodeURIComponent(hook), { data: { port: port2 }, transferList: [port2] });
const flushed = new Promise((done) => port1.on('message', (message) => (message.flushed ? done() : resolved.push(message.url))));
const result = await (async () => { ${body} })();
port1.postMessage('flush');
await flushed;
port1.close();
console.log(JSON.stringify({ result, resolved }));
`;

function runInFreshNode(body: string): { result: unknown; resolved: string[] } {
  // NODE_TEST_CONTEXT would make a child that imports node:test report to this runner.
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', recorder(body)], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '');
}

test('agentrl/algorithms computes a PPO loss without loading onnxruntime, playwright, the MCP SDK, SQLite or node:test', () => {
  const { result, resolved } = runInFreshNode(`
    const { ppoClipLoss } = await import('agentrl/algorithms');
    const out = ppoClipLoss({ logprobs: [[-1, -2]], oldLogprobs: [[-1.1, -1.9]], advantages: [[1, -1]], lossMask: [[1, 1]] });
    return out.loss;`);
  assert.ok(Number.isFinite(result), `loss ${String(result)}`);
  assert.ok(
    resolved.some((url) => url.endsWith('/src/algorithms/index.ts')),
    'resolved through the package name',
  );
  assert.deepEqual(
    resolved.filter((url) => heavy.test(url)),
    [],
  );
});

test('the root entry (agentrl) loads none of the heavy dependencies and still names the README quick-start API', () => {
  const { result, resolved } = runInFreshNode(`
    const agentrl = await import('agentrl');
    return ['TransformerModel', 'BuiltinPolicy', 'rollout', 'makeFrozenLake', 'splitSeeds', 'dpoPairLoss', 'startGateway', 'connectMcp']
      .filter((name) => agentrl[name] === undefined);`);
  assert.deepEqual(result, [], 'names missing from agentrl');
  assert.deepEqual(
    resolved.filter((url) => heavy.test(url)),
    [],
  );
});

test('every subpath resolves and exports its API; agentrl/testing holds the contract suites, ScriptedPolicy and fixtures', () => {
  const { result } = runInFreshNode(`
    const expected = {
      'agentrl/core': 'AgentRlError', 'agentrl/chat': 'loadChatFormat', 'agentrl/model': 'modelConfigSchema,loadModelSource', 'agentrl/engine': 'TransformerModel,generate',
      'agentrl/policy': 'OpenAIPolicy', 'agentrl/policy/tinker': 'TinkerPolicy', 'agentrl/envs': 'makeEnv',
      'agentrl/agents': 'runReAct', 'agentrl/rollout': 'rollout', 'agentrl/algorithms': 'grpoAdvantages',
      'agentrl/train': 'runRl', 'agentrl/serve': 'startPolicyServer', 'agentrl/trackers': 'openTracker',
      'agentrl/rewards': 'rubric,reward,pointwiseJudge,groupJudge,takeJudgeMetrics,envReward,envSuccess,actionFormat,overlongPenalty,scoreEpisodes,rubricFromSpec',
      'agentrl/testing': 'envContract,policyContract,trainableContract,ScriptedPolicy,tinyModelFolder,tinyChatmlFormat',
    };
    const missing = [];
    for (const [entry, names] of Object.entries(expected)) {
      const module = await import(entry);
      for (const name of names.split(',')) if (typeof module[name] !== 'function' && typeof module[name] !== 'object') missing.push(entry + ' ' + name);
    }
    return missing;`);
  assert.deepEqual(result, []);
});

test('agentrl/engine names the engine without loading it; onnxruntime loads with the first model that scores', () => {
  const imported = runInFreshNode(`
    const engine = await import('agentrl/engine');
    return [typeof engine.TransformerModel, typeof engine.generate];`);
  assert.deepEqual(imported.result, ['function', 'function']);
  assert.deepEqual(
    imported.resolved.filter((url) => heavy.test(url)),
    [],
  );
  const used = runInFreshNode(`
    const { TransformerModel } = await import('agentrl/engine');
    const model = await TransformerModel.create({ vocabSize: 16, hiddenSize: 8, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 16, maxSeqLen: 8 });
    const { logprobs } = await model.score([[1, 2, 3]]);
    await model.release();
    return logprobs[0].length;`);
  assert.equal(used.result, 3);
  assert.ok(
    used.resolved.some((url) => /node_modules\/onnxruntime-node\//.test(url)),
    'the engine runs on onnxruntime-node',
  );
});
