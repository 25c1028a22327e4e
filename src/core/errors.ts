/**
 * Typed errors. Every error agentrl throws from library code is an `AgentRlError` with a stable
 * `code` and structured `details`, so callers can branch on the kind without parsing messages.
 */
export class AgentRlError extends Error {
  readonly code: string;
  readonly details: Record<string, unknown>;
  constructor(code: string, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }
}

/** A value given by the caller is outside what is allowed; the message lists the allowed values. */
export class InvalidArgumentError extends AgentRlError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('INVALID_ARGUMENT', message, details);
  }
}

/** A tool refused its call (a missing file, a used-up budget, a failed remote tool); the agent sees the message as the tool's result. */
export class ToolError extends AgentRlError {
  constructor(tool: string, message: string, details: Record<string, unknown> = {}) {
    super('TOOL_ERROR', message, { tool, ...details });
  }
}

/** Input data (a JSONL file, a checkpoint, a config file) is malformed; `details` locate it. */
export class DataFormatError extends AgentRlError {
  constructor(message: string, details: { file?: string; line?: number; key?: string } & Record<string, unknown> = {}) {
    super('DATA_FORMAT', message, details);
  }
}

/** An index (a token position, a layer, a row) is outside `[0, length)` of the array it reads; `details` hold both. */
export class IndexOutOfRangeError extends AgentRlError {
  readonly index: number;
  readonly length: number;
  constructor(what: string, index: number, length: number) {
    super(
      'INDEX_OUT_OF_RANGE',
      `${what}[${index}] is out of range: the length is ${length}, so an index must be an integer in [0, ${length})`,
      {
        what,
        index,
        length,
      },
    );
    this.index = index;
    this.length = length;
  }
}

/** `step()` was called on an episode that has already ended. */
export class EpisodeEndedError extends AgentRlError {
  constructor(envName: string) {
    super('EPISODE_ENDED', `${envName}: step() called after the episode ended; call reset() first`, { env: envName });
  }
}

/** `step()` was called before `reset()`. */
export class EpisodeNotStartedError extends AgentRlError {
  constructor(envName: string) {
    super('EPISODE_NOT_STARTED', `${envName}: step() called before reset()`, { env: envName });
  }
}

/** A checkpoint or model folder could not be read. */
export class CheckpointError extends AgentRlError {
  constructor(message: string, details: Record<string, unknown> = {}, code = 'CHECKPOINT') {
    super(code, message, details);
  }
}

/** A model argument names no file, no folder and no pulled model; the message says how to get one (`agentrl models pull`). */
export class ModelNotFoundError extends CheckpointError {
  readonly spec: string;
  /** The models `agentrl models pull` knows. */
  readonly known: readonly string[];
  constructor(spec: string, message: string, details: { known: readonly string[] } & Record<string, unknown>) {
    super(message, { spec, ...details }, 'MODEL_NOT_FOUND');
    this.spec = spec;
    this.known = details.known;
  }
}

/** A model file or folder of an architecture the built-in model cannot run; the message names the supported ones. */
export class UnsupportedArchitectureError extends CheckpointError {
  readonly architecture: string;
  readonly supported: readonly string[];
  constructor({
    file,
    field,
    architecture,
    supported,
  }: { file: string; field: string; architecture: string; supported: readonly string[] }) {
    super(
      `${file}: ${field} ${architecture} is not supported; supported: ${supported.join(', ')} (the decoder families the built-in model runs)`,
      { file, field, architecture, supported },
      'UNSUPPORTED_ARCHITECTURE',
    );
    this.architecture = architecture;
    this.supported = supported;
  }
}

/** Weights of one model where another's are expected (a run resumed on other base weights); names both. */
export class ModelMismatchError extends CheckpointError {
  readonly expected: string;
  readonly actual: string;
  constructor(
    message: string,
    { expected, actual, ...details }: { expected: string; actual: string } & Record<string, unknown>,
  ) {
    super(message, { expected, actual, ...details }, 'MODEL_MISMATCH');
    this.expected = expected;
    this.actual = actual;
  }
}

/** A name (environment, algorithm, tool) is not one of the known ones. */
export class UnknownNameError extends AgentRlError {
  constructor(kind: string, name: string, allowed: readonly string[]) {
    super('UNKNOWN_NAME', `unknown ${kind} "${name}"; allowed: ${allowed.join(', ')}`, { kind, name, allowed });
  }
}

/**
 * Training produced a non-finite number (the loss or the global gradient norm is NaN or ±∞).
 * The trainer throws it before the iteration is handed to `onIteration`, so nothing of that
 * iteration is committed and the last good checkpoint stays the newest one. The in-memory model
 * may already hold the bad update: resume from the checkpoint, not from the object.
 */
export class NonFiniteError extends AgentRlError {
  readonly iteration: number;
  readonly quantity: 'loss' | 'gradient norm';
  readonly value: number;
  constructor({
    iteration,
    quantity,
    value,
    optimizerStep,
  }: { iteration: number; quantity: 'loss' | 'gradient norm'; value: number; optimizerStep: number }) {
    super(
      'NON_FINITE',
      `iteration ${iteration}: the ${quantity} is ${value} (optimizer step ${optimizerStep}); training stopped before committing the iteration, ` +
        'so the last good checkpoint is kept. Check the weights and rewards for NaN/∞, or lower the learning rate',
      { iteration, quantity, value, optimizerStep },
    );
    this.iteration = iteration;
    this.quantity = quantity;
    this.value = value;
  }
}

/**
 * A training backend cannot run what was asked of it (PPO's value head on a backend without one,
 * an entropy bonus, gradient clipping); refused before any rollout, naming the backend and the feature.
 */
export class UnsupportedCapabilityError extends AgentRlError {
  readonly backend: string;
  readonly feature: string;
  constructor({ backend, feature, needed }: { backend: string; feature: string; needed: string }, message: string) {
    super('UNSUPPORTED_CAPABILITY', message, { backend, feature, needed });
    this.backend = backend;
    this.feature = feature;
  }
}

/** A model's chat template cannot render a conversation (a Jinja error, or a shape agentrl cannot use). */
export class ChatTemplateError extends AgentRlError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('CHAT_TEMPLATE', message, details);
  }
}
