import { HOST_PATHS } from './paths';

export interface ServerUnitOptions {
  /** Private address ss-server binds its outbound connections to (`-b`), so the world sees the egress address. */
  egressBindAddress?: string;
}

/** The ss-server command line the unit runs; the lab's supervisor runs the same line read back from the unit. */
export function serverCommand(options: ServerUnitOptions): string {
  const args = [HOST_PATHS.ssServer, '-c', HOST_PATHS.serverConfig, '--acl', HOST_PATHS.serverAcl];
  if (options.egressBindAddress) args.push('-b', options.egressBindAddress);
  return args.join(' ');
}

/** The open-files limit of ss-server (the unit's LimitNOFILE): one descriptor per relayed connection and per upstream. */
export const SERVER_OPEN_FILES = 51200;

/** systemd unit for ss-server: restarts always, SERVER_OPEN_FILES open files, starts once the network is online. */
export function renderServerUnit(options: ServerUnitOptions = {}): string {
  const pre = options.egressBindAddress ? `ExecStartPre=${HOST_PATHS.egressAddressScript}\n` : '';
  return `[Unit]
Description=Shadowsocks proxy server (sandbox-kit)
Documentation=man:ss-server(1)
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
${pre}ExecStart=${serverCommand(options)}
Restart=always
RestartSec=2
LimitNOFILE=${SERVER_OPEN_FILES}
NoNewPrivileges=true
ProtectHome=true
PrivateTmp=true

[Install]
WantedBy=multi-user.target
`;
}
