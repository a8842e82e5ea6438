import { chooseHost, type PlacementHost } from '../../../../src/platform/fleet/placement';

const host = (hostID: string, capacity = 10, accepting = true): PlacementHost => ({ hostID, capacity, accepting });

describe('placement of a new sandbox across hosts', () => {
  it('picks the least-loaded host by share of its capacity', () => {
    const hosts = [host('i-a', 10), host('i-b', 20), host('i-c', 10)];
    // a: 5/10, b: 6/20, c: 4/10 -> b (0.3) beats c (0.4) although it holds more sandboxes.
    expect(
      chooseHost(
        hosts,
        new Map([
          ['i-a', 5],
          ['i-b', 6],
          ['i-c', 4],
        ]),
      ),
    ).toEqual({ ok: true, hostID: 'i-b' });
  });

  it('counts a host the catalog does not mention as empty', () => {
    expect(chooseHost([host('i-a'), host('i-b')], new Map([['i-a', 1]]))).toEqual({ ok: true, hostID: 'i-b' });
  });

  it('breaks ties by fewer sandboxes, then by host ID, whatever order the hosts come in', () => {
    const counts = new Map([
      ['i-a', 2],
      ['i-b', 1],
      ['i-c', 1],
    ]);
    const hosts = [host('i-a', 20), host('i-c', 10), host('i-b', 10)];
    // a: 2/20 = 0.1, b and c: 1/10 = 0.1 -> fewer sandboxes (b, c), then the smaller ID.
    expect(chooseHost(hosts, counts)).toEqual({ ok: true, hostID: 'i-b' });
    expect(chooseHost([...hosts].reverse(), counts)).toEqual({ ok: true, hostID: 'i-b' });
  });

  it('skips full and draining hosts, and says why when none is left', () => {
    expect(chooseHost([host('i-a', 2), host('i-b', 10, false)], new Map([['i-a', 1]]))).toEqual({ ok: true, hostID: 'i-a' });
    expect(chooseHost([host('i-a', 2), host('i-b', 10, false)], new Map([['i-a', 2]]))).toEqual({
      ok: false,
      reason: 'all 1 accepting sandbox hosts are at capacity',
    });
    expect(chooseHost([host('i-a', 2, false)], new Map())).toEqual({ ok: false, reason: 'all 1 sandbox hosts are draining' });
    expect(chooseHost([], new Map())).toEqual({ ok: false, reason: 'no sandbox host is registered' });
  });

  it('spreads a burst of creates evenly when each pick is counted before the next', () => {
    const hosts = [host('i-a'), host('i-b'), host('i-c')];
    const counts = new Map<string, number>();
    for (let i = 0; i < 9; i++) {
      const pick = chooseHost(hosts, counts);
      if (!pick.ok) throw new Error(pick.reason);
      counts.set(pick.hostID, (counts.get(pick.hostID) ?? 0) + 1);
    }
    expect(Object.fromEntries(counts)).toEqual({ 'i-a': 3, 'i-b': 3, 'i-c': 3 });
  });
});
