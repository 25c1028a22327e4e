// The trajectory browser: the run's episodes listed a page at a time, filtered by step, reward
// range and success (in SQL on the server), one episode at token level, or a whole task group
// side by side (the episodes GRPO compared with each other).
import { $, getJson, h } from './dom.js';
import { formatValue } from './format.js';
import { trajectoryBlocks, trajectorySummary } from './token-view.js';

const PAGE_SIZE = 20;

export class TrajectoryBrowser {
  /** onShow(link): the shown trajectory or group changed ({ trajectory } or { group }, as `run/step/index|group`). */
  constructor({ onShow }) {
    this.onShow = onShow;
    this.offset = 0;
    this.total = 0;
    for (const id of ['filter-step', 'filter-min-reward', 'filter-max-reward', 'filter-success'])
      $(id).addEventListener('change', () => this.loadList(0));
    $('trajectory-run').addEventListener('change', () => this.loadList(0, { showFirst: true }));
    $('page-prev').addEventListener('click', () => this.loadList(Math.max(0, this.offset - PAGE_SIZE)));
    $('page-next').addEventListener('click', () => this.loadList(this.offset + PAGE_SIZE));
  }

  run() {
    return $('trajectory-run').value;
  }

  query(offset) {
    const query = new URLSearchParams({ offset: String(offset), limit: String(PAGE_SIZE) });
    const step = $('filter-step').value.trim();
    const minReward = $('filter-min-reward').value.trim();
    const maxReward = $('filter-max-reward').value.trim();
    const success = $('filter-success').value;
    if (step !== '') query.set('step', step);
    if (minReward !== '') query.set('minReward', minReward);
    if (maxReward !== '') query.set('maxReward', maxReward);
    if (success !== '') query.set('success', success);
    return query;
  }

  async loadList(offset, { showFirst = false } = {}) {
    const run = this.run();
    if (!run) return;
    let page;
    try {
      page = await getJson(`/api/runs/${encodeURIComponent(run)}/trajectories?${this.query(offset)}`);
    } catch (error) {
      $('page-info').textContent = error.message;
      return;
    }
    this.offset = page.offset;
    this.total = page.total;
    const pages = Math.max(1, Math.ceil(page.total / PAGE_SIZE));
    $('page-info').textContent =
      page.total === 0
        ? 'no trajectories match'
        : `${page.total} trajectories · page ${Math.floor(page.offset / PAGE_SIZE) + 1} of ${pages}`;
    $('page-prev').disabled = page.offset === 0;
    $('page-next').disabled = page.offset + PAGE_SIZE >= page.total;
    $('trajectory-table')
      .querySelector('tbody')
      .replaceChildren(
        ...page.items.map((t) =>
          h(
            'tr',
            { dataset: { step: String(t.step), index: String(t.index), group: t.groupId } },
            h('td', { class: 'num' }, t.step),
            h('td', { class: 'num' }, t.index),
            h('td', {}, t.groupId),
            h('td', { class: 'num' }, formatValue(t.totalReward)),
            h('td', {}, t.success ? 'yes' : 'no'),
            h('td', { class: 'num' }, t.tokens),
            h(
              'td',
              {},
              h('button', { type: 'button', class: 'view-one', onclick: () => this.show(t.step, t.index) }, 'view'),
              ' ',
              h(
                'button',
                { type: 'button', class: 'view-group', onclick: () => this.showGroup(t.step, t.groupId) },
                'group',
              ),
            ),
          ),
        ),
      );
    if (showFirst && page.items.length > 0) await this.show(page.items[0].step, page.items[0].index);
    if (showFirst && page.items.length === 0) {
      $('trajectory-summary').textContent = 'This run has no recorded trajectories.';
      $('trajectory-view').replaceChildren();
    }
  }

  async show(step, index) {
    const run = this.run();
    const t = await getJson(`/api/runs/${encodeURIComponent(run)}/trajectories/${step}/${index}`);
    $('trajectory-view').className = '';
    $('trajectory-view').replaceChildren(...trajectoryBlocks(t));
    $('trajectory-summary').textContent = trajectorySummary(t);
    this.onShow({ trajectory: `${run}/${step}/${index}` });
  }

  async showGroup(step, groupId) {
    const run = this.run();
    const group = await getJson(`/api/runs/${encodeURIComponent(run)}/groups/${step}/${encodeURIComponent(groupId)}`);
    const rewards = group.map((t) => t.totalReward);
    const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
    const spread = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / rewards.length);
    $('trajectory-summary').textContent =
      `step ${step} · group ${groupId} · ${group.length} episodes · reward mean ${formatValue(mean)}, std ${formatValue(spread)} · ${group.filter((t) => t.success).length} succeeded`;
    $('trajectory-view').className = 'group-grid';
    $('trajectory-view').replaceChildren(
      ...group.map((t) =>
        h(
          'div',
          { class: 'group-member', dataset: { index: String(t.index) } },
          h('h4', {}, `#${t.index} · reward ${formatValue(t.totalReward)} · ${t.success ? 'success' : 'no success'}`),
          ...trajectoryBlocks(t),
        ),
      ),
    );
    this.onShow({ group: `${run}/${step}/${groupId}` });
  }

  /** Opens what a link names (`run/step/index` or `run/step/group`). */
  async open({ trajectory, group }) {
    const [run, step, rest] = (trajectory ?? group ?? '').split('/');
    if (!run || step === undefined || rest === undefined) return false;
    if (![...$('trajectory-run').options].some((o) => o.value === run)) return false;
    $('trajectory-run').value = run;
    await this.loadList(0);
    if (trajectory) await this.show(Number(step), Number(rest));
    else await this.showGroup(Number(step), rest);
    return true;
  }
}
