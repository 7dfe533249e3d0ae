// Moving an installation from the embedded database to PostgreSQL (docs/deployment.md): a gateway on a
// PGlite DATA_DIR with sellers, paid PIX and card sales, a refund, a cashout and notifications; the
// command `npm run copy-to-postgres` (src/copy-to-postgres/cli.ts, run as the operator runs it, in a process of
// its own) copies it into an empty PostgreSQL database; a gateway started with the settings it prints
// goes on where the embedded one stopped. And what the command refuses.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { type App, buildApp } from '../../src/app.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { createDeliveryJob } from '../../src/notifications/delivery.ts';
import { closeContext, createContext, loadSettings, type Runtime } from '../../src/runtime.ts';
import { freshDatabase, onPostgres, type TestDatabase } from '../helpers/databases.ts';
import { boletoExample, cardExample, pixExample } from '../helpers/fixtures.ts';
import { header } from '../helpers/notification-harness.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

type Json = Record<string, unknown>;

interface Running {
  app: App;
  ctx: Runtime;
  close(): Promise<void>;
}

interface Seller {
  id: number;
  headers: Record<string, string>;
}

// Nothing of the suite's usual test secrets: the embedded gateway makes its own, as on a first start.
const quiet = { LOG_LEVEL: 'silent', SANDBOX_AUTOPILOT: 'false', RATE_LIMIT_PER_SECOND: '100000', AUTH_FAILURES_PER_MINUTE: '100000' };

/** A gateway as `npm start` wires it (listening, so the embedded PSP can call it back), without its workers: jobs are run by hand. */
async function startOn(env: Record<string, string>, port = 0): Promise<Running> {
  const ctx = await createContext(loadSettings({ ...quiet, ...env }));
  const app = await buildApp(ctx);
  await ctx.providers.listeningAt(await app.listen({ port, host: '127.0.0.1' }));
  return {
    app,
    ctx,
    async close() {
      await app.close();
      await closeContext(ctx);
    },
  };
}

/** The command as `npm run copy-to-postgres -- …` runs it (tsx src/copy-to-postgres/cli.ts). */
function copyCommand(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/copy-to-postgres/cli.ts', ...args], { timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The KEY=value lines of the command's output: the settings to start with. */
const settingsOf = (stdout: string) => Object.fromEntries([...stdout.matchAll(/^([A-Z_]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));

async function tablesIn(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname IN ('public', 'sandbox_psp')")).rows[0].n;
  } finally {
    await client.end();
  }
}

const skip = !onPostgres && 'needs PostgreSQL: run it with TEST_DATABASE_URL=postgres://… (CI does)';

describe('npm run copy-to-postgres: an embedded installation moved to PostgreSQL', { skip }, () => {
  const scratch: string[] = [];
  const databases: TestDatabase[] = [];
  const running: Running[] = [];
  let dataDir: string;
  let target: TestDatabase;
  let rx: Receiver;
  let embedded: Running;
  let a: Seller;
  let b: Seller;
  const sales: Record<string, number> = {};
  let cashoutId: number;

  const call = async (gw: Running, method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: Json) => {
    const res = await gw.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const admin = (gw: Running) => ({ authorization: `Bearer ${gw.ctx.config.adminToken}` });
  const newSeller = async (gw: Running, name: string): Promise<Seller> => {
    const s = await call(gw, 'POST', '/admin/sellers', admin(gw), { name, email: `${name.toLowerCase()}@example.com` });
    return { id: s.id, headers: { 'x-api-public-key': s.publicKey, 'x-api-private-key': s.privateKey } };
  };
  const sale = async (gw: Running, seller: Seller, body: Json) => (await call(gw, 'POST', '/api/sales', seller.headers, body)).sale.id as number;
  /** What a seller reads of its money and history, to compare before and after the move. */
  const view = async (gw: Running, seller: Seller) => ({
    balance: await call(gw, 'GET', '/api/public/balance', seller.headers),
    transactions: await call(gw, 'GET', '/api/transactions?limit=100', seller.headers),
    statement: await call(gw, 'GET', '/api/public/statement?limit=100', seller.headers),
    webhooks: await call(gw, 'GET', '/api/webhooks', seller.headers),
    signingSecret: await call(gw, 'GET', '/api/signing-secret', seller.headers),
  });

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-copy-'));
    scratch.push(dataDir);
    target = await freshDatabase();
    databases.push(target);
    rx = await startReceiver();
    embedded = await startOn({ DATA_DIR: dataDir });
    running.push(embedded);
    a = await newSeller(embedded, 'Loja');
    b = await newSeller(embedded, 'Outra');
    await call(embedded, 'POST', '/api/webhooks', a.headers, { url: rx.url('/hooks/a'), types: ['TRANSACTION', 'WITHDRAWAL'] });

    sales.pix = await sale(embedded, a, pixExample({ postbackUrl: rx.url('/postback') }));
    await call(embedded, 'POST', `/sandbox/sales/${sales.pix}/pay`, admin(embedded), {});
    sales.card = await sale(embedded, a, cardExample('4111111111111111', '123', { postbackUrl: rx.url('/postback') }));
    for (const event of ['SENT_TO_PROCESSOR', 'APPROVED'])
      await call(embedded, 'POST', `/admin/transactions/${sales.card}/events`, admin(embedded), { event });
    await call(embedded, 'POST', `/api/transactions/${sales.card}/refund`, a.headers, { amount: 5000 });
    const cashout = await call(embedded, 'POST', '/api/public/cashout', a.headers, { amount: 100, pixKey: 'loja@example.com', pixKeyType: 'EMAIL' });
    cashoutId = cashout.id;
    for (const event of ['PROCESSING', 'COMPLETED']) await call(embedded, 'POST', `/admin/cashouts/${cashoutId}/events`, admin(embedded), { event });
    // Left to be paid after the move, at the embedded PSP whose state moves with the rest.
    sales.pendingPix = await sale(embedded, b, pixExample({ amount: 4000, postbackUrl: rx.url('/postback') }));
    sales.pendingBoleto = await sale(embedded, b, boletoExample());
  });

  after(async () => {
    for (const gw of running) await gw.close().catch(() => {});
    await rx?.close();
    for (const database of databases) await database.drop().catch(() => {});
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });

  test('bad arguments: one line, exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['--data-dir', dataDir], /--to is required/],
      [['--data-dir', dataDir, '--to', 'mysql://db/x'], /--to must be a postgres:\/\/ URL/],
      [['--data-dir', join(dataDir, 'nothing-here'), '--to', target.url], /no embedded database there/],
      [['--to', target.url, '--force'], /Unknown option '--force'/],
    ];
    const runs = await Promise.all(cases.map(([args]) => copyCommand(...args)));
    runs.forEach((run, i) => {
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, cases[i]![1]);
      assert.equal(run.stderr.trim().split('\n').length, 1, `one line: ${run.stderr}`);
    });
  });

  test('refused while a gateway holds DATA_DIR; the target is left empty', async () => {
    const run = await copyCommand('--data-dir', dataDir, '--to', target.url);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`refused: DATA_DIR ${dataDir} is in use by another gateway process \\(pid ${process.pid}\\): stop it first`));
    assert.equal(await tablesIn(target.url), 0);
  });

  test('copied, a gateway started with the printed settings goes on where the embedded one stopped', async (t) => {
    const before = { a: await view(embedded, a), b: await view(embedded, b) };
    const reads = async (gw: Running) => ({
      sales: await Promise.all(
        Object.values(sales).map((id) =>
          call(gw, 'GET', `/api/transactions/${id}`, id === sales.pendingPix || id === sales.pendingBoleto ? b.headers : a.headers),
        ),
      ),
      refunds: await call(gw, 'GET', `/api/transactions/${sales.card}/refunds`, a.headers),
      cashout: await call(gw, 'GET', `/api/public/cashout/${cashoutId}`, a.headers),
    });
    const readBefore = await reads(embedded);
    const made = { installationId: embedded.ctx.installationId, pixReceiverKey: embedded.ctx.config.pixReceiverKey };
    // The same address as before, as an operator keeps it: the boleto issued before the move is notified there.
    const port = (embedded.app.server.address() as { port: number }).port;
    await embedded.close();
    running.splice(running.indexOf(embedded), 1);
    const secrets = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8'));

    const run = await copyCommand('--data-dir', dataDir, '--to', target.url);
    assert.equal(run.code, 0, run.stderr);
    t.diagnostic(
      run.stdout
        .split('\n')
        .filter((l) => /tables|sequences|ledger/.test(l))
        .join(' | '),
    );
    const settings = settingsOf(run.stdout);
    assert.deepEqual(settings, { DATABASE_URL: target.url, ADMIN_TOKEN: secrets.adminToken, POSTBACK_SECRET: secrets.postbackSecret });

    // A DATA_DIR of its own, empty: nothing comes from the old one.
    const elsewhere = mkdtempSync(join(tmpdir(), 'gw-copy-pg-'));
    scratch.push(elsewhere);
    const moved = await startOn({ ...settings, DATA_DIR: elsewhere }, port);
    running.push(moved);
    assert.equal(moved.ctx.db.kind, 'postgres');
    assert.equal(moved.ctx.installationId, made.installationId, 'the installation id goes on');
    assert.equal(moved.ctx.config.pixReceiverKey, made.pixReceiverKey, 'the PIX receiver key goes on, kept in the database');

    assert.deepEqual(
      { a: await view(moved, a), b: await view(moved, b) },
      before,
      'balances, transactions, statements, webhooks: the same, read with the same keys',
    );
    assert.deepEqual(await reads(moved), readBefore);
    assert.deepEqual(await call(moved, 'GET', '/admin/ledger/verify', admin(moved)), { ok: true, sellersChecked: 2, mismatches: [] });

    // The notifications queued on the embedded database go out now, signed as before.
    const queued = async (kinds: string[]) =>
      (await moved.ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM notifications WHERE kind = ANY ($1) AND status = 'PENDING'", [kinds]))
        .rows[0]!.n;
    const postbacksQueued = await queued(['TRANSACTION_POSTBACK']);
    const webhooksQueued = await queued(['TRANSACTION_WEBHOOK', 'WITHDRAWAL_WEBHOOK']);
    const delivery = createDeliveryJob({ retryDelaysMs: [60_000] });
    for (let i = 0; i < 20 && (await delivery.run(moved.ctx)) > 0; i++) await delivery.settled();
    await delivery.close();
    const postbacks = rx.requestsTo('/postback');
    assert.ok(postbacksQueued >= 2, `the PIX and card sales' postbacks were queued: ${postbacksQueued}`);
    assert.equal(postbacks.length, postbacksQueued, 'every queued postback delivered');
    for (const p of postbacks) {
      const expected = createHmac('sha256', secrets.postbackSecret).update(p.body).digest('hex');
      assert.equal(header(p, 'x-signature'), expected, "X-Signature verifies with the embedded installation's POSTBACK_SECRET");
    }
    const webhooks = rx.requestsTo('/hooks/a');
    assert.ok(webhooksQueued >= 4, `TRANSACTION and WITHDRAWAL webhooks were queued: ${webhooksQueued}`);
    assert.equal(webhooks.length, webhooksQueued, 'every queued webhook delivered');
    for (const w of webhooks) {
      const headers = {
        'webhook-id': header(w, 'webhook-id')!,
        'webhook-timestamp': header(w, 'webhook-timestamp')!,
        'webhook-signature': header(w, 'webhook-signature')!,
      };
      assert.ok(new Webhook(before.a.signingSecret.secret).verify(w.body.toString('utf8'), headers), "verifies with the seller's signing secret");
    }

    // What was left pending is paid at the embedded PSP, whose state moved too.
    assert.equal((await call(moved, 'POST', `/sandbox/sales/${sales.pendingPix}/pay`, admin(moved), {})).status, 'PAGO');
    assert.equal((await call(moved, 'POST', `/sandbox/sales/${sales.pendingBoleto}/pay`, admin(moved), {})).status, 'PAGO');
    // New rows continue the ids.
    const next = await sale(moved, a, pixExample({ amount: 2000 }));
    assert.ok(next > Math.max(...Object.values(sales)), `a new sale's id ${next} follows the copied ones`);
    assert.equal((await call(moved, 'POST', `/sandbox/sales/${next}/pay`, admin(moved), {})).status, 'PAGO');
    const c = await newSeller(moved, 'Nova');
    assert.ok(c.id > b.id, `a new seller's id ${c.id} follows the copied ones`);
    const paidAfter = await Promise.all(
      [sales.pendingPix, sales.pendingBoleto].map((id) => call(moved, 'GET', `/api/transactions/${id}`, b.headers)),
    );
    const balance = await call(moved, 'GET', '/api/public/balance', b.headers);
    assert.equal(
      balance.total,
      before.b.balance.total + paidAfter[0].netAmount + paidAfter[1].netAmount,
      "B's balance: what it had, and the two sales paid after the move",
    );
    assert.deepEqual(await call(moved, 'GET', '/admin/ledger/verify', admin(moved)), { ok: true, sellersChecked: 3, mismatches: [] });
  });

  test('refused: a target that holds an installation already, or tables of another application; an embedded database of another release', async () => {
    // The same installation as an older release left it: one migration short.
    const older = mkdtempSync(join(tmpdir(), 'gw-copy-old-'));
    scratch.push(older);
    cpSync(join(dataDir, 'pglite'), join(older, 'pglite'), { recursive: true });
    const db = await openPglite(join(older, 'pglite'));
    await db.query('DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)');
    await db.close();
    const [foreign, empty] = [await freshDatabase(), await freshDatabase()];
    databases.push(foreign, empty);
    const client = new pg.Client({ connectionString: foreign.url });
    await client.connect();
    await client.query('CREATE TABLE customers (id int)');
    await client.end();

    const [again, behind] = await Promise.all([
      copyCommand('--data-dir', dataDir, '--to', target.url),
      copyCommand('--data-dir', older, '--to', empty.url),
    ]);
    assert.equal(again.code, 1, again.stderr);
    assert.match(
      again.stderr,
      /refused: the target already holds an installation's data \(public\.\w+ has rows\): copy into an empty database; nothing was written/,
    );
    assert.equal(behind.code, 1, behind.stderr);
    assert.match(
      behind.stderr,
      /refused: the embedded database's migrations .* are not this release's .*start this release's gateway on DATA_DIR once/,
    );
    assert.equal(await tablesIn(empty.url), 0, 'the target is left empty');

    const other = await copyCommand('--data-dir', dataDir, '--to', foreign.url);
    assert.equal(other.code, 1, other.stderr);
    assert.match(other.stderr, /refused: the target holds tables that are not a gateway's \(public\.customers\)/);
    assert.equal(await tablesIn(foreign.url), 1, 'the target is left as it was');
  });
});
