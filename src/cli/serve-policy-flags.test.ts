import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestLimitsSchema } from '../serve/openai/request-limits.ts';
import { parseFlags, validateFlags } from './flags.ts';
import { servePolicyCommandSchema } from './serve-commands.ts';

test('serve-policy takes the request limits as flags (request-limits.ts), defaults for the rest; a bad one is refused', () => {
  const argv = [
    '--max-tools',
    '4',
    '--max-body-bytes',
    '65536',
    '--max-choices',
    '8',
    '--max-completion-tokens',
    '256',
  ];
  const options = validateFlags(servePolicyCommandSchema, parseFlags(servePolicyCommandSchema, argv).values);
  const limits = requestLimitsSchema.parse(options);
  assert.equal(limits.maxTools, 4);
  assert.equal(limits.maxBodyBytes, 65536);
  assert.equal(limits.maxChoices, 8);
  assert.equal(limits.maxCompletionTokens, 256);
  assert.equal(requestLimitsSchema.parse({}).maxCompletionTokens, undefined, 'default: the context window');
  assert.equal(limits.maxMessages, requestLimitsSchema.parse({}).maxMessages);
  const negative = parseFlags(servePolicyCommandSchema, ['--max-messages', '-1']).values;
  assert.throws(() => validateFlags(servePolicyCommandSchema, negative), /maxMessages|max-messages/);
});

test("serve-policy ends replies at the checkpoint's trained stop strings unless --no-trained-stops", () => {
  const parse = (argv: string[]) =>
    validateFlags(servePolicyCommandSchema, parseFlags(servePolicyCommandSchema, argv).values).trainedStops;
  assert.equal(parse([]), true);
  assert.equal(parse(['--no-trained-stops']), false);
  assert.equal(parse(['--trained-stops', 'false']), false);
});
