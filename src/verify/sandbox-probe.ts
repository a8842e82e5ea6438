/**
 * The end-to-end probe `verify` runs on a sandbox host: a small Node program (the host has Node for the kit) that
 * creates a sandbox from the template through the platform API, runs one request inside it through the gateway
 * (the agent's Process.Start, Connect server streaming), removes the sandbox, and prints what it saw as one JSON
 * line. Rendered here, parsed by parseProbeReport: the effects stay on the host, the logic is pure.
 */
import type { ClientMode } from '../config';
import { ACCESS_TOKEN_HEADER } from '../contract/headers';
import { brandNames } from '../contract/brand';
import { encodeEnvelope, splitEnvelopes } from '../contract/connect-envelope';

export interface SandboxProbeOptions {
  apiPort: number;
  /** The gateway that routes to the sandbox, e.g. http://127.0.0.1:3000 or a fleet's https://sandbox.example.com. */
  gatewayUrl: string;
  agentPort: number;
  brand: string;
  apiKeyFile: string;
  template: string;
  /** A what-is-my-IP URL (plain HTTP), asked from inside the sandbox. */
  checkUrl: string;
  /** local: through the template's SOCKS5 port; transparent: a plain request (the NAT chain proxies it). */
  mode: ClientMode;
  socksPort: number;
  /** Node inside every sandbox (the runtime's payload). */
  sandboxNode: string;
  /** What the probe runs in the sandbox as root; default the request of inSandboxRequest with the sandbox's Node. */
  command?: SandboxCommand;
}

export interface SandboxCommand {
  cmd: string;
  args: string[];
}

/** Runs inside the sandbox: one HTTP GET, through SOCKS5 or directly; prints the body. */
export function inSandboxRequest(url: string, socksPort: number | undefined): string {
  return `const net=require("net");const u=new URL(${JSON.stringify(url)});const port=Number(u.port||80);
const req="GET "+(u.pathname+u.search)+" HTTP/1.0\\r\\nHost: "+u.host+"\\r\\nUser-Agent: sandbox-kit-verify\\r\\n\\r\\n";
const done=(b)=>{const t=b.toString("latin1");const i=t.indexOf("\\r\\n\\r\\n");process.stdout.write(i<0?t:t.slice(i+4));};
const chunks=[];const fail=(e)=>{console.error(String(e&&e.message||e));process.exit(1);};setTimeout(()=>fail("timeout"),10000).unref();
${
  socksPort === undefined
    ? `const s=net.connect(port,u.hostname,()=>s.write(req));s.on("data",(d)=>chunks.push(d));s.on("end",()=>done(Buffer.concat(chunks)));s.on("error",fail);`
    : `const s=net.connect(${socksPort},"127.0.0.1",()=>s.write(Buffer.from([5,1,0])));let stage=0;
s.on("data",(d)=>{if(stage===0){if(d[1]!==0)fail("socks auth refused");stage=1;const h=Buffer.from(u.hostname);
s.write(Buffer.concat([Buffer.from([5,1,0,3,h.length]),h,Buffer.from([port>>8,port&255])]));}
else if(stage===1){if(d[1]!==0)fail("socks connect refused: "+d[1]);stage=2;s.write(req);}else chunks.push(d);});
s.on("end",()=>done(Buffer.concat(chunks)));s.on("error",fail);`
}`;
}

/**
 * Runs inside the sandbox as root, the way a hostile program would get past the stack's proxy: it flushes the
 * sandbox's NAT table (the transparent mode's chain; a local-mode template has no iptables, which changes nothing)
 * and makes the request directly, with no proxy, to `url`. Its stdout is the request's body only; what the flush did
 * goes to stderr.
 */
export function bypassCommand(url: string, sandboxNode: string): SandboxCommand {
  const flush = ['iptables', 'iptables-legacy']
    .map((t) => `if command -v ${t} >/dev/null 2>&1; then ${t} -t nat -F && ${t} -t nat -X && echo "${t}: nat table flushed" >&2; fi`)
    .join('; ');
  return { cmd: '/bin/sh', args: ['-c', `${flush}; exec "$0" -e "$1"`, sandboxNode, inSandboxRequest(url, undefined)] };
}

/** The host-side program (run with `node -e`). It never prints the API key or the sandbox's token. */
export function renderSandboxProbe(o: SandboxProbeOptions): string {
  const names = brandNames(o.brand);
  const command = o.command ?? {
    cmd: o.sandboxNode,
    args: ['-e', inSandboxRequest(o.checkUrl, o.mode === 'local' ? o.socksPort : undefined)],
  };
  return `"use strict";
const fs = require("fs");
const key = fs.readFileSync(${JSON.stringify(o.apiKeyFile)}, "utf8").trim();
const api = "http://127.0.0.1:${o.apiPort}";
const gateway = ${JSON.stringify(o.gatewayUrl.replace(/\/$/, ''))};
const report = { create: null, frames: [], kill: null, error: null };
${encodeEnvelope.toString()}
${splitEnvelopes.toString()}
const envelope = (message) => encodeEnvelope(0, Buffer.from(JSON.stringify(message)));
const frames = (buf) => splitEnvelopes(buf).frames.map((f) => ({ flags: f.flags, message: JSON.parse(f.message.toString() || "{}") }));
(async () => {
  let id;
  try {
    const created = await fetch(api + "/v2/sandboxes", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ templateID: ${JSON.stringify(o.template)}, timeout: 120 }),
    });
    const body = await created.json().catch(() => ({}));
    report.create = { status: created.status, sandboxID: body.sandboxID, message: body.message };
    if (!created.ok) return;
    id = body.sandboxID;
    const started = await fetch(gateway + "/process.Process/Start", {
      method: "POST",
      headers: {
        "content-type": "application/connect+json",
        "connect-protocol-version": "1",
        ${JSON.stringify(names.sandboxIdHeader)}: id,
        ${JSON.stringify(names.sandboxPortHeader)}: "${o.agentPort}",
        ${JSON.stringify(ACCESS_TOKEN_HEADER)}: body.envdAccessToken || "",
        authorization: "Basic " + Buffer.from("root:").toString("base64"),
      },
      body: envelope({ process: { cmd: ${JSON.stringify(command.cmd)}, args: ${JSON.stringify(command.args)}, envs: {} } }),
    });
    report.frames = started.ok ? frames(Buffer.from(await started.arrayBuffer())) : [{ flags: -1, message: { status: started.status, body: await started.text() } }];
  } catch (err) {
    report.error = String(err && err.message || err);
  } finally {
    if (id) {
      const killed = await fetch(api + "/sandboxes/" + id, { method: "DELETE", headers: { "x-api-key": key } }).catch((e) => ({ status: String(e) }));
      report.kill = killed.status;
    }
    process.stdout.write(JSON.stringify(report) + "\\n");
  }
})();
`;
}
