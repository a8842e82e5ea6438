import { configFields, type ConfigField } from './schema-walk';
import { CONFIG_NAMESPACE } from './parse';
import { NOT_YET_READ_KEYS, SECRET_DESCRIPTIONS, SECRET_KEYS } from './schema';

/**
 * The config reference (docs/config.md), generated from the schema by scripts/config-reference.ts.
 * A unit test compares the file with this output, so the documentation cannot drift from what is validated.
 */

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function showDefault(field: ConfigField): string {
  if (!field.hasDefault) return '(none)';
  return `\`${JSON.stringify(field.defaultValue)}\``;
}

/** A key's description; a key nothing reads yet says so first. */
function describe(field: ConfigField): string {
  if (!NOT_YET_READ_KEYS.includes(field.path)) return field.description;
  return `**Not read yet** (validated only; the template build will use it). ${field.description}`;
}

/** The table of every key, what it accepts, its default and what it does: in docs/config.md and in the README. */
export function renderConfigTable(): string {
  const rows = configFields().map(
    (f) => `| \`${CONFIG_NAMESPACE}:${f.path}\` | ${cell(f.accepts)} | ${showDefault(f)} | ${cell(describe(f))} |`,
  );
  return `| key | accepts | default | what it does |\n|---|---|---|---|\n${rows.join('\n')}\n`;
}

export const TABLE_START = '<!-- config-reference:start (generated from src/config/schema.ts; do not edit by hand) -->';
export const TABLE_END = '<!-- config-reference:end -->';

/** A document with its generated table (between TABLE_START and TABLE_END) replaced by the current one. */
export function withConfigTable(doc: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`the document has no ${TABLE_START} ... ${TABLE_END} section`);
  return `${doc.slice(0, start + TABLE_START.length)}\n${renderConfigTable()}${doc.slice(end)}`;
}

export function renderConfigReference(): string {
  return `<!-- Generated from src/config/schema.ts by scripts/config-reference.ts; do not edit by hand. -->
# Stack configuration reference

Every setting of a stack lives under the \`${CONFIG_NAMESPACE}:\` namespace of \`Pulumi.<stack>.yaml\`. Settings are
grouped in objects (\`proxy\`, \`client\`, ...): write them as nested YAML, or set one with
\`pulumi config set --path '${CONFIG_NAMESPACE}:proxy.port' 8388\` (without \`--path\` Pulumi would store a flat key named
\`proxy.port\`, which is refused). Values set from the command line arrive as strings: numbers and \`true\`/\`false\` are
accepted in either form. Unknown keys are errors, so a misspelt key never silently falls back to its default.

## Checking and rendering a stack

\`sandbox-kit\` finds the project the way the Pulumi CLI does (the nearest directory at or above the working directory
holding \`Pulumi.yaml\`) and reads \`Pulumi.<stack>.yaml\` beside it. The stack is \`--stack NAME\`, default \`dev\`; Pulumi's
selected stack is not followed, so a command always says which file it read.

- \`sandbox-kit check-config [--stack NAME]\` validates the stack and lists every problem at once, one line each:
  \`key: got <value given>; expected <what is accepted>\`. Exit 0 when valid, 1 otherwise. It also says whether the proxy
  password is available to \`render\`.
- \`sandbox-kit render [--stack NAME] --out DIR --server-ip IP [--egress-bind IP] [--host-network CIDR]...\` writes every
  artifact (server and client configs, NAT-chain script, sysctl file, server ACL, systemd unit, cloud-init user-data,
  client start scripts; \`egress-address.sh\` with \`--egress-bind\`). \`--server-ip\` is required: the client configs and
  the NAT chain's bypass rule contain the proxy's address, and there is no placeholder that would be correct. A new
  output directory is created 0700; in an existing one only these file names are replaced. Nothing is written when
  the config, the password or a flag is invalid.

${renderConfigTable()}
## Secrets

| key | what it is |
|---|---|
${SECRET_KEYS.map((k) => `| \`${CONFIG_NAMESPACE}:${k}\` | ${cell(SECRET_DESCRIPTIONS[k])} Set it with \`pulumi config set --secret ${CONFIG_NAMESPACE}:${k}\`; a plain-text value in the stack file is refused. |`).join('\n')}

Only the Pulumi engine can decrypt a stack secret, so the \`sandbox-kit\` CLI (\`render\`) takes the password from the
environment variable \`SANDBOX_KIT_PROXY_PASSWORD\` instead. It is never printed; rendered files that hold it are
written with mode 0600.
`;
}
