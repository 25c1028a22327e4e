/**
 * One `TokenLoss` as Tinker calls (the encodings: ./wire.ts, ./server-loss.ts). A loss the server
 * computes itself goes in ONE forward_backward with the sampler's log-probs; any other loss
 * follows the SDK's `forward_backward_custom`: a forward only when the gradient needs the current
 * log-probs, `compute` here, then forward_backward with the gradient as per-token inputs.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import type { TokenLoss } from '../../core/loss.ts';
import type { LossReport } from '../types.ts';
import { TinkerError } from './tinker-error.ts';
import { refuseUnsupportedGradients } from './tinker-options.ts';
import type { TinkerTraining } from './tinker-training.ts';
import { serverLossData, serverLossOf } from './server-loss.ts';
import { gradientData, type LossReduction, logprobsOfOutput, needsCurrentLogprobs, scoringData } from './wire.ts';

export function checkTemperature(temperature: number | undefined, method: string): void {
  if ((temperature ?? 1) !== 1)
    throw new InvalidArgumentError(
      `TinkerPolicy.${method} works at temperature 1 only (the server's forward has no temperature); got ${temperature}`,
      { temperature },
    );
}

function parseLogprobs(answer: unknown, sequences: readonly (readonly number[])[]): Float32Array[] {
  const logprobs = logprobsOfOutput(answer, sequences);
  if (typeof logprobs === 'string')
    throw new TinkerError(`POST /api/v1/forward_backward: ${logprobs}`, {
      endpoint: 'POST /api/v1/forward_backward',
      status: 200,
      body: JSON.stringify(answer).slice(0, 500),
      attempts: 1,
    });
  return logprobs;
}

/** Per-token log-probs of the sequences under the training weights: a forward_backward with `forward_only`. */
export async function scoreSequences(
  training: TinkerTraining,
  sequences: readonly (readonly number[])[],
): Promise<Float32Array[]> {
  const answer = await training.forwardBackward({
    data: scoringData(sequences),
    lossFunction: 'cross_entropy',
    forwardOnly: true,
  });
  return parseLogprobs(answer, sequences);
}

const trainedTokens = (gradients: readonly ArrayLike<number>[]): number =>
  gradients.reduce((sum, grad) => sum + Array.from(grad).filter((g) => g !== 0).length, 0);

/**
 * Sends the loss's forward_backward (after a forward when needed); resolves once it is queued
 * behind the model's earlier requests, with its pending report — an optim_step sent next goes
 * right behind it.
 */
export async function submitLoss(
  training: TinkerTraining,
  sequences: readonly (readonly number[])[],
  loss: TokenLoss,
  reduction: LossReduction,
  onForwardMs: (ms: number) => void,
): Promise<{ report: Promise<LossReport> }> {
  const server = serverLossOf(loss);
  if (server !== undefined && reduction === 'sum') {
    const { data, lossConfig } = serverLossData(sequences, server);
    const answer = training.forwardBackward({
      data,
      lossFunction: server.lossFunction,
      ...(lossConfig === undefined ? {} : { lossConfig }),
      forwardOnly: false,
    });
    const report = answer.then((result) => {
      const computed = loss.compute({ logprobs: parseLogprobs(result, sequences) });
      return {
        ...computed,
        metrics: { ...computed.metrics, ...result.metrics },
        tokens: trainedTokens(server.advantages),
      };
    });
    return { report };
  }
  let output = loss.dependsOnCurrent
    ? undefined
    : loss.compute({ logprobs: sequences.map((sequence) => new Float32Array(sequence.length)) });
  let current: Float32Array[] | undefined;
  if (output === undefined || needsCurrentLogprobs(output.gradLogprobs, reduction)) {
    const started = performance.now();
    current = await scoreSequences(training, sequences);
    onForwardMs(performance.now() - started);
    output = loss.compute({ logprobs: current });
  }
  refuseUnsupportedGradients(output.gradValues, output.gradEntropies);
  const { lossFunction, data } = gradientData(sequences, output.gradLogprobs, reduction, current);
  const computed = output;
  const answer = training.forwardBackward({ data, lossFunction, forwardOnly: false });
  const report = answer.then((result) => {
    // The gradient did not need the log-probs; the loss value does: read them off the answer.
    const value = current === undefined ? loss.compute({ logprobs: parseLogprobs(result, sequences) }) : computed;
    return { ...value, tokens: trainedTokens(computed.gradLogprobs) };
  });
  return { report };
}
