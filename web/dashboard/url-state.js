// The page's state in its address, so a view can be linked: /runs/<run> selects one run;
// ?runs=a,b&metrics=reward,kl&x=step|seconds|tokens&smooth=0.6&log=1&trajectory=<run>/<step>/<index>
// (or &group=<run>/<step>/<group id>) restores the rest. Written with replaceState as it changes.

export function readUrlState(location) {
  const query = new URLSearchParams(location.search);
  const list = (key) => (query.get(key) ?? '').split(',').filter(Boolean);
  const pathRun = /^\/runs\/([^/]+)\/?$/.exec(location.pathname);
  const smoothing = Number(query.get('smooth'));
  return {
    runs: pathRun ? [decodeURIComponent(pathRun[1])] : list('runs'),
    metrics: list('metrics'),
    xAxis: ['step', 'seconds', 'tokens'].includes(query.get('x')) ? query.get('x') : 'step',
    smoothing: query.has('smooth') && Number.isFinite(smoothing) ? Math.min(0.99, Math.max(0, smoothing)) : 0.6,
    logScale: query.get('log') === '1',
    trajectory: query.get('trajectory'),
    group: query.get('group'),
    refreshMs: Number(query.get('refresh')) > 0 ? Number(query.get('refresh')) : 5000,
  };
}

export function writeUrlState(state) {
  const query = new URLSearchParams();
  if (state.runs.length > 0) query.set('runs', state.runs.join(','));
  if (state.metrics.length > 0) query.set('metrics', state.metrics.join(','));
  if (state.xAxis !== 'step') query.set('x', state.xAxis);
  query.set('smooth', String(state.smoothing));
  if (state.logScale) query.set('log', '1');
  if (state.trajectory) query.set('trajectory', state.trajectory);
  if (state.group) query.set('group', state.group);
  if (state.refreshMs !== 5000) query.set('refresh', String(state.refreshMs));
  const text = query.toString().replaceAll('%2C', ',').replaceAll('%2F', '/');
  history.replaceState(null, '', `/?${text}`);
}
