import {
  CONFIG_NAMESPACE,
  ConfigError,
  checkPassword,
  parseStackConfig,
  SECRET_KEYS,
  type ConfigIssue,
  type StackConfig,
} from '../src/config';

export const PASSWORD_KEY = `${CONFIG_NAMESPACE}:${SECRET_KEYS[0]}`;
export const SSH_KEY_KEY = `${CONFIG_NAMESPACE}:${SECRET_KEYS[1]}`;

/**
 * The `sandbox-kit:` keys of a stack's config, namespace stripped, secrets left out. Pulumi hands structured values
 * (objects written in YAML or set with `--path`) to the program as JSON text; they are decoded here.
 */
export function namespaceValues(all: Readonly<Record<string, string>>): Record<string, unknown> {
  const prefix = `${CONFIG_NAMESPACE}:`;
  const values: Record<string, unknown> = {};
  for (const [fullKey, text] of Object.entries(all)) {
    if (!fullKey.startsWith(prefix)) continue;
    const key = fullKey.slice(prefix.length);
    if ((SECRET_KEYS as readonly string[]).includes(key)) continue;
    values[key] = decode(text);
  }
  return values;
}

function decode(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return text;
  try {
    return JSON.parse(trimmed);
  } catch {
    // Left as text: the schema then reports the key as "expected an object" with the value shown.
    return text;
  }
}

export interface InfraConfig {
  config: StackConfig;
  /** Whether the stack sets its own proxy password (else the program generates one). */
  passwordSet: boolean;
  /** Whether the stack holds the SSH private key the template build logs in with. */
  sshKeySet: boolean;
}

/** An OpenSSH or PEM private key; its content never appears in a message. */
export function checkPrivateKey(key: string | undefined, source: string): ConfigIssue[] {
  if (key === undefined) return [];
  if (/^-----BEGIN (OPENSSH|RSA|EC) PRIVATE KEY-----/.test(key.trim())) return [];
  return [
    {
      key: source,
      given: '(secret, not shown)',
      expected: "a private key file's content (-----BEGIN OPENSSH PRIVATE KEY----- ...), unencrypted",
    },
  ];
}

/**
 * Validates the whole stack config once, before any resource exists: every problem, the password's included
 * (never its value), is listed in one ConfigError.
 */
export function loadInfraConfig(all: Readonly<Record<string, string>>): InfraConfig {
  const parsed = parseStackConfig(namespaceValues(all));
  const password = all[PASSWORD_KEY];
  const passwordIssues = password === undefined ? [] : checkPassword(password, PASSWORD_KEY);
  const sshKey = all[SSH_KEY_KEY];
  const issues = [...(parsed.ok ? [] : parsed.issues), ...passwordIssues, ...checkPrivateKey(sshKey, SSH_KEY_KEY)];
  if (!parsed.ok || issues.length > 0) throw new ConfigError(issues);
  return { config: parsed.config, passwordSet: password !== undefined, sshKeySet: sshKey !== undefined };
}
