import * as aws from '@pulumi/aws';
import * as pulumi from '@pulumi/pulumi';
import type { BundleSource } from '../src/render';
import type { BundleFiles } from './bundle-files';
import { TYPE_RELEASE_BUNDLE } from './constants';

export interface ReleaseBundleArgs {
  files: BundleFiles;
}

/**
 * The release bundle in a private, encrypted S3 bucket, and the instance role that may read it. The bundle (several
 * MB of JavaScript) is far over the 16 KiB of EC2 user-data, so cloud-init fetches it with the role and checks each
 * file against the sums the user-data carries. The object's key is the bundle's digest: a new build is a new object,
 * and the hosts' user-data (which names it) changes with it.
 */
export class ReleaseBundle extends pulumi.ComponentResource {
  readonly source: pulumi.Output<BundleSource>;
  readonly instanceProfileName: pulumi.Output<string>;
  readonly roleName: pulumi.Output<string>;

  constructor(name: string, args: ReleaseBundleArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_RELEASE_BUNDLE, name, {}, opts);
    const parent = { parent: this };
    const bucket = new aws.s3.Bucket(`${name}-bucket`, { forceDestroy: true, tags: { Name: `${name}-bucket` } }, parent);
    new aws.s3.BucketPublicAccessBlock(
      `${name}-private`,
      { bucket: bucket.id, blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true },
      parent,
    );
    new aws.s3.BucketServerSideEncryptionConfiguration(
      `${name}-encryption`,
      { bucket: bucket.id, rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: 'AES256' } }] },
      parent,
    );
    const key = `bundle-${args.files.digest.slice(0, 16)}.zip`;
    const object = new aws.s3.BucketObjectv2(
      `${name}-object`,
      { bucket: bucket.id, key, source: new pulumi.asset.FileArchive(args.files.dir), contentType: 'application/zip' },
      parent,
    );

    const role = new aws.iam.Role(
      `${name}-role`,
      {
        assumeRolePolicy: JSON.stringify({
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }],
        }),
        tags: { Name: `${name}-role` },
      },
      parent,
    );
    // Read this one bucket's objects, nothing else.
    new aws.iam.RolePolicy(
      `${name}-read`,
      {
        role: role.id,
        policy: bucket.arn.apply((arn) =>
          JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: [`${arn}/*`] }] }),
        ),
      },
      parent,
    );
    const profile = new aws.iam.InstanceProfile(`${name}-profile`, { role: role.name }, parent);

    const region = aws.getRegionOutput({}, parent).region;
    this.source = pulumi
      .all([bucket.bucket, object.key, region])
      .apply(([b, k, r]) => ({ bucket: b, key: k, region: r, sums: args.files.sums }));
    this.instanceProfileName = profile.name;
    this.roleName = role.name;
    this.registerOutputs({ source: this.source, instanceProfileName: this.instanceProfileName });
  }
}
