import { z } from 'zod';

/**
 * Features of E2B's API this platform does not provide: refused when asked for, rather than silently ignored, so
 * nobody believes a sandbox is fenced in when it is not. Empty values (what clients send by default) pass.
 */
export const unsupported = (what: string) =>
  z
    .unknown()
    .refine(
      (v) =>
        v === undefined ||
        v === null ||
        (Array.isArray(v) && v.length === 0) ||
        (typeof v === 'object' && Object.keys(v as object).length === 0),
      {
        message: `${what} are not supported by this platform; leave them out`,
      },
    )
    .optional();
