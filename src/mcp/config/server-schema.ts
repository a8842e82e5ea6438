import { z } from 'zod';
import type { CatalogEntry, CatalogProperty, PropertyType } from '../catalog/schema';

/** What each property type accepts, in words: the same text in errors, docs and generated types' comments. */
export const TYPE_WORDS: Record<PropertyType, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  'string[]': 'a list of strings',
  'string|number': 'a string or a number',
};

function valueSchema(type: PropertyType): z.ZodType {
  const error = `expected ${TYPE_WORDS[type]}`;
  switch (type) {
    case 'string':
      return z.string({ error });
    case 'number':
      return z.number({ error }).refine(Number.isFinite, { error });
    case 'boolean':
      return z.boolean({ error });
    case 'string[]':
      return z.array(z.string({ error: 'expected a string' }), { error });
    case 'string|number':
      return z.union([z.string(), z.number()], { error });
  }
}

function propertySchema(p: CatalogProperty): z.ZodType {
  const value = valueSchema(p.type);
  return p.required ? value : value.optional();
}

const cache = new WeakMap<CatalogEntry, z.ZodType>();

/** The strict schema of one server's config (unknown keys rejected), built once per catalog entry. */
export function serverSchema(entry: CatalogEntry): z.ZodType {
  let schema = cache.get(entry);
  if (schema === undefined) {
    const shape: Record<string, z.ZodType> = {};
    for (const [name, p] of Object.entries(entry.properties)) shape[name] = propertySchema(p);
    schema = z.strictObject(shape, { error: 'expected a mapping of properties' });
    cache.set(entry, schema);
  }
  return schema;
}

/** The fixed shape of a user-defined server under `custom`. */
export const customServerSchema = z.strictObject(
  {
    runCmd: z
      .string({ error: 'expected a shell command that starts a stdio MCP server' })
      .min(1, { error: 'expected a non-empty command' }),
    installCmd: z.string({ error: 'expected a shell command run once before runCmd' }).optional(),
    envs: z
      .record(z.string(), z.string({ error: 'expected a string' }), { error: 'expected a mapping of env var names to strings' })
      .optional(),
  },
  { error: 'expected a mapping with runCmd, and optionally installCmd and envs' },
);

/** A name a custom server may have: it prefixes its tools (`<name>__<tool>`), so no `__` and no odd characters. */
export const CUSTOM_NAME = /^[A-Za-z][A-Za-z0-9-]*(?:_[A-Za-z0-9-]+)*$/;
