/**
 * The brand token is one setting shared by the gateway and the agent: `Svc` gives the headers
 * `Svc-Sandbox-Id` / `Svc-Sandbox-Port` and the extended-attribute namespace `user.svc.`.
 */
export interface BrandNames {
  sandboxIdHeader: string;
  sandboxPortHeader: string;
  xattrPrefix: string;
}

export const DEFAULT_BRAND = 'Svc';

export function brandNames(brand: string = DEFAULT_BRAND): BrandNames {
  if (!/^[A-Z][A-Za-z0-9]{0,31}$/.test(brand)) {
    throw new Error(`invalid brand ${JSON.stringify(brand)}: expected a capitalised word of letters and digits, such as Svc`);
  }
  return {
    sandboxIdHeader: `${brand}-Sandbox-Id`,
    sandboxPortHeader: `${brand}-Sandbox-Port`,
    xattrPrefix: `user.${brand.toLowerCase()}.`,
  };
}
