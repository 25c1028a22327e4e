/**
 * A guide's files placed where the guide says (`src/envs/guess-number/env.ts`) without touching the
 * checkout: a scratch tree whose folders on the way to that path are real and hold symbolic links to
 * everything else the checkout has there, so the file's relative imports (`../../core/index.ts`)
 * reach the real sources.
 */
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { repository } from './snippet-runners.ts';

/** Makes `root/<each folder of path>` real, linking the checkout's other entries beside it; returns the file path. */
export async function placeInOverlay(root: string, path: string, text: string): Promise<string> {
  const folders = dirname(path).split(sep);
  for (let depth = 0; depth <= folders.length; depth += 1) {
    const relative = join(...folders.slice(0, depth));
    const here = join(root, relative);
    await mkdir(here, { recursive: true });
    const present = new Set(await readdir(here));
    const next = folders[depth];
    const entries = await readdir(join(repository, relative)).catch(() => [] as string[]);
    for (const entry of entries) {
      if (entry !== next && !present.has(entry)) await symlink(join(repository, relative, entry), join(here, entry));
    }
  }
  const file = join(root, path);
  await writeFile(file, text);
  return file;
}
