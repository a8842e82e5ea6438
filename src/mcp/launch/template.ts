import { PLACEHOLDER } from '../catalog/schema';

/**
 * Fills the `{{prop}}` placeholders of a catalog entry's image arguments, env and remote headers with configured
 * values. Pure. A value is written as text (a list joined by ","); `{{prop|into}}` alone in an argument spreads a
 * list into one argument per item. A string naming a property that is not set is left out (undefined).
 */

function text(value: unknown): string {
  return Array.isArray(value) ? value.map(String).join(',') : String(value);
}

/** The string with every placeholder filled, or undefined when one names an unset property. */
export function fill(template: string, values: Record<string, unknown>): string | undefined {
  let missing = false;
  const out = template.replace(PLACEHOLDER, (_all, prop: string) => {
    const value = values[prop];
    if (value === undefined) {
      missing = true;
      return '';
    }
    return text(value);
  });
  return missing ? undefined : out;
}

/** Arguments: each filled; one that is only `{{prop|into}}` (or `{{prop}}`) with a list gives one per item. */
export function fillArgs(args: string[], values: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const arg of args) {
    const whole = /^\{\{\s*([A-Za-z0-9]+)\s*(?:\|[a-z-]+)*\s*\}\}$/.exec(arg);
    const value = whole === null ? undefined : values[whole[1]];
    if (Array.isArray(value)) {
      out.push(...value.map(String));
      continue;
    }
    const filled = fill(arg, values);
    if (filled !== undefined) out.push(filled);
  }
  return out;
}

/** Env vars (or headers): each filled; one naming an unset property is left out. */
export function fillRecord(record: Record<string, string>, values: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, template] of Object.entries(record)) {
    const filled = fill(template, values);
    if (filled !== undefined) out[key] = filled;
  }
  return out;
}
