export * from './errors.ts';
export * from './rng.ts';
export * from './types.ts';
export * from './loss.ts';
export { runTool, tool, type ToolFailureKind, type ToolRun } from './tool.ts';
