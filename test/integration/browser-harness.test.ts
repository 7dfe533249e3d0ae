// The browser harness (test/helpers/browser.ts) against a tiny HTTP server of this test's own, not
// the gateway: a form filled and sent with JavaScript off, axe-core on an accessible page and on one
// that is not, and a screenshot. Every wait is bounded by the harness (launch, actions, navigations, axe).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { axeCheck, browserSkipReason, chromiumPath, DEBIAN_CHROMIUM, launchBrowser, newPage, screenshot, VIEWPORT } from '../helpers/browser.ts';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (title: string, body: string) =>
  `<!DOCTYPE html><html lang="pt-BR"><head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/estilo.css"></head><body><main>${body}</main></body></html>`;

const PAGES: Record<string, string> = {
  '/formulario': page(
    'Nova cobrança',
    `<h1>Nova cobrança</h1>
    <p id="js">JavaScript desligado</p>
    <script>document.getElementById('js').textContent = 'JavaScript ligado';</script>
    <form method="post" action="/cobrancas">
      <label for="descricao">Descrição</label> <input id="descricao" name="descricao" required>
      <label for="valor">Valor (R$)</label> <input id="valor" name="valor" inputmode="decimal" required>
      <button type="submit">Criar cobrança</button>
    </form>`,
  ),
  '/acessivel': page(
    'Página acessível',
    `<h1>Saldo</h1>
    <img src="/logo.svg" alt="Logotipo da loja" width="40" height="40">
    <form method="get" action="/busca"><label for="q">Buscar venda</label> <input id="q" name="q"> <button>Buscar</button></form>`,
  ),
  '/inacessivel': page('Página inacessível', '<h1>Saldo</h1><img src="/logo.svg" width="40" height="40"><form><input name="q"></form>'),
};
const STATIC: Record<string, { type: string; body: string }> = {
  '/estilo.css': {
    type: 'text/css',
    body: 'body { font-family: sans-serif; margin: 2rem; color: #1a1a1a; background: #fff; } label { display: block; }',
  },
  '/logo.svg': {
    type: 'image/svg+xml',
    body: '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><circle cx="20" cy="20" r="18" fill="#0a5"/></svg>',
  },
};

interface Posted {
  path: string;
  contentType: string | undefined;
  body: string;
}

function startSite(posted: Posted[]): Promise<{ server: Server; url: (path: string) => string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const html = (status: number, body: string) => res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);
      if (req.method === 'POST' && path === '/cobrancas') {
        const body = Buffer.concat(chunks).toString('utf8');
        posted.push({ path, contentType: req.headers['content-type'], body });
        const form = new URLSearchParams(body);
        const answer = `Cobrança criada: ${form.get('descricao') ?? ''}, R$ ${form.get('valor') ?? ''}`;
        return html(201, page('Cobrança criada', `<h1>Cobrança criada</h1><p role="status">${escapeHtml(answer)}</p>`));
      }
      const known = PAGES[path];
      if (req.method === 'GET' && known) return html(200, known);
      const file = STATIC[path];
      if (req.method === 'GET' && file) return res.writeHead(200, { 'content-type': file.type }).end(file.body);
      html(404, page('Não encontrada', '<h1>Não encontrada</h1>'));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: (path) => `http://127.0.0.1:${port}${path}` });
    });
  });
}

test('chromiumPath: CHROMIUM_PATH overrides /usr/bin/chromium, and a path that is no executable is not found', () => {
  const saved = process.env.CHROMIUM_PATH;
  try {
    process.env.CHROMIUM_PATH = process.execPath; // any executable will do for finding
    assert.equal(chromiumPath(), process.execPath, 'CHROMIUM_PATH names the executable to use');
    process.env.CHROMIUM_PATH = join(tmpdir(), 'no-such-chromium');
    assert.equal(chromiumPath(), undefined, 'a missing file is no Chromium');
    delete process.env.CHROMIUM_PATH;
    assert.ok([DEBIAN_CHROMIUM, undefined].includes(chromiumPath()), `without CHROMIUM_PATH, only ${DEBIAN_CHROMIUM} is looked at`);
  } finally {
    if (saved === undefined) delete process.env.CHROMIUM_PATH;
    else process.env.CHROMIUM_PATH = saved;
  }
});

// Skipped only where the harness lets browser tests skip (no Chromium, not CI): under CI=true a
// missing Chromium is a failure of its own here, besides the suite's failing launch below.
test('Chromium is there to drive', { skip: browserSkipReason() }, () => {
  assert.ok(chromiumPath(), `no executable Chromium at ${process.env.CHROMIUM_PATH || DEBIAN_CHROMIUM} (apt-get install -y chromium)`);
});

describe('the browser harness (playwright-core, Debian Chromium, axe-core)', { skip: browserSkipReason() }, () => {
  const posted: Posted[] = [];
  let site: Awaited<ReturnType<typeof startSite>>;
  let browser: Browser | undefined;
  let shots: string;

  before(async () => {
    site = await startSite(posted);
    shots = await mkdtemp(join(tmpdir(), 'browser-harness-'));
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.server.close(resolve));
    if (shots) await rm(shots, { recursive: true, force: true });
  });

  test('with JavaScript off, a form is filled and sent as the browser sends it, and the answer shows', async () => {
    const p = await newPage(browser!, { javaScriptEnabled: false });
    try {
      await p.goto(site.url('/formulario'));
      assert.equal(await p.locator('#js').textContent(), 'JavaScript desligado', "the page's own script did not run");
      await p.getByLabel('Descrição').fill('Camiseta azul — tamanho M');
      await p.getByLabel('Valor (R$)').fill('59,90');
      const [answer] = await Promise.all([
        p.waitForResponse((r) => r.url() === site.url('/cobrancas')),
        p.getByRole('button', { name: 'Criar cobrança' }).click(),
      ]);
      assert.equal(answer.status(), 201, 'the server answered the form');
      await p.getByRole('heading', { name: 'Cobrança criada' }).waitFor();
      assert.equal(
        await p.getByRole('status').textContent(),
        'Cobrança criada: Camiseta azul — tamanho M, R$ 59,90',
        "the server's answer is on the page",
      );
      assert.equal(posted.length, 1, 'one POST reached the server');
      assert.equal(posted[0]!.contentType, 'application/x-www-form-urlencoded', 'a plain HTML form post');
      assert.deepEqual(
        Object.fromEntries(new URLSearchParams(posted[0]!.body)),
        { descricao: 'Camiseta azul — tamanho M', valor: '59,90' },
        'the fields, in UTF-8',
      );
    } finally {
      await p.close();
    }
  });

  test('axeCheck finds nothing serious or critical on an accessible page', async () => {
    const p = await newPage(browser!);
    try {
      await p.goto(site.url('/acessivel'));
      assert.deepEqual(await axeCheck(p), []);
    } finally {
      await p.close();
    }
  });

  test('axeCheck reports an unlabeled input and an image without alt, with their selectors', async () => {
    for (const javaScriptEnabled of [true, false]) {
      const p = await newPage(browser!, { javaScriptEnabled });
      try {
        await p.goto(site.url('/inacessivel'));
        const violations = await axeCheck(p);
        const found = new Map(violations.map((v) => [v.id, v]));
        const when = javaScriptEnabled ? 'JavaScript on' : 'JavaScript off (checked in a copy)';
        assert.ok(found.has('label'), `${when}: the unlabeled input is reported; got ${JSON.stringify(violations)}`);
        assert.ok(found.has('image-alt'), `${when}: the image without alt is reported; got ${JSON.stringify(violations)}`);
        assert.deepEqual(found.get('image-alt')!.targets, ['img'], `${when}: the finding names the element`);
        assert.ok(
          violations.every((v) => v.impact === 'serious' || v.impact === 'critical'),
          `${when}: only serious and critical findings; got ${JSON.stringify(violations)}`,
        );
        assert.ok(
          violations.every((v) => v.help.length > 0 && v.helpUrl.startsWith('https://')),
          `${when}: each finding says what it asks for`,
        );
      } finally {
        await p.close();
      }
    }
  });

  test('axeCheck on a page with JavaScript off leaves that page as it was', async () => {
    const p = await newPage(browser!, { javaScriptEnabled: false });
    try {
      await p.goto(site.url('/acessivel'));
      const before = await p.content();
      assert.deepEqual(await axeCheck(p), []);
      assert.equal(await p.content(), before, 'no script tag left behind');
      assert.equal(p.url(), site.url('/acessivel'), 'still at the same address');
    } finally {
      await p.close();
    }
  });

  test('screenshot saves a PNG the size of the viewport in the directory given', async () => {
    const p = await newPage(browser!);
    try {
      await p.goto(site.url('/formulario'));
      const path = await screenshot(p, 'harness-formulario', join(shots, 'nested'));
      assert.equal(path, join(shots, 'nested', 'harness-formulario.png'), 'named after the screenshot, directory created');
      const png = await readFile(path);
      assert.ok(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'a PNG signature');
      assert.deepEqual({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) }, VIEWPORT, 'the IHDR size is the viewport');
      await assert.rejects(screenshot(p, '../fora', shots), /lowercase letters, digits and dashes/, 'a name cannot leave the directory');
    } finally {
      await p.close();
    }
  });

  test('a wait for what never comes ends with a TimeoutError', async () => {
    const p = await newPage(browser!, { timeoutMs: 300 });
    try {
      // The navigation under the default bound (a loaded CI machine can take more than 300 ms to load
      // a page); only the wait under test has the short one.
      await p.goto(site.url('/acessivel'), { timeout: 10_000 });
      await assert.rejects(p.getByRole('button', { name: 'Não existe' }).click(), { name: 'TimeoutError' });
    } finally {
      await p.close();
    }
  });
});
