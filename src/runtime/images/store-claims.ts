/**
 * Which paths of the image store (blob files, unpacked layer directories) the pulls of this process are using, so a
 * pull refused for disk removes what it stored and nothing another pull needs. A pull claims, as it learns them, its
 * layer blobs, its manifest and config blobs and its layer directories, and holds the claim from its start until it
 * returns. An image record (images/*.json) claims the same for an image pulled whole.
 *
 * The rule (`leftoversOf`): of the paths that appeared in the store while the refused pull ran, one goes when no
 * record and no other pull in flight claims it, and either the refused pull claimed it or no other pull is in flight.
 * So a blob stored before any pull claimed it (a manifest skopeo wrote as the pull was being refused) stays while
 * another pull is in flight: a few KiB kept rather than another pull's blob taken.
 */
export class StoreClaims {
  private readonly claims = new Set<Set<string>>();

  /** A new claim, held until `release`. */
  open(): Set<string> {
    const claim = new Set<string>();
    this.claims.add(claim);
    return claim;
  }

  release(claim: Set<string>): void {
    this.claims.delete(claim);
  }

  /** The claims of every pull in flight other than `own`. */
  othersThan(own: Set<string>): Set<string>[] {
    return [...this.claims].filter((c) => c !== own);
  }
}

/** The paths among `appeared` that the refused pull (claim `own`) removes; see the file comment for the rule. */
export function leftoversOf(
  appeared: readonly string[],
  own: ReadonlySet<string>,
  others: readonly ReadonlySet<string>[],
  recorded: ReadonlySet<string>,
): string[] {
  return appeared.filter((p) => !recorded.has(p) && !others.some((o) => o.has(p)) && (own.has(p) || others.length === 0));
}
