#!/usr/bin/env node
// The `agentrl` command. TypeScript sources run through tsx's loader (a pinned dependency).
import { register } from 'tsx/esm/api';

register();
// A closed pipe (`agentrl envs | head`) ends the command quietly.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
