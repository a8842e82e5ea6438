import { hashAccessToken } from '../../../src/contract/access-token';
import { CachedCatalog } from '../../../src/catalog/cached';
import { ChangeListeners } from '../../../src/catalog/change-listeners';
import type { CatalogEntry } from '../../../src/catalog/entry';
import type { Catalog, ChangeListener } from '../../../src/catalog/types';

/** A source whose writes notify only when asked to, to tell TTL expiry apart from invalidation. */
class CountingSource implements Catalog {
  readonly entries = new Map<string, CatalogEntry>();
  readonly listeners = new ChangeListeners();
  lookups = 0;
  failNext = false;
  get(id: string): Promise<CatalogEntry | undefined> {
    this.lookups++;
    if (this.failNext) {
      this.failNext = false;
      return Promise.reject(new Error('down'));
    }
    return Promise.resolve(this.entries.get(id));
  }
  onChange(listener: ChangeListener) {
    return this.listeners.add(listener);
  }
  async close() {}
}

const entry = (id: string, host: string): CatalogEntry => ({
  sandboxID: id,
  host,
  agentPort: 49983,
  tokenHash: hashAccessToken('t'),
  state: 'running',
  autoResume: false,
});

describe('CachedCatalog', () => {
  it('answers repeated lookups from the cache within the TTL', async () => {
    const source = new CountingSource();
    source.entries.set('a', entry('a', '10.0.0.1'));
    const cache = new CachedCatalog(source, 60_000);
    await cache.get('a');
    source.entries.set('a', entry('a', '10.0.0.2'));
    expect((await cache.get('a'))?.host).toBe('10.0.0.1');
    expect(source.lookups).toBe(1);
  });

  it('drops one entry when the source announces its change', async () => {
    const source = new CountingSource();
    source.entries.set('a', entry('a', '10.0.0.1'));
    source.entries.set('b', entry('b', '10.0.0.9'));
    const cache = new CachedCatalog(source, 60_000);
    await cache.get('a');
    await cache.get('b');
    source.entries.set('a', entry('a', '10.0.0.2'));
    source.listeners.emit('a');
    expect((await cache.get('a'))?.host).toBe('10.0.0.2');
    expect(source.lookups).toBe(3);
    await cache.get('b');
    expect(source.lookups).toBe(3);
  });

  it('caches misses until an announcement, and forgets everything on an undefined announcement', async () => {
    const source = new CountingSource();
    const cache = new CachedCatalog(source, 60_000);
    expect(await cache.get('new')).toBeUndefined();
    source.entries.set('new', entry('new', '10.0.0.3'));
    expect(await cache.get('new')).toBeUndefined();
    source.listeners.emit(undefined);
    expect((await cache.get('new'))?.host).toBe('10.0.0.3');
  });

  it('asks the source again once the TTL has passed', async () => {
    const source = new CountingSource();
    const cache = new CachedCatalog(source, 0);
    await cache.get('a');
    await cache.get('a');
    expect(source.lookups).toBe(2);
  });

  it('does not remember a failed lookup', async () => {
    const source = new CountingSource();
    source.entries.set('a', entry('a', '10.0.0.1'));
    const cache = new CachedCatalog(source, 60_000);
    source.failNext = true;
    await expect(cache.get('a')).rejects.toThrow('down');
    expect((await cache.get('a'))?.host).toBe('10.0.0.1');
  });

  it('stops listening to the source on close', async () => {
    const source = new CountingSource();
    const cache = new CachedCatalog(source, 60_000);
    await cache.close();
    const seen: (string | undefined)[] = [];
    source.listeners.add((id) => seen.push(id));
    source.listeners.emit('a');
    expect(seen).toEqual(['a']);
  });
});

describe('CachedCatalog on the hot path', () => {
  it('answers a hit on a settled lookup synchronously, and the first lookup with a promise', async () => {
    const source = new CountingSource();
    source.entries.set('a', entry('a', '10.0.0.1'));
    const cache = new CachedCatalog(source, 60_000);
    const first = cache.get('a');
    expect(first).toBeInstanceOf(Promise);
    await first;
    const hit = cache.get('a');
    expect(hit).not.toBeInstanceOf(Promise);
    expect((hit as CatalogEntry).host).toBe('10.0.0.1');
    expect(source.lookups).toBe(1);
  });

  it('answers a settled miss synchronously too, and waits again after an announcement', async () => {
    const source = new CountingSource();
    const cache = new CachedCatalog(source, 60_000);
    await cache.get('none');
    expect(cache.get('none')).toBeUndefined();
    source.entries.set('none', entry('none', '10.0.0.4'));
    source.listeners.emit('none');
    const after = cache.get('none');
    expect(after).toBeInstanceOf(Promise);
    expect((await after)?.host).toBe('10.0.0.4');
  });
});
