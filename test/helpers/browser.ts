// A real browser for the seller panel's tests: playwright-core driving Debian's Chromium (the npm
// packages that download their own browser cannot work here), and axe-core run inside the page.
//
// Chromium comes from Debian (`apt-get install -y chromium`, /usr/bin/chromium; .ci/run installs it on
// a machine without it); CHROMIUM_PATH points elsewhere. Without it, browser tests skip with
// browserSkipReason()'s reason, except under CI=true, where they run and fail loudly.
//
// Every wait is bounded: the launch, each action and navigation (newPage's default timeout) and
// axe's run in the page.
import { accessSync, constants, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Where Debian's package puts Chromium (a shell wrapper around /usr/lib/chromium/chromium). */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';
/** The README's screenshots (docs/screenshots/ at the repository's root), written only by `npm run screenshots`. */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
/** A phone held upright (an iPhone 12 to 15's CSS pixels) and a desk's window: the panel is made for both. */
export const PHONE = { width: 390, height: 844 } as const;
export const DESK = { width: 1280, height: 900 } as const;
/** The two sizes, by the words the screenshots are named with. */
export const SIZES = { celular: PHONE, mesa: DESK } as const;
/** Viewport of every page newPage opens unless told otherwise. */
export const VIEWPORT = DESK;

/**
 * SCREENSHOTS=1 (set by `npm run screenshots`): screenshot() writes the README's images. Otherwise
 * it writes nothing unless given a directory, so running the tests leaves the checkout as it was.
 */
export const screenshotsWanted = (): boolean => process.env.SCREENSHOTS === '1';

const LAUNCH_TIMEOUT_MS = 20_000;
const ACTION_TIMEOUT_MS = 5_000;
const AXE_TIMEOUT_MS = 15_000;
const INSTALL_HINT = 'install it with `apt-get install -y chromium` (Debian), or set CHROMIUM_PATH to a Chromium binary';

const inCi = (): boolean => !['', '0', 'false'].includes((process.env.CI ?? '').toLowerCase());

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Chromium to drive: CHROMIUM_PATH if set, else Debian's /usr/bin/chromium; undefined when that file is not an executable. */
export function chromiumPath(): string | undefined {
  const candidate = process.env.CHROMIUM_PATH || DEBIAN_CHROMIUM;
  return isExecutable(candidate) ? candidate : undefined;
}

/**
 * For `describe(name, { skip: browserSkipReason() }, …)`: why browser tests cannot run here, or false.
 * Never a reason under CI=true, nor when CHROMIUM_PATH is set: then launchBrowser() fails, loudly.
 */
export function browserSkipReason(): string | false {
  if (chromiumPath() || inCi() || process.env.CHROMIUM_PATH) return false;
  return `no Chromium at ${DEBIAN_CHROMIUM}: ${INSTALL_HINT}`;
}

/**
 * Launches headless Chromium. The sandbox stays on except as root, where Chromium refuses to start
 * with it (Playwright then passes --no-sandbox); /dev/shm is not used (a container's may be small).
 */
export async function launchBrowser(options: { timeoutMs?: number } = {}): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) {
    const where = process.env.CHROMIUM_PATH ? `CHROMIUM_PATH=${process.env.CHROMIUM_PATH}` : DEBIAN_CHROMIUM;
    throw new Error(`Chromium not found or not executable at ${where}: ${INSTALL_HINT}${inCi() ? ' (CI=true: browser tests must run)' : ''}`);
  }
  return chromium.launch({
    executablePath,
    headless: true,
    chromiumSandbox: process.getuid?.() !== 0,
    timeout: options.timeoutMs ?? LAUNCH_TIMEOUT_MS,
    // Playwright passes the last two itself; said here too, as this machine needs them: a container's
    // /dev/shm may be small, and its closed network refuses Chromium's background connections.
    // No GPU here, and no QUIC.
    args: ['--disable-gpu', '--disable-quic', '--disable-dev-shm-usage', '--disable-background-networking'],
  });
}

/** Pages newPage opened with JavaScript off: axeCheck goes straight to a copy for them. */
const scriptless = new WeakSet<Page>();

export interface NewPageOptions {
  /** false: the page runs none of its own scripts (the panel must work so). Default true. */
  javaScriptEnabled?: boolean;
  /** Bound on every action and navigation of the page, in ms. Default 5000. */
  timeoutMs?: number;
  /** The window's size in CSS pixels. Default VIEWPORT. */
  viewport?: { width: number; height: number };
}

/**
 * A page in a context of its own (own cookies; closed with the page), Brazilian Portuguese locale,
 * VIEWPORT-sized unless told, with every action and navigation bounded by timeoutMs.
 */
export async function newPage(browser: Browser, options: NewPageOptions = {}): Promise<Page> {
  const context = await browser.newContext({
    javaScriptEnabled: options.javaScriptEnabled ?? true,
    viewport: options.viewport ?? VIEWPORT,
    locale: 'pt-BR',
    timezoneId: 'America/Sao_Paulo',
  });
  const timeout = options.timeoutMs ?? ACTION_TIMEOUT_MS;
  context.setDefaultTimeout(timeout);
  context.setDefaultNavigationTimeout(timeout);
  const page = await context.newPage();
  if (options.javaScriptEnabled === false) scriptless.add(page);
  page.once('close', () => {
    context.close().catch(() => {});
  });
  return page;
}

/** One serious or critical axe finding: the rule, its impact, what it asks for, and the offending elements' selectors. */
export interface AxeViolation {
  id: string;
  impact: 'serious' | 'critical';
  help: string;
  helpUrl: string;
  targets: string[];
}

let axeSource: string | undefined;
function axeScript(): string {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  return axeSource;
}

// A string, not a function: what tsx compiles may carry helpers (__name) that the page lacks.
const RUN_AXE = `window.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations
  .filter((v) => v.impact === 'serious' || v.impact === 'critical')
  .map((v) => ({ id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
    targets: v.nodes.map((n) => [].concat(n.target).flat(Infinity).join(' ')) })))`;

async function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Injects axe into the page and runs it: its findings, or undefined when the page runs no scripts (axe could not load). */
async function runAxeIn(page: Page): Promise<AxeViolation[] | undefined> {
  const tag = await page.addScriptTag({ content: axeScript() });
  if ((await page.evaluate('typeof window.axe')) !== 'object') {
    await tag.evaluate((el) => (el as ChildNode).remove()); // scripts are off: the tag stayed inert; leave the DOM as it was
    return undefined;
  }
  return bounded(page.evaluate(RUN_AXE) as Promise<AxeViolation[]>, AXE_TIMEOUT_MS, 'axe.run');
}

/** How far the page is wider than its window (0: no sideways scrolling), as the browser lays it out. */
export async function overflowOf(page: Page): Promise<number> {
  return (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
}

/**
 * Runs axe-core in the page and returns its serious and critical violations (tests assert []).
 * A page without JavaScript cannot run axe, so its current DOM (without its scripts) is checked in
 * a JavaScript-enabled copy at the same address, with the same cookies, so styles load as in the original.
 */
export async function axeCheck(page: Page): Promise<AxeViolation[]> {
  const direct = scriptless.has(page) ? undefined : await runAxeIn(page);
  if (direct) return direct;
  const browser = page.context().browser();
  if (!browser) throw new Error('axeCheck: the page has no browser to open a copy in');
  const html = (await page.evaluate(`(() => {
    const root = document.documentElement.cloneNode(true);
    for (const s of root.querySelectorAll('script')) s.remove();
    return '<!DOCTYPE html>' + root.outerHTML;
  })()`)) as string;
  const url = page.url();
  const context = await browser.newContext({ viewport: page.viewportSize() ?? VIEWPORT, storageState: await page.context().storageState() });
  try {
    context.setDefaultTimeout(ACTION_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(ACTION_TIMEOUT_MS);
    const copy = await context.newPage();
    if (/^https?:/.test(url)) {
      await copy.route(
        (u) => u.href === url,
        (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: html }),
        { times: 1 },
      );
      await copy.goto(url);
    } else {
      await copy.setContent(html);
    }
    const copied = await runAxeIn(copy);
    if (!copied) throw new Error('axeCheck: axe did not load in a JavaScript-enabled copy of the page');
    return copied;
  } finally {
    await context.close();
  }
}

/**
 * Saves what the viewport shows as `<dir>/<name>.png` (dir created) and returns the file's path.
 * Without a dir: docs/screenshots/ under SCREENSHOTS=1, else nothing is written and null returned.
 * name: lowercase letters, digits and dashes.
 */
export async function screenshot(page: Page, name: string, dir?: string): Promise<string | null> {
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name)) throw new Error(`screenshot name ${JSON.stringify(name)}: use lowercase letters, digits and dashes`);
  if (dir === undefined && !screenshotsWanted()) return null;
  dir ??= SCREENSHOT_DIR;
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, type: 'png', fullPage: false });
  return path;
}
