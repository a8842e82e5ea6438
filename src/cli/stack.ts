import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  checkPassword,
  parseStackConfig,
  readStackFile,
  stackFileIssues,
  stackFilePath,
  text,
  type ConfigIssue,
  type StackConfig,
} from '../config';

/**
 * Finding and loading a stack for the CLI, the way the Pulumi CLI finds it: the project is the nearest directory at or
 * above the working directory holding Pulumi.yaml; the stack's settings are Pulumi.<stack>.yaml beside it. The stack is
 * `--stack NAME`, else `dev` (the CLI does not read Pulumi's selected stack: that lives in the user's Pulumi
 * workspace, and a command that silently follows it would render a different stack than the one named in the docs).
 */

export const DEFAULT_STACK = 'dev';
/** Where the CLI takes the proxy password from: a stack secret is encrypted, only the Pulumi engine can read it. */
export const PASSWORD_ENV = 'SANDBOX_KIT_PROXY_PASSWORD';

export function findProjectDir(start: string): string {
  let dir = resolve(start);
  for (;;) {
    if (existsSync(join(dir, 'Pulumi.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error(
        `no Pulumi.yaml in ${resolve(start)} or any directory above it: run sandbox-kit inside the project (the directory holding Pulumi.yaml)`,
      );
    }
    dir = parent;
  }
}

export interface LoadedStack {
  stack: string;
  /** Path of Pulumi.<stack>.yaml. */
  path: string;
  /** The validated config; undefined when there are issues. */
  config?: StackConfig;
  /** Every problem with the stack file, all at once. */
  issues: ConfigIssue[];
  /** Whether `sandbox-kit:proxyPassword` is set (encrypted) in the stack file. */
  passwordInStack: boolean;
}

/** Reads and validates a stack. Throws only when there is no stack file to read; config problems come back as issues. */
export function loadStack(stack: string, cwd: string = process.cwd()): LoadedStack {
  const path = stackFilePath(findProjectDir(cwd), stack);
  if (!existsSync(path)) {
    throw new Error(
      `stack ${JSON.stringify(stack)} has no settings file ${path}: create it (pulumi stack init ${stack}) or pick another stack with --stack NAME`,
    );
  }
  const file = readStackFile(path);
  const parsed = parseStackConfig(file.values);
  const issues = [...stackFileIssues(file), ...(parsed.ok ? [] : parsed.issues)];
  return {
    stack,
    path,
    config: parsed.ok && issues.length === 0 ? parsed.config : undefined,
    issues,
    passwordInStack: file.encrypted.includes('proxyPassword'),
  };
}

export interface PasswordLookup {
  /** The password, when the environment holds a valid one. Never print it. */
  password?: string;
  /** Problems with the environment's value (not the value itself). */
  issues: ConfigIssue[];
}

/** The proxy password from the environment, checked. An absent variable gives `password: undefined` and no issues. */
export function passwordFromEnv(env: NodeJS.ProcessEnv = process.env): PasswordLookup {
  const value = env[PASSWORD_ENV];
  if (value === undefined) return { issues: [] };
  const issues = checkPassword(value, PASSWORD_ENV);
  return issues.length === 0 ? { password: value, issues } : { issues };
}

/** The password for a command that cannot run without one: its problems, or a missing one named as such. */
export function requiredPasswordFromEnv(env: NodeJS.ProcessEnv = process.env): PasswordLookup {
  const lookup = passwordFromEnv(env);
  if (lookup.password !== undefined || lookup.issues.length > 0) return lookup;
  return {
    issues: [
      { key: PASSWORD_ENV, given: '(not set)', expected: 'the proxy password (at least 16 printable ASCII characters) in the environment' },
    ],
  };
}

/** What `--stack` accepts: a Pulumi stack name. */
export const stackName = () => text(/^[A-Za-z0-9_.-]+$/, 'a stack name such as dev (letters, digits, -, _ and .)');
