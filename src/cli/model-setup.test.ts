import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEnvironment } from '../envs/index.ts';
import { parseFlags, validateFlags } from './flags.ts';
import { modelSetupSchema, prepareModel } from './model-setup.ts';

const flags = (argv: string[]) => validateFlags(modelSetupSchema, parseFlags(modelSetupSchema, argv).values);

test('--base-quantization: int8 reaches the model agentrl train starts from; an unknown value is refused naming the allowed ones', async () => {
  assert.throws(() => flags(['--base-quantization', 'int9']), /--base-quantization.*float32.*int8.*int4/s);
  const options = flags(['--base-quantization', 'int8', '--hidden-size', '16', '--num-layers', '1', '--no-warm-start']);
  assert.equal(options.baseQuantization, 'int8');
  const model = await prepareModel(
    { ...options, seed: 1, maxTurns: 2, maxNewTokens: 4, systemPrompt: false },
    getEnvironment('frozen-lake'),
    { valueHead: false, label: 'test' },
  );
  assert.equal(model.baseQuantization, 'int8');
  assert.equal(
    (
      await prepareModel(
        { ...options, baseQuantization: undefined, seed: 1, maxTurns: 2, maxNewTokens: 4, systemPrompt: false },
        getEnvironment('frozen-lake'),
        { valueHead: false, label: 'test' },
      )
    ).baseQuantization,
    'float32',
  );
  await model.release();
});
