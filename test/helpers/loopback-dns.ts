/**
 * Preloaded (`--require`) into an SDK process: names under LOOPBACK_DOMAIN resolve to 127.0.0.1, as a DNS zone for
 * the domain pointing at this host would; every other name goes to the system resolver. The SDK stays unmodified:
 * Node's sockets look names up through dns.lookup at connect time.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';

const dns = require('node:dns') as typeof import('node:dns');
const domain = (process.env.LOOPBACK_DOMAIN ?? '').toLowerCase();
const systemLookup = dns.lookup;

type Callback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function lookup(hostname: string, options: LookupOptions | number | Callback, callback?: Callback): void {
  const cb = (typeof options === 'function' ? options : callback) as Callback;
  const opts: LookupOptions = typeof options === 'number' ? { family: options } : typeof options === 'function' ? {} : options;
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (domain === '' || (name !== domain && !name.endsWith(`.${domain}`))) {
    (systemLookup as (h: string, o: LookupOptions, c: Callback) => void)(hostname, opts, cb);
    return;
  }
  if (opts.all) process.nextTick(cb, null, [{ address: '127.0.0.1', family: 4 }]);
  else process.nextTick(cb, null, '127.0.0.1', 4);
}

(dns as { lookup: unknown }).lookup = lookup;
