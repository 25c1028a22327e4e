/** `agentrl envs`: the environments with their actions and rewards. */
import { environments } from '../envs/index.ts';

export async function envsCommand(): Promise<number> {
  for (const env of environments) {
    console.log(`${env.name}\n  ${env.description}\n  actions: ${env.actions}\n  reward:  ${env.reward}\n`);
  }
  return 0;
}
