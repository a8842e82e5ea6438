/**
 * Hostile code in sandboxes of `sandbox-kit up`'s system, made and driven by the unmodified E2B SDK in a plain Node
 * process, as a user of that system would. argv: JSON {opts, proxyTemplate, mode, plan: {web, metadata, sandboxHostPublic,
 * egressIp}}. Creates two sandboxes from `base` (A, B) and one from the proxy template (P), runs the probes, kills
 * all three, and prints one JSON line: {ok, probes: {name: {exitCode, stdout, stderr}}, ...} or {ok: false, message}.
 */
import { Sandbox } from 'e2b';

interface Input {
  opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
  proxyTemplate: string;
  /** The proxy template's client mode: local (SOCKS5 on 127.0.0.1:1080) or transparent (a NAT chain). */
  mode: string;
  plan: { web: string; metadata: string; sandboxHostPublic: string };
}
interface Ran {
  exitCode: number;
  stdout: string;
  stderr: string;
}

const input = JSON.parse(process.argv[2] ?? '{}') as Input;
const made: Sandbox[] = [];

async function asRoot(sbx: Sandbox, cmd: string, timeoutMs = 60_000): Promise<Ran> {
  try {
    const r = await sbx.commands.run(cmd, { user: 'root', timeoutMs });
    return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    // CommandExitError carries the result of a command that exited non-zero.
    const e = err as Partial<Ran> & Error;
    if (typeof e.exitCode === 'number') return { exitCode: e.exitCode, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    throw err;
  }
}

/** A server on port 8080 of a sandbox that answers with the request headers it received, as JSON. */
const HEADER_ECHO = `cat > /tmp/echo.py <<'EOF'
import http.server, json
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({k.lower(): v for k, v in self.headers.items()}).encode()
        self.send_response(200); self.send_header('content-length', str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(('0.0.0.0', 8080), H).serve_forever()
EOF
nohup python3 /tmp/echo.py >/dev/null 2>&1 &
for i in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null && exit 0; sleep 0.2; done; exit 1`;

/** Root in a sandbox adds another sandbox's address and announces it with gratuitous ARP from a raw socket. */
const STEAL = (address: string) => `dev=$(ip -4 -o addr show scope global | awk '{print $2}' | head -1)
ip addr add ${address}/32 dev "$dev"
python3 - "$dev" ${address} <<'EOF'
import socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
mac = s.getsockname()[4]
ip = socket.inet_aton(sys.argv[2])
arp = b'\\xff' * 6 + mac + b'\\x08\\x06' + struct.pack('!HHBBH', 1, 0x0800, 6, 4, 2) + mac + ip + b'\\xff' * 6 + ip
for _ in range(3): s.send(arp)
print('announced')
EOF`;

async function main(): Promise<Record<string, unknown>> {
  const { opts, plan } = input;
  const a = await Sandbox.create('base', opts);
  made.push(a);
  const b = await Sandbox.create('base', opts);
  made.push(b);
  const p = await Sandbox.create(input.proxyTemplate, opts);
  made.push(p);
  const probes: Record<string, Ran> = {};
  const address = async (sbx: Sandbox) =>
    (await asRoot(sbx, "ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | head -1")).stdout.trim();
  const addressA = await address(a);
  const addressB = await address(b);
  const apiHost = new URL(opts.apiUrl);
  const gateway = new URL(opts.sandboxUrl);
  const defaultRoute = (await asRoot(a, "ip -4 route show default | awk '{print $3}'")).stdout.trim();

  // The kernel's boundary: who root is, the filter, nested namespaces.
  probes.uidMap = await asRoot(a, 'cat /proc/self/uid_map');
  probes.seccomp = await asRoot(a, "grep '^Seccomp:' /proc/self/status");
  probes.nestedUserns = await asRoot(a, 'unshare -Ur id -u');
  // The host: the metadata stand-in, the platform API and the gateway by every address a sandbox could try.
  probes.metadata = await asRoot(a, `curl -sS --max-time 5 http://${plan.metadata}/`);
  probes.apiByGateway = await asRoot(a, `curl -sS --max-time 5 http://${defaultRoute}:${apiHost.port}/health`);
  probes.gatewayByRoute = await asRoot(a, `curl -sS --max-time 5 http://${defaultRoute}:${gateway.port}/`);
  // Another sandbox: its agent directly, and its address taken over to catch calls meant for it.
  probes.otherAgent = await asRoot(a, `curl -sS --max-time 5 -o /dev/null -w '%{http_code}' http://${addressB}:49983/health`);
  await b.files.write('/tmp/whose', 'B');
  await a.files.write('/tmp/whose', 'A');
  probes.stealAddress = await asRoot(a, STEAL(addressB));
  const readFromB = await (await Sandbox.connect(b.sandboxId, opts)).files.read('/tmp/whose');
  // The gateway does not hand a sandbox's agent token to other ports.
  probes.headerEcho = await asRoot(a, HEADER_ECHO);
  const echoed = await fetch(`${opts.sandboxUrl}/`, {
    headers: { 'E2b-Sandbox-Id': a.sandboxId, 'E2b-Sandbox-Port': '8080', 'X-Access-Token': 'token-sent-by-the-client' },
  });
  const echoBody = await echoed.text();
  // Egress: the proxy template's sandbox leaves by the egress address, and root in it cannot go around the proxy.
  const socks = input.mode === 'local' ? '--socks5-hostname 127.0.0.1:1080 ' : '';
  probes.proxied = await asRoot(p, `curl -sS --max-time 10 ${socks}http://${plan.web}/`);
  probes.bypass = await asRoot(p, `iptables -t nat -F 2>/dev/null; curl -sS --max-time 5 --noproxy '*' http://${plan.web}/`);
  // The legitimate uses of the same paths.
  probes.legitRun = await asRoot(a, 'id -u; echo ok > /home/user/ok && cat /home/user/ok');
  probes.legitLoopback = await asRoot(a, 'curl -sS --max-time 5 -o /dev/null -w "%{http_code}" http://127.0.0.1:8080/');
  return {
    probes,
    addressA,
    addressB,
    readFromB,
    echoStatus: echoed.status,
    echoBody,
  };
}

main()
  .then(
    (value) => console.log(JSON.stringify({ ok: true, ...value })),
    (err: Error) => console.log(JSON.stringify({ ok: false, name: err.constructor?.name ?? err.name, message: err.message })),
  )
  .finally(async () => {
    for (const sbx of made) await sbx.kill().catch(() => undefined);
  });
