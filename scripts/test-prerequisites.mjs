// What the tests need from the system, checked before any test runs and set up where it can be:
// Debian's Chromium for the test files that drive a browser, procps (pgrep, pkill) for those that
// look for processes. Run as root on a machine with apt-get, a missing piece is installed
// (`apt-get install -y <package>`; AGENTRL_TEST_INSTALL=0 turns this off); otherwise, or when that did
// not help, the run stops at once with one message naming what is missing and the command that installs it.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

/** Whether `name` is an executable on PATH. */
function onPath(name) {
  return (process.env.PATH ?? '').split(delimiter).some((folder) => {
    if (folder === '') return false;
    try {
      accessSync(join(folder, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Launches Chromium the way the browser tests do (src/envs/browser-shop/browser.ts); the error message, or undefined when it starts. */
function chromiumProblem() {
  const probe = [
    "import { launchChromium } from './src/envs/browser-shop/browser.ts';",
    'const browser = await launchChromium();',
    'await browser.close();',
  ].join('\n');
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', probe], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.status === 0) return undefined;
  if (result.error !== undefined) return `the Chromium check did not finish (${result.error.message})`;
  const line = result.stderr.split('\n').find((text) => text.includes('Chromium could not be started'));
  return (
    line?.replace(/^.*?(Chromium could not be started)/, '$1') ?? result.stderr.trim().split('\n').slice(-3).join('\n')
  );
}

const browserLauncher = join('src', 'envs', 'browser-shop', 'browser.ts');
const reachesBrowser = new Map();
/** Whether `file` reaches the browser launcher through its relative imports (a fixture may hold the launch). */
function drivesBrowser(file) {
  const known = reachesBrowser.get(file);
  if (known !== undefined) return known;
  reachesBrowser.set(file, false); // an import cycle reaches nothing new
  let found = file === browserLauncher;
  if (!found) {
    for (const [, target] of readFileSync(file, 'utf8').matchAll(/from\s+'(\.{1,2}\/[^']+\.ts)'/g)) {
      if (drivesBrowser(join(dirname(file), target))) {
        found = true;
        break;
      }
    }
  }
  reachesBrowser.set(file, found);
  return found;
}

const processCommands = ['pgrep', 'pkill'];

export const prerequisites = [
  {
    what: 'Chromium',
    debianPackage: 'chromium',
    // A binary the user chose (AGENTRL_CHROMIUM) is theirs to fix; installing Debian's would not change it.
    installable: () => process.env.AGENTRL_CHROMIUM === undefined,
    other: 'or set AGENTRL_CHROMIUM to a Chromium binary',
    neededBy: (file) => drivesBrowser(join(file)),
    problem: chromiumProblem,
  },
  {
    what: 'pgrep and pkill',
    debianPackage: 'procps',
    installable: () => true,
    other: 'or put pgrep and pkill on PATH',
    neededBy: (file) => /spawn(Sync)?\('(pgrep|pkill)'/.test(readFileSync(file, 'utf8')),
    problem: () => {
      const missing = processCommands.filter((name) => !onPath(name));
      return missing.length === 0 ? undefined : `${missing.join(' and ')} not found on PATH`;
    },
  },
];

/** `a, b` or `a, b, c and 7 more test files`. */
function nameFiles(files) {
  return files.length > 4
    ? `${files.slice(0, 3).join(', ')} and ${files.length - 3} more test files`
    : files.join(', ');
}

/** Installs Debian packages; false when apt-get failed. */
function aptInstall(packages) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
  if (update.status !== 0) return false;
  return spawnSync('apt-get', ['install', '-y', ...packages], { stdio: 'inherit', env }).status === 0;
}

function installAdvice(prerequisite) {
  const command = `apt-get install -y ${prerequisite.debianPackage}`;
  if (!onPath('apt-get'))
    return `Install ${prerequisite.what} with this system's package manager (on Debian: ${command}), ${prerequisite.other}.`;
  const asRoot = process.getuid?.() === 0 ? command : `sudo ${command}`;
  return `Install it: ${asRoot} (npm test runs it itself when run as root), ${prerequisite.other}.`;
}

/**
 * Checks, and installs where it can, what `files` need. Returns undefined when everything is usable,
 * else the message to print (one paragraph per missing piece).
 */
export function setUpPrerequisites(files, log = (line) => console.error(line)) {
  const check = (entry) => ({ ...entry, problem: entry.prerequisite.problem() });
  let missing = prerequisites
    .map((prerequisite) => ({ prerequisite, files: files.filter(prerequisite.neededBy) }))
    .filter((entry) => entry.files.length > 0)
    .map(check)
    .filter((entry) => entry.problem !== undefined);
  const installable = missing.filter((entry) => entry.prerequisite.installable());
  const mayInstall = process.getuid?.() === 0 && onPath('apt-get') && process.env.AGENTRL_TEST_INSTALL !== '0';
  if (installable.length > 0 && mayInstall) {
    const packages = installable.map((entry) => entry.prerequisite.debianPackage);
    log(`run-tests: setting up what the tests need: apt-get install -y ${packages.join(' ')}`);
    aptInstall(packages);
    missing = missing.map(check).filter((entry) => entry.problem !== undefined);
  }
  if (missing.length === 0) return undefined;
  return missing
    .map(
      ({ prerequisite, files: needing, problem }) =>
        `run-tests: ${nameFiles(needing)} need ${prerequisite.what}, and it is not usable.\n${problem}\n${installAdvice(prerequisite)}`,
    )
    .join('\n');
}
