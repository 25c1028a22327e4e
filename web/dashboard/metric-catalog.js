// What each recorded metric means, for chart titles and the picker's groups. A metric that is
// not listed (a new one, or a custom reward's) still gets a chart, under "other".
export const METRICS = {
  reward: ['episodes', 'reward (mean episode return)'],
  success: ['episodes', 'success rate'],
  validationSuccess: ['episodes', 'validation success (held-out seeds)'],
  invalidActionRate: ['episodes', 'invalid-action rate'],
  responseLength: ['episodes', 'response length (generated tokens per episode)'],
  responseLengthMax: ['episodes', 'longest response (tokens)'],
  rewardStdWithinGroup: ['episodes', 'reward spread within a group (mean std)'],
  uniformRewardGroupFraction: ['episodes', 'groups whose episodes all scored the same'],
  episodes: ['episodes', 'episodes per iteration'],
  loss: ['update', 'loss'],
  pgLoss: ['update', 'policy-gradient loss'],
  valueLoss: ['update', 'value loss'],
  klToReference: ['update', 'KL to the reference policy (in the loss or off the rewards)'],
  ppoKl: ['update', 'policy drift: KL to the sampling policy (k1)'],
  approxKl: ['update', 'policy drift: KL to the sampling policy (k3)'],
  // Runs recorded before klToReference: KL to the reference with grpo, policy drift (k1) otherwise.
  kl: ['update', 'KL (older runs: to the reference with grpo, else drift)'],
  entropy: ['update', 'entropy'],
  clipfrac: ['update', 'clip fraction'],
  gradNorm: ['update', 'gradient norm (before clipping)'],
  learningRate: ['update', 'learning rate'],
  trained: ['tokens', 'trajectories trained on (after dynamic sampling)'],
  trainedTokens: ['tokens', 'trained tokens (loss mask 1)'],
  sampledTokens: ['tokens', 'generated tokens (all sampled episodes)'],
  generationBatches: ['tokens', 'generation batches'],
  rolloutTokensPerSecond: ['speed', 'throughput: generated tokens/s'],
  trainTokensPerSecond: ['speed', 'throughput: trained tokens/s'],
  seconds: ['speed', 'seconds per iteration'],
};

export const GROUPS = ['episodes', 'rewards', 'monitor', 'update', 'tokens', 'speed', 'other'];

/** Charted in the Rewards panel: every named reward component, its failures, and every monitor signal. */
export function isRewardPanelMetric(key) {
  return key === 'rewardFailures' || key.startsWith('reward/') || key.startsWith('monitor/');
}

/** Shown when the address names no metrics: the ones a practitioner looks at first. */
export const DEFAULT_METRICS = [
  'reward',
  'success',
  'validationSuccess',
  'klToReference',
  'kl',
  'entropy',
  'loss',
  'clipfrac',
  'gradNorm',
  'responseLength',
  'rewardStdWithinGroup',
];

export function metricGroup(key) {
  if (key === 'rewardFailures' || key.startsWith('reward/')) return 'rewards';
  if (key.startsWith('monitor/')) return 'monitor';
  return METRICS[key]?.[0] ?? 'other';
}

export function metricTitle(key) {
  if (key === 'rewardFailures') return 'episodes whose reward could not be scored (their groups not trained on)';
  const [family, name, detail] = key.split('/');
  if (family === 'reward' && name !== undefined)
    return detail === 'failures'
      ? `reward ${name}: episodes it failed on`
      : `reward component ${name} (mean per episode)`;
  if (family === 'monitor' && name !== undefined)
    return detail === 'fired' ? `monitor ${name}: fired (1) or not (0)` : `monitor signal ${name}`;
  return METRICS[key]?.[1] ?? key;
}
