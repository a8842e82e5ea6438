import { DEFAULT_USER } from '../../runtime/base-images';
import type { BaseImages } from '../../runtime/types';
import type { TemplateForSandbox, TemplateResolver } from './template-resolver';

/** The template every platform has: Debian with bash, coreutils, iproute2, curl and CA certificates. */
export const BASE_TEMPLATE_ID = 'base';
/** The Debian suite `base` is made from. */
export const BASE_IMAGE = 'debian:bookworm';

export interface BaseTemplateOptions {
  memoryMB?: number;
  cpuCount?: number;
  onLine?: (line: string) => void;
}

/**
 * Resolves `base` to the base root filesystem (made by mmdebstrap the first time, then cached by BaseImages).
 * The default user is `user` with its home as the workdir, as E2B's base template has.
 */
export function baseTemplateResolver(images: BaseImages, options: BaseTemplateOptions = {}): TemplateResolver {
  return {
    async resolve(idOrAlias: string): Promise<TemplateForSandbox | undefined> {
      if (idOrAlias !== BASE_TEMPLATE_ID) return undefined;
      const rootfs = await images.rootfs(BASE_IMAGE, options.onLine);
      return {
        templateID: BASE_TEMPLATE_ID,
        alias: BASE_TEMPLATE_ID,
        buildID: BASE_IMAGE,
        layers: [rootfs],
        memoryMB: options.memoryMB ?? 512,
        cpuCount: options.cpuCount ?? 1,
        envs: {},
        user: DEFAULT_USER.name,
        workdir: DEFAULT_USER.home,
      };
    },
    names: async () => [BASE_TEMPLATE_ID],
  };
}

/** Asks each resolver in turn (built-in first, then the template store); the first answer wins. */
export function firstResolver(resolvers: readonly TemplateResolver[]): TemplateResolver {
  return {
    async resolve(idOrAlias: string, teamID: string) {
      for (const resolver of resolvers) {
        const found = await resolver.resolve(idOrAlias, teamID);
        if (found) return found;
      }
      return undefined;
    },
    async names() {
      return [...new Set((await Promise.all(resolvers.map((r) => r.names()))).flat())].sort();
    },
  };
}
