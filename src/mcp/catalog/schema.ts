import { z } from 'zod';

/**
 * The tool-server catalog document: entries keyed by the server's camelCase name, each saying how to run the server,
 * which flat properties it takes and how each value reaches it. The catalog is data (templates/mcp/*.json); the
 * per-server config schemas and the generated TypeScript types are derived from it.
 */

export const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*$/;
export const PROPERTY_NAME = /^[A-Za-z][A-Za-z0-9]*$/;

/** Property types. `string|number` is for values such as `port` that users write either way. */
export const PROPERTY_TYPES = ['string', 'number', 'boolean', 'string[]', 'string|number'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

/**
 * How a property's value reaches the server process:
 * - `env`: an environment variable (booleans as true/false, lists joined by `separator`, default ",");
 * - `args`: positional arguments, appended in property order (a list gives one argument per item);
 * - `flag`: `--name value` (a list repeats the flag; a boolean `true` gives the bare flag, `false` nothing);
 * - `file`: a key of the server's JSON config file (see the entry's `configFile`);
 * - `template`: where the entry's `run.image` or `run.remote` names it as `{{name}}` (a property no template names is
 *   accepted and not passed on, as in the public catalog).
 * Secret properties may only use `env`, `file` or templates outside argv: argv is visible to every process in the
 * sandbox.
 */
const via = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('env'), name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), separator: z.string().optional() }),
  z.strictObject({ kind: z.literal('args') }),
  z.strictObject({ kind: z.literal('flag'), flag: z.string().regex(/^-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*$/) }),
  z.strictObject({ kind: z.literal('file'), key: z.string().min(1) }),
  z.strictObject({ kind: z.literal('template') }),
]);

const property = z.strictObject({
  type: z.enum(PROPERTY_TYPES),
  required: z.boolean(),
  secret: z.boolean().default(false),
  description: z.string().optional(),
  via,
});

/** An npm package whose `bin` the gateway runs with its own node; installed into the template at build time. */
const npmRun = z.strictObject({
  npm: z.strictObject({
    package: z.string().regex(/^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/),
    version: z.string().min(1).optional(),
    bin: z.string().min(1),
    args: z.array(z.string()).default([]),
  }),
});

/** A command found on PATH (or an absolute path), with fixed arguments before the configured ones. */
const commandRun = z.strictObject({ command: z.array(z.string().min(1)).min(1) });

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An image reference as the catalog writes one (`mcp/time`, `ghcr.io/org/x:1`): no spaces, quotes or shell text. */
export const IMAGE_REF = /^[a-z0-9][a-z0-9._/:@-]*$/;

/**
 * An OCI image (`mcp/<name>` on Docker Hub for the public catalog): its entrypoint runs with `args` (the image's
 * command when empty) and `env`; `{{prop}}` in either stands for a configured value (`{{prop|into}}` alone in an
 * argument spreads a list into arguments). An argument naming an unset property is left out, as is an env var.
 */
const imageRun = z.strictObject({
  image: z.strictObject({
    ref: z.string().regex(IMAGE_REF, 'expected an image reference such as mcp/time'),
    args: z.array(z.string()).default([]),
    env: z.record(z.string().regex(ENV_NAME), z.string()).default({}),
  }),
});

/** A server its vendor serves over HTTP: the gateway connects to it; `{{prop}}` in a header stands for a value. */
const remoteRun = z.strictObject({
  remote: z.strictObject({
    url: z.url({ protocol: /^https?$/ }),
    transport: z.enum(['sse', 'streamable-http']),
    headers: z.record(z.string(), z.string()).default({}),
  }),
});

/** The `{{prop}}` and `{{prop|filter}}` placeholders of a template string, by property name. */
export const PLACEHOLDER = /\{\{\s*([A-Za-z0-9]+)\s*((?:\|[a-z-]+)*)\s*\}\}/g;

export function placeholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]);
}

/** Where the config file's path goes: an env var or a flag. The file is JSON, written 0600 by the gateway. */
const configFile = z.strictObject({
  env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional(),
  flag: z
    .string()
    .regex(/^-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*$/)
    .optional(),
});

export const catalogEntrySchema = z
  .strictObject({
    description: z
      .string()
      .min(1)
      .refine((d) => !d.includes('\n'), 'expected one line'),
    run: z.union([npmRun, commandRun, imageRun, remoteRun]),
    // Property names are the SDK's: camelCase, with a few written otherwise (`SchemaPath`, `VECTRACLIENTID`).
    properties: z.record(z.string().regex(PROPERTY_NAME, 'expected a property name of letters and digits'), property).default({}),
    configFile: configFile.optional(),
    /** Other names the same server is known by (e.g. the E2B SDK's `sequentialthinking`). */
    aliases: z.array(z.string().regex(/^[a-z][a-zA-Z0-9]*$/)).optional(),
  })
  .superRefine((entry, ctx) => {
    const inArgv = new Set('image' in entry.run ? entry.run.image.args.flatMap(placeholders) : []);
    const named = new Set(
      'image' in entry.run
        ? [...entry.run.image.args, ...Object.values(entry.run.image.env)].flatMap(placeholders)
        : 'remote' in entry.run
          ? [entry.run.remote.url, ...Object.values(entry.run.remote.headers)].flatMap(placeholders)
          : [],
    );
    for (const used of named) {
      if (entry.properties[used] === undefined)
        ctx.addIssue({ code: 'custom', path: ['run'], message: `{{${used}}} names no property of this entry` });
    }
    for (const [name, p] of Object.entries(entry.properties)) {
      if (p.secret && inArgv.has(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['run', 'image', 'args'],
          message: `secret property ${name} must not be an argument: argv is visible to every process in the sandbox`,
        });
      }
      if (p.via.kind === 'template' && !('image' in entry.run) && !('remote' in entry.run)) {
        ctx.addIssue({
          code: 'custom',
          path: ['properties', name, 'via'],
          message: 'a template property needs run.image or run.remote',
        });
      }
      if (p.secret && (p.via.kind === 'args' || p.via.kind === 'flag')) {
        ctx.addIssue({
          code: 'custom',
          path: ['properties', name, 'via'],
          message: 'a secret property must reach the server by env or file, never argv',
        });
      }
      if (p.via.kind === 'file' && entry.configFile === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['properties', name, 'via'],
          message: 'a file property needs the entry to declare configFile',
        });
      }
    }
  });

/** The whole document. `custom` is reserved for user-defined servers. */
const serverName = z
  .string()
  .regex(CAMEL_CASE, 'expected a camelCase server name')
  .refine((name) => name !== 'custom', '"custom" is reserved for user-defined servers');

export const catalogSchema = z.record(serverName, catalogEntrySchema).superRefine((doc, ctx) => {
  const seen = new Map<string, string>();
  for (const [name, entry] of Object.entries(doc)) {
    for (const n of [name, ...(entry.aliases ?? [])]) {
      const owner = seen.get(n);
      if (owner !== undefined && owner !== name)
        ctx.addIssue({ code: 'custom', path: [name], message: `name ${n} is already used by ${owner}` });
      seen.set(n, name);
    }
  }
});

export type Catalog = z.output<typeof catalogSchema>;
export type CatalogEntry = z.output<typeof catalogEntrySchema>;
export type CatalogProperty = CatalogEntry['properties'][string];
export type PropertyVia = CatalogProperty['via'];
