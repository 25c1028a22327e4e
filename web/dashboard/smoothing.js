// TensorBoard's smoothing: an exponential moving average with its start-up bias removed
// (s_t = w·s_{t-1} + (1 − w)·x_t, divided by 1 − w^t), skipping missing values.
export function smooth(values, weight) {
  if (!(weight > 0)) return values.slice();
  let last = 0;
  let count = 0;
  return values.map((value) => {
    if (value === null || !Number.isFinite(value)) return null;
    count++;
    last = last * weight + (1 - weight) * value;
    return last / (1 - weight ** count);
  });
}
