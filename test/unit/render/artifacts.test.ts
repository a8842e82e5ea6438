import { ARTIFACT_NAMES, renderArtifacts } from '../../../src/render';
import { EGRESS_BIND, HOST_NETWORKS, PASSWORD, SERVER_IP, defaults } from './helpers/stack-fixtures';

describe('renderArtifacts', () => {
  const shared = renderArtifacts(defaults, { serverIp: SERVER_IP, password: PASSWORD });
  const dedicated = renderArtifacts(defaults, {
    serverIp: SERVER_IP,
    password: PASSWORD,
    egressBindAddress: EGRESS_BIND,
    hostNetworks: HOST_NETWORKS,
  });

  it("lists the issue's eight files plus the client start scripts, and the egress script only with an egress address", () => {
    const names = shared.map((a) => a.name);
    for (const name of [
      'server.json',
      'client-local.json',
      'client-transparent.json',
      'nat-chain.sh',
      'sysctl.conf',
      'server.acl',
      'ss-server.service',
      'cloud-init.yaml',
    ]) {
      expect(names).toContain(name);
    }
    expect(names).not.toContain('egress-address.sh');
    expect(dedicated.map((a) => a.name).sort()).toEqual([...ARTIFACT_NAMES].sort());
  });

  it('marks exactly the files holding the password as secret, and writes them 0600', () => {
    for (const artifact of dedicated) {
      expect({ name: artifact.name, secret: artifact.secret }).toEqual({
        name: artifact.name,
        secret: artifact.content.includes(PASSWORD),
      });
      if (artifact.secret) expect({ name: artifact.name, mode: artifact.mode }).toEqual({ name: artifact.name, mode: 0o600 });
    }
  });

  it('makes scripts executable (0755) and starts them with #!/bin/sh', () => {
    for (const artifact of dedicated.filter((a) => a.name.endsWith('.sh'))) {
      expect({ name: artifact.name, mode: artifact.mode }).toEqual({ name: artifact.name, mode: 0o755 });
      expect(artifact.content.startsWith('#!/bin/sh\n')).toBe(true);
    }
  });
});
