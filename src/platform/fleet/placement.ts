/**
 * Where a new sandbox goes in a fleet: the least-loaded sandbox host by the counts the hosts report in the fleet's
 * registry (fleet/registry.ts). Pure, so the platform calls it with what it read there, and the rule is tested on its own.
 *
 * The rule: among the hosts that are accepting sandboxes and below their capacity, the one with the lowest share of
 * its capacity in use (running + paused sandboxes, both hold memory and disk); ties go to the fewer sandboxes, then
 * to the smaller host ID, so every platform instance picks the same host from the same counts.
 */

export interface PlacementHost {
  /** Stable identifier of the host (e.g. its instance ID or private address). */
  hostID: string;
  /** How many sandboxes it may hold (its sandbox addresses, or memory / template memory). */
  capacity: number;
  /** False while the host drains (an instance refresh is replacing it). */
  accepting: boolean;
}

export type PlacementResult = { ok: true; hostID: string } | { ok: false; reason: string };

/**
 * Picks the host for one new sandbox. `counts` maps hostID -> sandboxes the catalog lists on it (a host the catalog
 * does not mention has none).
 */
export function chooseHost(hosts: readonly PlacementHost[], counts: ReadonlyMap<string, number>): PlacementResult {
  if (hosts.length === 0) return { ok: false, reason: 'no sandbox host is registered' };
  const candidates = hosts
    .filter((h) => h.accepting && h.capacity > 0)
    .map((h) => ({ ...h, used: counts.get(h.hostID) ?? 0 }))
    .filter((h) => h.used < h.capacity);
  if (candidates.length === 0) {
    const full = hosts.filter((h) => h.accepting).length;
    return {
      ok: false,
      reason: full === 0 ? `all ${hosts.length} sandbox hosts are draining` : `all ${full} accepting sandbox hosts are at capacity`,
    };
  }
  candidates.sort(
    (a, b) => a.used / a.capacity - b.used / b.capacity || a.used - b.used || (a.hostID < b.hostID ? -1 : a.hostID > b.hostID ? 1 : 0),
  );
  return { ok: true, hostID: candidates[0]!.hostID };
}
