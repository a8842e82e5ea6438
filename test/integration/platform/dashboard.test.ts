/**
 * The platform's dashboard in a real browser (Debian's chromium driven by playwright-core): the login refuses a wrong
 * key and takes the right one; the proxy's addresses show; the sandbox list follows creates and kills made through
 * the unmodified E2B SDK; a template build's log streams in while it runs. Root only (real sandboxes); its own /24 of
 * the standalone sandbox network, so it runs beside the other test files.
 */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { writeProxyFacts } from '../../../src/platform/dashboard/proxy-facts';
import type { RunningGateway } from '../../../src/gateway';
import type { PlatformOnHost } from '../../../src/platform/on-host';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { SdkDriver } from './helpers/sdk-driver';
import { startPlatformAndGateway } from './helpers/platform-and-gateway';

jest.setTimeout(300_000);

const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let stateDir: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let sdk: SdkDriver;
let browser: BrowserContext;
let page: Page;
let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };

beforeAll(async () => {
  await baseRootfs();
  stateDir = await mkdtemp(join(tmpdir(), 'skdash-'));
  const proxyFactsFile = join(stateDir, 'proxy.json');
  writeProxyFacts(proxyFactsFile, { ingress: '203.0.113.10', egress: '203.0.113.20', rotatedAt: '2026-01-02T03:04:05.000Z' });
  const agent = await freshAgentPayload(join(stateDir, 'bundle'));
  ({ platform, gateway, opts } = await startPlatformAndGateway(stateDir, agent, { platform: { proxyFactsFile } }));
  sdk = await SdkDriver.start();
  // A fresh profile for every run: nothing of an earlier run (cookies, cache) is reused.
  browser = await chromium.launchPersistentContext(join(stateDir, 'chromium-profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_FLAGS,
  });
  page = browser.pages()[0] ?? (await browser.newPage());
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await sdk?.close();
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

test('sign in: a wrong key is refused, an admin API key opens the dashboard with the proxy addresses', async () => {
  await page.goto(`${platform.url}/dashboard`);
  await page.fill('#key', 'not-the-key');
  await page.click('button[type=submit]');
  await page.waitForSelector('#login-error');
  expect(await page.textContent('#login-error')).toContain('not an admin API key');
  const denied = await page.evaluate(async () => (await fetch('/dashboard/api/state')).status);
  expect(denied).toBe(401);

  await page.fill('#key', platform.apiKey);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-proxy="egress"]');
  expect(await page.textContent('[data-proxy="ingress"]')).toBe('203.0.113.10');
  expect(await page.textContent('[data-proxy="egress"]')).toBe('203.0.113.20');
});

test('the sandbox list follows creates and kills made through the SDK, with CPU and memory sparklines', async () => {
  const s = await sdk.create('base', opts);
  const row = page.locator(`tr[data-sandbox="${s.sandboxId}"]`);
  await row.waitFor({ timeout: 10_000 });
  expect(await row.locator('.state').textContent()).toBe('running');
  expect(await row.locator('td').nth(2).textContent()).toBe('base');
  // A metrics sample (every 5 s) draws both sparklines.
  await row.locator('polyline[points*=","]').first().waitFor({ timeout: 15_000 });
  expect(await row.locator('svg.spark').count()).toBe(2);

  await sdk.call(s.sandboxId, 'pause');
  await row.locator('.state.paused').waitFor({ timeout: 10_000 });
  await page.screenshot({ path: join(process.env.DASHBOARD_SCREENSHOT_DIR ?? stateDir, 'dashboard-sandboxes.png'), fullPage: true });
  await sdk.call(s.sandboxId, 'kill');
  await row.waitFor({ state: 'detached', timeout: 10_000 });
});

test("a build's log streams into the page while the build runs", async () => {
  const name = `dash-${Date.now().toString(36)}`;
  const build = sdk.build(name, 'for i in 1 2 3 4 5 6 7 8; do echo "dashboard-line-$i"; sleep 1; done', opts);
  const button = page.locator('[data-build]', { has: page.locator('.state.building') }).first();
  await button.waitFor({ timeout: 60_000 });
  await button.click();
  await page.locator('#log .line', { hasText: 'dashboard-line-2' }).waitFor({ timeout: 60_000 });
  // Seen while the build still ran: the log streams, it is not shown at the end.
  const statusWhenSeen = await page.textContent('#log-status');
  await build;
  await page.locator('#log-status.ready').waitFor({ timeout: 60_000 });
  expect(statusWhenSeen).toBe('building');
  const lines = await page.locator('#log .line').allTextContents();
  const order = [1, 2, 3, 8].map((i) => lines.findIndex((l) => l.includes(`dashboard-line-${i}`)));
  expect(order.every((p) => p >= 0)).toBe(true);
  expect([...order].sort((a, b) => a - b)).toEqual(order);
  await page.screenshot({ path: join(process.env.DASHBOARD_SCREENSHOT_DIR ?? stateDir, 'dashboard-build.png'), fullPage: true });
});
