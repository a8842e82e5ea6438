import * as aws from '@pulumi/aws';
import * as pulumi from '@pulumi/pulumi';
import type { StackConfig } from '../src/config';
import { HTTPS_PORT, TYPE_SANDBOX_FRONTEND } from './constants';

export interface SandboxFrontendArgs {
  config: StackConfig;
  subnetIds: pulumi.Input<string[]>;
  vpcId: pulumi.Input<string>;
}

/** The public names of a domain: the API, the sandbox host, and the per-port host form `{port}-{id}.{domain}`. */
export function frontendNames(domain: string): { api: string; sandbox: string; wildcard: string } {
  return { api: `api.${domain}`, sandbox: `sandbox.${domain}`, wildcard: `*.${domain}` };
}

/**
 * The network load balancer in front of the sandbox side (a fleet, or TLS for a domain): one target group for the
 * platform API and one for the gateway, TCP health checks. With a hosted zone: an ACM certificate for the domain and
 * `*.{domain}` (DNS-validated in that zone), TLS listeners (the gateway on 443 for `https://sandbox.{domain}` and the
 * host form, the API on its own port), and the three alias records. Without one: plain TCP listeners on the ports.
 */
export class SandboxFrontend extends pulumi.ComponentResource {
  readonly dnsName: pulumi.Output<string>;
  readonly apiTargetGroupArn: pulumi.Output<string>;
  readonly gatewayTargetGroupArn: pulumi.Output<string>;

  constructor(name: string, args: SandboxFrontendArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_SANDBOX_FRONTEND, name, {}, opts);
    const { config } = args;
    const parent = { parent: this };
    const apiPort = config.sandboxHost.apiPort;
    const gatewayPort = config.gateway.port;

    const nlb = new aws.lb.LoadBalancer(
      `${name}-nlb`,
      {
        loadBalancerType: 'network',
        internal: false,
        subnets: args.subnetIds,
        enableCrossZoneLoadBalancing: true,
        tags: { Name: `${name}-nlb` },
      },
      parent,
    );
    const targetGroup = (role: string, port: number) =>
      new aws.lb.TargetGroup(
        `${name}-${role}-tg`,
        {
          port,
          protocol: 'TCP',
          targetType: 'instance',
          vpcId: args.vpcId,
          healthCheck: { protocol: 'TCP', port: String(port), interval: 10, healthyThreshold: 2, unhealthyThreshold: 2 },
          // A sandbox stream can stay open for long; let connections drain instead of cutting them at once.
          deregistrationDelay: 60,
          tags: { Name: `${name}-${role}-tg` },
        },
        parent,
      );
    const apiTg = targetGroup('api', apiPort);
    const gatewayTg = targetGroup('gateway', gatewayPort);

    const zoneId = config.dns.zoneId;
    let certificateArn: pulumi.Output<string> | undefined;
    if (zoneId) {
      const names = frontendNames(config.gateway.domain);
      const cert = new aws.acm.Certificate(
        `${name}-cert`,
        {
          domainName: config.gateway.domain,
          subjectAlternativeNames: [names.wildcard],
          validationMethod: 'DNS',
          tags: { Name: `${name}-cert` },
        },
        parent,
      );
      // The domain and its wildcard share one validation record.
      const option = cert.domainValidationOptions.apply((options) => options[0]!);
      const validation = new aws.route53.Record(
        `${name}-cert-validation`,
        {
          zoneId,
          name: option.resourceRecordName,
          type: option.resourceRecordType,
          records: [option.resourceRecordValue],
          ttl: 300,
          allowOverwrite: true,
        },
        parent,
      );
      certificateArn = new aws.acm.CertificateValidation(
        `${name}-cert-valid`,
        { certificateArn: cert.arn, validationRecordFqdns: [validation.fqdn] },
        parent,
      ).certificateArn;
      for (const [key, recordName] of Object.entries(names)) {
        new aws.route53.Record(
          `${name}-${key}-record`,
          { zoneId, name: recordName, type: 'A', aliases: [{ name: nlb.dnsName, zoneId: nlb.zoneId, evaluateTargetHealth: true }] },
          parent,
        );
      }
    }

    const listener = (role: string, port: number, tg: aws.lb.TargetGroup) =>
      new aws.lb.Listener(
        `${name}-${role}-listener`,
        {
          loadBalancerArn: nlb.arn,
          port,
          ...(certificateArn
            ? { protocol: 'TLS', certificateArn, sslPolicy: 'ELBSecurityPolicy-TLS13-1-2-2021-06', alpnPolicy: 'HTTP1Only' }
            : { protocol: 'TCP' }),
          defaultActions: [{ type: 'forward', targetGroupArn: tg.arn }],
        },
        parent,
      );
    listener('api', apiPort, apiTg);
    listener('gateway', certificateArn ? HTTPS_PORT : gatewayPort, gatewayTg);

    this.dnsName = nlb.dnsName;
    this.apiTargetGroupArn = apiTg.arn;
    this.gatewayTargetGroupArn = gatewayTg.arn;
    this.registerOutputs({ dnsName: this.dnsName });
  }
}
