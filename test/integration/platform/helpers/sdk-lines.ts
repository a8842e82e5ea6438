/**
 * The E2B SDK lines the compatibility matrix runs, each installed unmodified under its alias in package.json, and
 * what each line has (read from its dist): how it pauses, whether it builds templates, whether it checks the API
 * key's form before sending, how it reaches a platform.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SdkLine {
  /** The package name in node_modules: `e2b` is the newest, the others are aliases of older releases. */
  pkg: string;
  version: string;
  /** The pause method, where the line has one. */
  pause?: 'betaPause' | 'pause';
  /** Template.build (v3 templates API). */
  build: boolean;
  /** Refuses a key not of the form `e2b_<hex>` before sending ("Invalid API key format"). */
  checksKeyForm: boolean;
  /** E2B_VALIDATE_API_KEY=false turns that check off. */
  keyCheckOptOut: boolean;
  /** An API error is a class per status (NotFoundError, AuthenticationError); 1.x throws SandboxError(`{status}: ...`). */
  apiErrorClasses: boolean;
  /**
   * `urls`: E2B_API_URL / E2B_SANDBOX_URL (2.x). `domain`: 1.x knows only E2B_DOMAIN (HTTPS to `api.<domain>` and
   * `<port>-<id>.<domain>`); its E2B_DEBUG mode never calls the API (it fakes the sandbox and talks to one envd on
   * localhost without a token), so no platform can serve it.
   */
  connection: 'urls' | 'domain';
  /** Sends `volumeMounts` and `network.maskRequestHost` (2.27 on): volumes are mounted, request host masks kept. */
  volumeMounts: boolean;
}

const ROOT = join(__dirname, '..', '..', '..', '..');
const versionOf = (pkg: string) =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

const line = (pkg: string, has: Omit<SdkLine, 'pkg' | 'version'>): SdkLine => ({ pkg, version: versionOf(pkg), ...has });

export const SDK_LINES: readonly SdkLine[] = [
  line('e2b-1-13', {
    build: false,
    checksKeyForm: false,
    keyCheckOptOut: false,
    apiErrorClasses: false,
    connection: 'domain',
    volumeMounts: false,
  }),
  line('e2b-2-10', {
    pause: 'betaPause',
    build: true,
    checksKeyForm: false,
    keyCheckOptOut: false,
    apiErrorClasses: true,
    connection: 'urls',
    volumeMounts: false,
  }),
  line('e2b-2-27', {
    pause: 'pause',
    build: true,
    checksKeyForm: true,
    keyCheckOptOut: false,
    apiErrorClasses: true,
    connection: 'urls',
    volumeMounts: true,
  }),
  line('e2b-2-39', {
    pause: 'pause',
    build: true,
    checksKeyForm: true,
    keyCheckOptOut: true,
    apiErrorClasses: true,
    connection: 'urls',
    volumeMounts: true,
  }),
  line('e2b-2-45', {
    pause: 'pause',
    build: true,
    checksKeyForm: true,
    keyCheckOptOut: true,
    apiErrorClasses: true,
    connection: 'urls',
    volumeMounts: true,
  }),
  line('e2b-2-46', {
    pause: 'pause',
    build: true,
    checksKeyForm: false,
    keyCheckOptOut: false,
    apiErrorClasses: true,
    connection: 'urls',
    volumeMounts: true,
  }),
  line('e2b', {
    pause: 'pause',
    build: true,
    checksKeyForm: false,
    keyCheckOptOut: false,
    apiErrorClasses: true,
    connection: 'urls',
    volumeMounts: true,
  }),
];
