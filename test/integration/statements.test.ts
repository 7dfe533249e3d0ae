// Statements per request, counted where they leave for PostgreSQL (every query of every pg client in
// this process: the gateway's, and the embedded PSP's, which runs in the same process by default).
// Each figure is a ceiling: a change that adds a round trip to a hot path fails here. Keyed requests
// carry an Idempotency-Key as the SDK sends on every POST. PostgreSQL only: PGlite has no round trips.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { onPostgres } from '../helpers/databases.ts';
import { cardExample, pixExample } from '../helpers/fixtures.ts';
import { type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';

// Today's counts; lower them as the paths get leaner, never raise them without a reason.
const CEILINGS = { keyedCardSale: 1, keyedPixSale: 3, keyedStaticPixSale: 1, balance: 1 };

describe('statements per request (PostgreSQL)', { skip: onPostgres ? false : 'PostgreSQL only (TEST_DATABASE_URL)' }, () => {
  let gw: Gateway;
  let seller: SellerKeys;
  const seen: string[] = [];
  /** Every statement of the counted request, whole, with its values. */
  const whole: { text: string; values: unknown[] }[] = [];
  let counting = false;
  const original = pg.Client.prototype.query;

  before(async () => {
    gw = await startGateway();
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    seller = await gw.createSeller();
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text: string; values?: unknown[] };
      const text = typeof config === 'string' ? config : config.text;
      // The availability heartbeat is the process's, not a request's.
      if (counting && text !== 'SELECT 1') {
        seen.push(text.trim().split(/\s+/).slice(0, 4).join(' '));
        whole.push({ text, values: typeof config === 'string' ? [] : (config.values ?? []) });
      }
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
  });
  after(async () => {
    pg.Client.prototype.query = original;
    await gw?.close();
  });

  async function count(method: 'GET' | 'POST', url: string, payload?: object): Promise<number> {
    const send = () =>
      gw.app.inject({
        method,
        url,
        headers: { ...seller.headers, ...(method === 'POST' ? { 'idempotency-key': randomUUID() } : {}) },
        ...(payload ? { payload } : {}),
      });
    const warm = await send(); // the first of a kind pays once-only costs (a PSP token, prepared statements)
    assert.ok(warm.statusCode < 300, warm.body);
    seen.length = 0;
    whole.length = 0;
    counting = true;
    try {
      const res = await send();
      assert.ok(res.statusCode < 300, res.body);
    } finally {
      counting = false;
    }
    return seen.length;
  }

  test('a keyed card sale, a keyed PIX sale (its charge at the embedded PSP), a keyed static PIX sale and a balance read stay within their ceilings', async (t) => {
    const counts = {
      keyedCardSale: await count('POST', '/api/sales', cardExample()),
      keyedPixSale: await count('POST', '/api/sales', pixExample()),
      // No PSP call, so no claim: the sale and its key's answer in one statement.
      keyedStaticPixSale: await count('POST', '/api/sales', pixExample({ postbackUrl: null, pix: { expiresInSeconds: null } })),
      balance: await count('GET', '/api/public/balance'),
    };
    t.diagnostic(`statements per request: ${JSON.stringify(counts)}`);
    for (const [name, n] of Object.entries(counts)) {
      assert.ok(n > 0, `${name}: the counter saw its statements`);
      assert.ok(n <= CEILINGS[name as keyof typeof CEILINGS], `${name}: ${n} statements, ceiling ${CEILINGS[name as keyof typeof CEILINGS]}`);
    }
  });

  // Each paged list of a seller, and how its statement is told from the others.
  const lists = [
    { url: '/api/transactions', statement: /FROM transactions t\s+WHERE/ },
    { url: '/api/public/statement', statement: /FROM journal_lines l JOIN postings p/ },
    { url: '/api/notifications', statement: /FROM notifications WHERE seller_id/ },
  ];
  for (const { url, statement } of lists) {
    test(`${url}: the cursor is a range the generic plan walks in the index, never a filter over the seller's rows`, async () => {
      await count('GET', `${url}?limit=2`);
      await count('GET', `${url}?limit=2&cursor=9007199254740`);
      const list = whole.find((w) => statement.test(w.text));
      assert.ok(list, `the list statement was seen: ${whole.map((w) => w.text).join(' | ')}`);
      // The plan PostgreSQL may settle on after five executions: parameters unknown when planned.
      const client = new pg.Client({ connectionString: gw.config.databaseUrl });
      await client.connect();
      try {
        await client.query('SET plan_cache_mode = force_generic_plan');
        await client.query(`PREPARE listed AS ${list.text}`);
        const literal = (v: unknown) => (v === null ? 'NULL' : `'${String(v).replaceAll("'", "''")}'`);
        const plan = await client.query(`EXPLAIN (FORMAT JSON) EXECUTE listed(${list.values.map(literal).join(', ')})`);
        const text = JSON.stringify(plan.rows[0]['QUERY PLAN']);
        assert.match(text, /"Index Cond":"\(\(seller_id = \$\d+\) AND \(id < COALESCE\(\$\d+, '9223372036854775807'::bigint\)\)\)"/, text);
      } finally {
        await client.end();
      }
    });
  }
});
