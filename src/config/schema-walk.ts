import { globalRegistry, type z } from 'zod';
import { ACCEPTS } from './fields';
import { stackConfigSchema } from './schema';

/**
 * Reads the stack schema as data: which keys exist where, what each accepts, its default and its description.
 * Error messages (unknown keys) and the config reference (docs/config.md) both come from here, so they cannot
 * disagree with the schema that validates.
 */

type AnySchema = z.core.$ZodType;

interface Wrapped {
  /** The innermost schema, past defaults, optionals and pipes. */
  core: AnySchema;
  hasDefault: boolean;
  defaultValue?: unknown;
  optional: boolean;
  /** Metadata merged from every wrapper (outer wins). */
  meta: Record<string, unknown>;
}

function unwrap(schema: AnySchema): Wrapped {
  const out: Wrapped = { core: schema, hasDefault: false, optional: false, meta: {} };
  let current: AnySchema | undefined = schema;
  while (current) {
    out.meta = { ...(globalRegistry.get(current) ?? {}), ...out.meta };
    out.core = current;
    const def = current._zod.def as unknown as Record<string, unknown> & { type: string };
    if (def.type === 'default') {
      if (!out.hasDefault) out.defaultValue = def.defaultValue;
      out.hasDefault = true;
      current = def.innerType as AnySchema;
    } else if (def.type === 'prefault' || def.type === 'nonoptional') {
      current = def.innerType as AnySchema;
    } else if (def.type === 'optional') {
      out.optional = true;
      current = def.innerType as AnySchema;
    } else if (def.type === 'pipe') {
      // A transform's input side says what a user may write.
      current = (def.in as AnySchema)._zod.def.type === 'transform' ? (def.out as AnySchema) : (def.in as AnySchema);
    } else {
      current = undefined;
    }
  }
  return out;
}

function shapeOf(schema: AnySchema): Record<string, AnySchema> | undefined {
  const { core } = unwrap(schema);
  const def = core._zod.def as unknown as { type: string; shape?: Record<string, AnySchema> };
  return def.type === 'object' ? def.shape : undefined;
}

/** The keys accepted at a path of the config object (`[]` = top level, `['proxy']` = the proxy section), or undefined. */
export function keysAt(path: readonly PropertyKey[]): string[] | undefined {
  let schema: AnySchema = stackConfigSchema;
  for (const part of path) {
    const shape = shapeOf(schema);
    if (!shape || !(String(part) in shape)) return undefined;
    schema = shape[String(part)];
  }
  const shape = shapeOf(schema);
  return shape ? Object.keys(shape) : undefined;
}

/** One settable key of the stack config. */
export interface ConfigField {
  /** Dotted path below the namespace, e.g. `proxy.port`. */
  path: string;
  /** What the field accepts, in words. */
  accepts: string;
  /** The default, or undefined when the field is optional without one. */
  defaultValue: unknown;
  hasDefault: boolean;
  description: string;
}

function describeAccepts(w: Wrapped): string {
  if (typeof w.meta[ACCEPTS] === 'string') return w.meta[ACCEPTS];
  const def = w.core._zod.def as unknown as { type: string; entries?: Record<string, string> };
  if (def.type === 'enum' && def.entries) return `one of ${Object.values(def.entries).join(', ')}`;
  return def.type;
}

/** Every leaf field of the schema, depth-first in declaration order. */
export function configFields(schema: AnySchema = stackConfigSchema, prefix = ''): ConfigField[] {
  const shape = shapeOf(schema);
  if (!shape) return [];
  return Object.entries(shape).flatMap(([key, child]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    if (shapeOf(child)) return configFields(child, path);
    const w = unwrap(child);
    return [
      {
        path,
        accepts: describeAccepts(w),
        defaultValue: w.defaultValue,
        hasDefault: w.hasDefault,
        description: typeof w.meta.description === 'string' ? w.meta.description : '',
      },
    ];
  });
}
