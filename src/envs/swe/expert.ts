/**
 * Software-fix expert: reads the file the gold patch touches, applies the gold patch edit by
 * edit, runs the tests, then submits. A random turn lists the files, reads a random file or
 * submits at once.
 */
import { formatAnswer, formatToolCall } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import { requireData, requirePrivileged } from '../require-data.ts';
import type { SweData, SwePrivileged } from './env.ts';

export function sweExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const { editsMade, testRuns } = requireData<SweData>(observation, 'swe', 'instance');
      const { goldPatch } = requirePrivileged<SwePrivileged>(observation, 'swe', 'goldPatch');
      const edit = goldPatch[editsMade];
      if (edit !== undefined)
        return formatToolCall({ name: 'edit_file', arguments: { path: edit.path, old: edit.find, new: edit.replace } });
      if (testRuns === 0) return formatToolCall({ name: 'run_tests', arguments: {} });
      return formatAnswer('submit');
    },
    (observation, rng) => {
      const { instance } = requireData<SweData>(observation, 'swe', 'instance');
      const choice = rng.int(3);
      if (choice === 0) return formatToolCall({ name: 'list_files', arguments: {} });
      if (choice === 1)
        return formatToolCall({ name: 'read_file', arguments: { path: rng.pick(Object.keys(instance.files)) } });
      return formatAnswer('submit');
    },
  );
}
