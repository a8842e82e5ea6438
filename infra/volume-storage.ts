import * as aws from '@pulumi/aws';
import * as pulumi from '@pulumi/pulumi';
import { TYPE_VOLUME_STORAGE } from './constants';

export interface VolumeStorageArgs {
  /** The fleet's subnets: a mount target in each, so every host mounts from its own. */
  subnetIds: pulumi.Input<string[]>;
  /** The volumes security group: NFS from the hosts only (sandboxRules, `nfs-from-hosts`). */
  securityGroupId: pulumi.Input<string>;
}

/**
 * The fleet's volumes: one Amazon EFS file system (encrypted at rest, elastic throughput, it grows as volumes fill)
 * with a mount target in each of the fleet's subnets. Every sandbox host mounts it at the same path
 * (renderSandboxCloudInit, `volumesFileSystem`), so a volume is a directory on it and a sandbox on any host mounts
 * any volume; nothing of the kit replicates it.
 *
 * EFS has no per-directory quota, so a volume's size is not enforced by the kernel here as on one host (a loop
 * image each): the platform measures the volumes that running sandboxes mount (du, once a minute) and refuses new
 * mounts over the size, file API writes over it, and creates over the team's stored bytes; writes from sandboxes
 * already running are not stopped (docs/volumes.md#size has the table).
 */
export class VolumeStorage extends pulumi.ComponentResource {
  readonly fileSystemId: pulumi.Output<string>;
  /** What the hosts mount: `<id>.efs.<region>.amazonaws.com`. */
  readonly dnsName: pulumi.Output<string>;

  constructor(name: string, args: VolumeStorageArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_VOLUME_STORAGE, name, {}, opts);
    const parent = { parent: this };
    const fs = new aws.efs.FileSystem(
      `${name}-fs`,
      { encrypted: true, performanceMode: 'generalPurpose', throughputMode: 'elastic', tags: { Name: `${name}-fs` } },
      parent,
    );
    pulumi
      .output(args.subnetIds)
      .apply((ids) =>
        [...ids]
          .sort()
          .map(
            (subnetId, i) =>
              new aws.efs.MountTarget(
                `${name}-mount-${i}`,
                { fileSystemId: fs.id, subnetId, securityGroups: [args.securityGroupId] },
                parent,
              ),
          ),
      );
    this.fileSystemId = fs.id;
    this.dnsName = fs.dnsName;
    this.registerOutputs({ fileSystemId: this.fileSystemId, dnsName: this.dnsName });
  }
}
