// The project's own files: what git tracks (`git ls-files`), so a user's untracked scratch script in
// the folder is neither linted nor size-checked. Outside a git checkout (a downloaded archive) there
// is no such list and the callers fall back to the whole folder.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * The tracked files under `roots` (all of them when `roots` is empty) that exist in the working tree,
 * sorted; undefined when the current folder is not inside a git work tree or git is not installed.
 */
export function trackedFiles(roots = []) {
  const result = spawnSync('git', ['ls-files', '-z', '--', ...roots], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error !== undefined || result.status !== 0) return undefined;
  return result.stdout
    .split('\0')
    .filter((file) => file !== '' && existsSync(file))
    .sort();
}
