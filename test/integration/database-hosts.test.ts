import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { type App, buildApp } from '../../src/app.ts';
import type { AppContext } from '../../src/context.ts';
import { closeContext, createContext, loadSettings } from '../../src/runtime.ts';
import { onPostgres, testDatabaseUrl } from '../helpers/databases.ts';
import { type Gateway, type SellerKeys, startGateway, testEnv } from '../helpers/gateway.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

// Bounds that tell "came back by itself" from "stuck until a restart", nothing finer.
const recovery_bound_ms = 15_000;

const pixSale = {
  amount: 15000,
  paymentMethod: 'PIX',
  customer: { name: 'Maria Silva', email: 'maria@example.com', document: '52998224725' },
  items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
};

async function until(what: string, boundMs: number, check: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > boundMs) throw new Error(`${what}: not within ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A port nothing listens on: the first host of the list, a node that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function asAdmin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe('a DATABASE_URL of several hosts (CONTRACT §1, §16)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  let gw: Gateway; // set-up, straight to the database
  let proxy: TcpProxy;
  let ctx: AppContext; // the gateway under test: a dead host first, then the proxy
  let app: App;
  let seller: SellerKeys;
  let dbName: string;

  before(async () => {
    gw = await startGateway();
    const target = new URL(testDatabaseUrl!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    dbName = new URL(gw.database.url).pathname.slice(1);
    const url = `postgres://postgres@127.0.0.1:${await closedPort()},127.0.0.1:${proxy.port}/${dbName}?target_session_attrs=read-write`;
    ctx = await createContext(loadSettings(testEnv(url)));
    app = await buildApp(ctx);
    await app.ready();
    seller = await gw.createSeller();
  });
  after(async () => {
    await asAdmin(`ALTER DATABASE ${dbName} RESET default_transaction_read_only`).catch(() => {});
    await app?.close();
    if (ctx) await closeContext(ctx);
    await proxy?.close();
    await gw?.close();
  });

  const sell = (key: string) =>
    app.inject({ method: 'POST', url: '/api/sales', headers: { ...seller.headers, 'idempotency-key': key }, payload: pixSale });
  const health = () => app.inject({ method: 'GET', url: '/health' });
  const salesWithKey = async (key: string) =>
    Number(
      (await gw.ctx.db.query<{ n: string }>(`SELECT count(*) AS n FROM idempotency_keys WHERE seller_id = $1 AND key = $2`, [seller.id, key]))
        .rows[0]!.n,
    );

  test('writes through the first host whose session is read-write, past one that is down', async () => {
    const res = await sell(randomUUID());
    assert.equal(res.statusCode, 201, res.body);
  });

  test('a node that turned read-only is left: 503 with Retry-After meanwhile, writing again without a restart', async () => {
    // What a demoted primary looks like to its clients: sessions read-only, open ones cut by the restart.
    await asAdmin(`ALTER DATABASE ${dbName} SET default_transaction_read_only = on`);
    await asAdmin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${dbName}' AND pid <> pg_backend_pid()`);
    let refused = 0;
    await until('the gateway to stop writing to a read-only node', recovery_bound_ms, async () => {
      const res = await sell(randomUUID());
      assert.notEqual(res.statusCode, 201, 'a sale was acknowledged on a read-only node');
      if (res.statusCode === 503) {
        assert.equal(res.json().errorType, 'SERVICE_UNAVAILABLE');
        assert.ok(res.headers['retry-after'], 'Retry-After');
        refused++;
      }
      return (await health()).statusCode === 503;
    });
    assert.ok(refused > 0);
    await asAdmin(`ALTER DATABASE ${dbName} RESET default_transaction_read_only`);
    await until('health 200 once a read-write node answers', recovery_bound_ms, async () => (await health()).statusCode === 200);
    const res = await sell(randomUUID());
    assert.equal(res.statusCode, 201, res.body);
  });

  test('a write whose answer is lost is never reported as success or failure; the keyed retry answers once', async (t) => {
    // The connection is cut right after each message of the request in turn, the one that commits included
    // (a sale's write is one statement, committed as it runs; a transaction's is its COMMIT).
    let unknown = 0;
    let cuts = 0;
    for (let i = 1; i <= 40; i++) {
      let seen = 0;
      const ith = () => ++seen === i;
      const key = randomUUID();
      await until('health 200 before the cut', recovery_bound_ms, async () => (await health()).statusCode === 200);
      proxy.cutAfter(ith);
      const first = await sell(key);
      proxy.cutAfter(null);
      if (seen < i) break; // the request sent fewer messages than that: every point has been cut
      cuts++;
      assert.ok([201, 503].includes(first.statusCode), `${first.statusCode} ${first.body}`);
      if (first.statusCode === 503) {
        unknown++;
        assert.equal(first.json().errorType, 'SERVICE_UNAVAILABLE');
        assert.ok(first.headers['retry-after']);
      }
      let answer = first;
      await until('the keyed retry to be answered', recovery_bound_ms, async () => {
        answer = await sell(key);
        return answer.statusCode !== 503 && answer.statusCode !== 409;
      });
      assert.equal(answer.statusCode, 201, answer.body);
      if (first.statusCode === 201) assert.equal(answer.json().sale.id, first.json().sale.id);
      const again = await sell(key);
      assert.equal(again.json().sale.id, answer.json().sale.id, 'the key answers the one sale');
      assert.equal(await salesWithKey(key), 1);
      const sales = await gw.ctx.db.query<{ n: string }>(`SELECT count(*) AS n FROM transactions WHERE id = $1`, [answer.json().sale.id]);
      assert.equal(Number(sales.rows[0]!.n), 1);
    }
    t.diagnostic(`${cuts} points cut, ${unknown} answered 503`);
    assert.equal(proxy.cut, cuts);
    assert.ok(cuts >= 2 && unknown > 0, `${cuts} points cut, ${unknown} answered 503`);
  });
});
