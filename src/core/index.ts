export * from './errors.ts';
export * from './rng.ts';
export * from './types.ts';
export * from './loss.ts';
export { tool } from './tool.ts';
