/** The nginx peer of the gateway benchmark: routes by the same header to the same agent, with a keep-alive pool. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface NginxPeerConfig {
  dir: string;
  listenPort: number;
  /** Header carrying the sandbox ID, as nginx names its variable: `$http_svc_sandbox_id`. */
  idHeader: string;
  sandboxID: string;
  agentHost: string;
  agentPort: number;
  /** The same token check the gateway does (plain compare: stock nginx has no sha256). */
  accessToken: string;
  /** nginx worker processes, as many as the gateway's (default 1: a single process, like one gateway). */
  workers?: number;
}

/** nginx.conf for the peer: as many worker processes as the gateway has (one: a single process, no master). */
export function nginxConfig(c: NginxPeerConfig): string {
  const headerVar = `$http_${c.idHeader.toLowerCase().replace(/-/g, '_')}`;
  const workers = c.workers ?? 1;
  return `daemon off;
master_process ${workers > 1 ? 'on' : 'off'};
worker_processes ${workers};
pid ${join(c.dir, 'nginx.pid')};
error_log ${join(c.dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${join(c.dir, 'body')};
  proxy_temp_path ${join(c.dir, 'proxy')};
  fastcgi_temp_path ${join(c.dir, 'fastcgi')};
  uwsgi_temp_path ${join(c.dir, 'uwsgi')};
  scgi_temp_path ${join(c.dir, 'scgi')};
  map ${headerVar} $sandbox_upstream {
    default "";
    ${c.sandboxID} sandbox_${c.sandboxID};
  }
  map $http_x_access_token $token_ok {
    default 0;
    "${c.accessToken}" 1;
  }
  upstream sandbox_${c.sandboxID} {
    server ${c.agentHost}:${c.agentPort};
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${c.listenPort};
    location / {
      if ($sandbox_upstream = "") { return 502; }
      if ($token_ok = 0) { return 401; }
      proxy_pass http://$sandbox_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
`;
}

export async function startNginx(c: NginxPeerConfig): Promise<ChildProcess> {
  await mkdir(c.dir, { recursive: true });
  const file = join(c.dir, 'nginx.conf');
  await writeFile(file, nginxConfig(c));
  const child = spawn('nginx', ['-c', file, '-p', c.dir, '-e', join(c.dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  child.once('exit', (code) => {
    if (code !== 0 && code !== null) console.error(`nginx exited with ${code}: ${stderr}`);
  });
  return child;
}
