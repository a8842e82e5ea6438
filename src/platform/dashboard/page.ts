/**
 * The dashboard's two pages, whole: the login form and the dashboard itself (plain HTML, CSS and a script that polls
 * /dashboard/api/state every second and draws the sparklines as SVG). Every value from the platform is put into the
 * page as text (textContent), never as markup: build logs and template names come from users.
 */

const STYLE = `
:root { color-scheme: light dark; --ok: #2e9d5b; --warn: #c98a00; --bad: #c0392b; --muted: #888; --line: #3b82f6; --mem: #a855f7; }
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; }
header { display: flex; gap: 1rem; align-items: baseline; padding: .8rem 1.2rem; border-bottom: 1px solid #8884; }
header h1 { font-size: 1.1rem; margin: 0; }
main { padding: 1rem 1.2rem; display: grid; gap: 1.2rem; }
section h2 { font-size: 1rem; margin: 0 0 .5rem; }
.muted { color: var(--muted); }
.cards { display: flex; gap: 1rem; flex-wrap: wrap; }
.card { border: 1px solid #8884; border-radius: 8px; padding: .6rem .9rem; min-width: 12rem; }
.card .big { font-size: 1.3rem; font-family: ui-monospace, monospace; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #8883; vertical-align: middle; }
td.id { font-family: ui-monospace, monospace; }
.state { display: inline-block; padding: .05rem .5rem; border-radius: 999px; color: #fff; font-size: .8rem; }
.state.running, .state.ready { background: var(--ok); }
.state.paused, .state.building, .state.waiting { background: var(--warn); }
.state.error { background: var(--bad); }
svg.spark { width: 120px; height: 28px; vertical-align: middle; background: #8881; border-radius: 3px; }
.tpl { border: 1px solid #8884; border-radius: 8px; padding: .6rem .9rem; margin-bottom: .6rem; }
.tpl button { font: inherit; margin: .15rem .3rem .15rem 0; cursor: pointer; }
.tag { font-family: ui-monospace, monospace; background: #8882; border-radius: 4px; padding: 0 .3rem; margin-right: .3rem; }
pre#log { max-height: 24rem; overflow: auto; background: #1112; padding: .6rem; border-radius: 6px; white-space: pre-wrap; }
form { display: grid; gap: .6rem; max-width: 24rem; margin: 4rem auto; }
input { font: inherit; padding: .4rem; }
`;

const SCRIPT = `
const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v; else if (k === 'text') e.textContent = v; else if (k.startsWith('data-')) e.setAttribute(k, v); else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
};
const NS = 'http://www.w3.org/2000/svg';
function spark(values, color) {
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('class', 'spark');
  svg.setAttribute('viewBox', '0 0 120 28');
  svg.setAttribute('preserveAspectRatio', 'none');
  const line = document.createElementNS(NS, 'polyline');
  // One sample is drawn as a flat line across.
  if (values.length === 1) values = [values[0], values[0]];
  const n = Math.max(values.length - 1, 1);
  line.setAttribute('points', values.map((v, i) => (i * 120 / n).toFixed(1) + ',' + (27 - Math.min(100, Math.max(0, v)) * 0.26).toFixed(1)).join(' '));
  // CSS variables work in style, not in SVG presentation attributes.
  line.style.fill = 'none';
  line.style.stroke = color;
  line.style.strokeWidth = '1.5';
  svg.append(line);
  return svg;
}
function age(iso, now) {
  const s = Math.max(0, Math.round((Date.parse(now) - Date.parse(iso)) / 1000));
  return s < 60 ? s + ' s' : s < 3600 ? Math.floor(s / 60) + ' min' : Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
}
const pct = (v) => (v === undefined || v === null ? '–' : v.toFixed(0) + '%');
function renderProxy(p) {
  const box = $('proxy');
  box.replaceChildren();
  if (p.problem) { box.append(el('div', { class: 'muted', text: p.problem })); return; }
  for (const [label, value] of [['ingress', p.ingress], ['egress', p.egress], ['last rotation', p.rotatedAt ? new Date(p.rotatedAt).toLocaleString() : 'never']])
    box.append(el('div', { class: 'card' }, el('div', { class: 'muted', text: label }), el('div', { class: 'big', text: value, 'data-proxy': label })));
}
function renderSandboxes(list, now) {
  $('sandbox-count').textContent = String(list.length);
  const body = $('sandboxes');
  body.replaceChildren(...list.map((s) => el('tr', { 'data-sandbox': s.sandboxID },
    el('td', { class: 'id', text: s.sandboxID }),
    el('td', {}, el('span', { class: 'state ' + s.state, text: s.state })),
    el('td', { text: s.template }),
    el('td', { text: age(s.startedAt, now) }),
    el('td', {}, spark(s.cpu, 'var(--line)'), ' ', el('span', { text: pct(s.latest && s.latest.cpuUsedPct) + ' of ' + s.cpuCount + ' CPU' })),
    el('td', {}, spark(s.mem, 'var(--mem)'), ' ', el('span', { text: pct(s.mem[s.mem.length - 1]) + ' of ' + s.memoryMB + ' MB' })),
  )));
  if (list.length === 0) body.append(el('tr', {}, el('td', { colSpan: 6, class: 'muted', text: 'no sandboxes' })));
}
function renderTemplates(list) {
  const box = $('templates');
  box.replaceChildren(...list.map((t) => el('div', { class: 'tpl', 'data-template': t.templateID },
    el('div', {}, el('strong', { text: t.names.join(', ') || t.templateID }), ' ', el('span', { class: 'muted', text: t.templateID })),
    el('div', {}, ...t.tags.map((g) => el('span', { class: 'tag', text: g.tag + ' → ' + g.buildID.slice(0, 8) }))),
    el('div', {}, ...t.builds.map((b) => {
      const button = el('button', { 'data-build': b.buildID }, el('span', { class: 'state ' + b.status, text: b.status }), ' ' + b.buildID.slice(0, 8) + ' ' + new Date(b.createdAt).toLocaleTimeString());
      button.onclick = () => follow(t.templateID, b.buildID, (t.names[0] || t.templateID));
      return button;
    })),
  )));
  if (list.length === 0) box.append(el('div', { class: 'muted', text: 'no templates built yet' }));
}
let following = 0;
async function follow(templateID, buildID, name) {
  const me = ++following;
  $('log-panel').hidden = false;
  $('log-title').textContent = name + ' ' + buildID;
  $('log').replaceChildren();
  let offset = 0;
  let status = 'waiting';
  for (;;) {
    if (me !== following) return;
    const res = await fetch('/dashboard/api/templates/' + encodeURIComponent(templateID) + '/builds/' + encodeURIComponent(buildID) + '/logs?offset=' + offset);
    if (!res.ok) { $('log-status').textContent = 'log unavailable (' + res.status + ')'; return; }
    const page = await res.json();
    status = page.status;
    $('log-status').textContent = status;
    $('log-status').className = 'state ' + status;
    for (const e of page.entries) $('log').append(el('div', { class: 'line', text: '[' + e.level + '] ' + e.message }));
    offset += page.entries.length;
    if (page.entries.length > 0) $('log').scrollTop = $('log').scrollHeight;
    if ((status === 'ready' || status === 'error') && page.entries.length === 0) return;
    await new Promise((r) => setTimeout(r, 700));
  }
}
async function refresh() {
  try {
    const res = await fetch('/dashboard/api/state');
    if (res.status === 401) { location.reload(); return; }
    const s = await res.json();
    renderProxy(s.proxy);
    renderSandboxes(s.sandboxes, s.now);
    renderTemplates(s.templates);
    $('updated').textContent = 'updated ' + new Date(s.now).toLocaleTimeString();
  } catch (err) {
    $('updated').textContent = 'cannot reach the platform: ' + err.message;
  }
}
refresh();
setInterval(refresh, 1000);
`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function dashboardPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sandbox-kit</title><meta name="viewport" content="width=device-width">
<style>${STYLE}</style></head>
<body>
<header><h1>sandbox-kit</h1><span class="muted" id="updated">loading…</span></header>
<main>
<section><h2>Proxy</h2><div class="cards" id="proxy"></div></section>
<section><h2>Sandboxes (<span id="sandbox-count">0</span>)</h2>
<table><thead><tr><th>ID</th><th>State</th><th>Template</th><th>Age</th><th>CPU</th><th>Memory</th></tr></thead><tbody id="sandboxes"></tbody></table></section>
<section><h2>Templates</h2><div id="templates"></div></section>
<section id="log-panel" hidden><h2>Build log <span id="log-title" class="muted"></span> <span id="log-status"></span></h2><pre id="log"></pre></section>
</main>
<script>${SCRIPT}</script>
</body></html>`;
}

export function loginPage(message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sandbox-kit: sign in</title><style>${STYLE}</style></head>
<body><form method="post" action="/dashboard/login">
<h1>sandbox-kit</h1>
<label for="key">Platform API key</label>
<input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button>
${message ? `<p class="muted" id="login-error">${escapeHtml(message)}</p>` : ''}
</form></body></html>`;
}
