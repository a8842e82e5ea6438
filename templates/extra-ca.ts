/**
 * Extra certificates a template trusts besides Debian's: the build copies a PEM file into the system store, so
 * whatever the build and the sandbox fetch over TLS (npm, pip, curl) works behind a TLS-inspecting proxy whose CA
 * is in that file (the local system passes the host's own store).
 */
import * as path from 'node:path';
import { Template, type TemplateBuilder } from 'e2b';

const EXTRA_CA_FILE = '/usr/local/share/ca-certificates/sandbox-kit-extra.crt';

/** A template builder whose file context holds the extra certificates' file, when there is one. */
export function templateWithContextFor(extraCaCertsFile: string | undefined): ReturnType<typeof Template> {
  return Template(extraCaCertsFile === undefined ? undefined : { fileContextPath: path.dirname(path.resolve(extraCaCertsFile)) });
}

/** Adds the certificates to the system store (needs the ca-certificates package installed before). */
export function trustExtraCa(template: TemplateBuilder, extraCaCertsFile: string | undefined): TemplateBuilder {
  if (extraCaCertsFile === undefined) return template;
  return template
    .copy(path.basename(path.resolve(extraCaCertsFile)), EXTRA_CA_FILE, { user: 'root', mode: 0o644 })
    .runCmd('update-ca-certificates', { user: 'root' });
}
