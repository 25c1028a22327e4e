/**
 * A guide's files placed where the guide says (`src/envs/guess-number/env.ts`) without touching the
 * checkout: a scratch tree whose folders on the way to that path are real and hold symbolic links to
 * everything else the checkout has there, so the file's relative imports (`../../core/index.ts`)
 * reach the real sources.
 */
import { lstat, mkdir, readdir, symlink, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import { repository } from './snippet-runners.ts';

/** Makes `root/<each folder of path>` real, linking the checkout's other entries beside it; returns the file path. */
export async function placeInOverlay(root: string, path: string, text: string): Promise<string> {
  const folders = dirname(path).split(sep);
  for (let depth = 0; depth <= folders.length; depth += 1) {
    const relative = join(...folders.slice(0, depth));
    const here = join(root, relative);
    await mkdir(here, { recursive: true });
    const present = new Set(await readdir(here));
    // The folder on the way down, or at the last level the file itself: never linked, so the
    // guide's file is written into the overlay and never through a link into the repository
    // (a guide's file may share its name with a real one).
    const next = depth < folders.length ? folders[depth] : basename(path);
    const entries = await readdir(join(repository, relative)).catch(() => [] as string[]);
    for (const entry of entries) {
      if (entry !== next && !present.has(entry)) await symlink(join(repository, relative, entry), join(here, entry));
    }
  }
  const file = join(root, path);
  const existing = await lstat(file).catch(() => undefined);
  if (existing?.isSymbolicLink() === true) await unlink(file);
  await writeFile(file, text);
  return file;
}
