/**
 * MCP tools describe their input with JSON Schema; agentrl tools use zod. `zodFromJsonSchema`
 * converts the subset tool schemas use — object (properties, required), string (enum), number,
 * integer, boolean, array (items) — and accepts anything else as unknown (the server validates
 * again). Objects keep unknown keys (servers may accept more than they declare).
 */
import { z } from 'zod';

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
};

export function zodFromJsonSchema(schema: unknown): z.ZodType {
  const node = (schema ?? {}) as JsonSchema;
  const type = Array.isArray(node.type) ? node.type[0] : node.type;
  if (Array.isArray(node.enum) && node.enum.length > 0 && node.enum.every((value) => typeof value === 'string'))
    return z.enum(node.enum as [string, ...string[]]);
  switch (type) {
    case 'object': {
      const required = new Set(node.required ?? []);
      const shape = Object.fromEntries(
        Object.entries(node.properties ?? {}).map(([key, value]) => [
          key,
          required.has(key) ? zodFromJsonSchema(value) : zodFromJsonSchema(value).optional(),
        ]),
      );
      return z.looseObject(shape);
    }
    case 'string':
      return z.string();
    case 'number':
      return z.number();
    case 'integer':
      return z.number().int();
    case 'boolean':
      return z.boolean();
    case 'array':
      return z.array(zodFromJsonSchema(node.items));
    default:
      return z.unknown();
  }
}
