/**
 * The sandbox host's data volume: a second EBS volume (infra attaches it as DATA_VOLUME_DEVICE) holding the kit's
 * state (/var/lib/sandbox-kit: the platform's sandbox disks, template layers and uploads), so sandboxes and builds
 * never fill the root volume the system runs from. Formatted XFS on first boot (a volume that has a file system
 * keeps it), found again by its label at every boot through fstab.
 */
import { SANDBOX_HOST_PATHS as P } from './sandbox-host-paths';

/** The device name the volume is attached as (on Nitro it shows up as an NVMe disk; the script finds it). */
export const DATA_VOLUME_DEVICE = '/dev/sdf';
/** The XFS label the volume gets and fstab mounts by. */
export const DATA_VOLUME_LABEL = 'sk-data';

/** The boot script: mounts the volume on P.state, formatting it the first time. Idempotent. */
export function renderDataVolumeScript(): string {
  return `#!/bin/sh
# Mounts the data volume (label ${DATA_VOLUME_LABEL}, XFS) on ${P.state}; formats it when it has no file system yet.
set -eu
target=${P.state}
if mountpoint -q "$target"; then exit 0; fi
dev=$(blkid -L ${DATA_VOLUME_LABEL} || true)
if [ -z "$dev" ]; then
  # The one whole disk that is neither the root disk nor partitioned nor formatted: the new data volume.
  root_disk=$(lsblk -no PKNAME "$(findmnt -no SOURCE /)" | head -n 1)
  for d in $(lsblk -dnpo NAME,TYPE | awk '$2 == "disk" {print $1}'); do
    [ "$(basename "$d")" = "$root_disk" ] && continue
    [ "$(lsblk -nro NAME "$d" | wc -l)" -eq 1 ] || continue
    [ -z "$(blkid -o value -s TYPE "$d" || true)" ] || continue
    dev=$d
    break
  done
  if [ -z "$dev" ]; then
    echo "data-volume: no unformatted data disk found (attached as ${DATA_VOLUME_DEVICE})" >&2
    exit 1
  fi
  mkfs.xfs -q -L ${DATA_VOLUME_LABEL} "$dev"
fi
grep -q "^LABEL=${DATA_VOLUME_LABEL} " /etc/fstab || echo "LABEL=${DATA_VOLUME_LABEL} $target xfs defaults,noatime,nofail 0 2" >> /etc/fstab
install -d -m 0700 "$target"
mount "$target"
echo "data-volume: $dev mounted on $target"
`;
}
