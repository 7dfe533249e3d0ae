// The daily reconciliation (CONTRACT §15), on a test clock: yesterday after 01:00 in São Paulo, a day
// whose record could not be read tried again when due, a day not matched past 06:00 logged once,
// and the metrics of the days reconciled.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ApiPixClient } from '../../src/providers/api-pix/client/api-pix-client.ts';
import { createReconciliationJob } from '../../src/reconciliation/job.ts';
import { type AccountRecord, reconcileDay } from '../../src/reconciliation/reconcile.ts';
import { adminHeaders, type Gateway, startGateway } from '../helpers/gateway.ts';

interface Row {
  account: string;
  day: string;
  state: string;
  tries: number;
  error: string | null;
}

describe('the daily reconciliation job', () => {
  let gw: Gateway;
  // 2026-11-20 00:30 in São Paulo (UTC−3).
  let now = new Date('2026-11-20T03:30:00Z');
  const job = createReconciliationJob();
  const errors: { obj: object; msg: string }[] = [];
  const log = { warn() {}, error: (obj: object, msg: string) => errors.push({ obj, msg }) };
  const later = (minutes: number) => {
    now = new Date(now.getTime() + minutes * 60_000);
  };
  const days = async (): Promise<Row[]> =>
    (await gw.ctx.db.query<Row>('SELECT account, day::text AS day, state, tries, error FROM reconciliation_days ORDER BY day, account')).rows;
  const pixDay = async (day: string) => (await days()).find((r) => r.account === 'api-pix:sandbox' && r.day === day);
  let client: ApiPixClient;
  let allPix: ApiPixClient['allPix'];
  const pspDown = () => {
    client.allPix = () => {
      throw new Error('API Pix GET /pix: the PSP did not answer');
    };
  };
  const pspUp = () => {
    client.allPix = allPix;
  };

  before(async () => {
    gw = await startGateway({ clock: { now: () => now } });
    client = gw.ctx.rails.apiPix.client;
    allPix = client.allPix;
  });
  after(async () => {
    await gw?.close();
  });

  test('before 01:00 nothing is reconciled; after it, yesterday of every account', async () => {
    await job.run(gw.ctx, undefined, log);
    assert.deepEqual(await days(), []);
    later(60);
    await job.run(gw.ctx, undefined, log);
    const rows = await days();
    assert.deepEqual(
      rows.map((r) => [r.account, r.day, r.state]),
      [
        ['api-pix:sandbox', '2026-11-19', 'matched'],
        ['efi:sandbox', '2026-11-19', 'matched'],
        ['sandbox', '2026-11-19', 'matched'],
      ],
    );
    await job.run(gw.ctx, undefined, log);
    assert.equal((await days()).length, 3, 'a day reconciled is not reconciled again');
  });

  test('an unreadable record is tried again when due, and a day not matched past 06:00 is logged once', async () => {
    later(24 * 60); // 2026-11-21 01:30
    pspDown();
    await job.run(gw.ctx, undefined, log);
    const down = await pixDay('2026-11-20');
    assert.deepEqual([down?.state, down?.tries], ['unreadable', 1]);
    assert.match(down!.error!, /did not answer/);
    assert.equal((await days()).filter((r) => r.day === '2026-11-20' && r.state === 'matched').length, 2, 'the other accounts are not held back');
    later(1);
    await job.run(gw.ctx, undefined, log);
    assert.equal((await pixDay('2026-11-20'))?.tries, 1, 'not tried again before it is due');
    later(5);
    await job.run(gw.ctx, undefined, log);
    assert.deepEqual([(await pixDay('2026-11-20'))?.state, (await pixDay('2026-11-20'))?.tries], ['unreadable', 2]);
    assert.equal(errors.length, 0, 'no alarm before 06:00');
    later(5 * 60); // 06:36
    await job.run(gw.ctx, undefined, log);
    await job.run(gw.ctx, undefined, log);
    assert.deepEqual(
      errors.map((e) => [e.msg, (e.obj as { account: string }).account]),
      [['reconciliation: a day not matched past 06:00', 'api-pix:sandbox']],
    );
    pspUp();
    later(6 * 60);
    await job.run(gw.ctx, undefined, log);
    assert.equal((await pixDay('2026-11-20'))?.state, 'matched', 'read once the PSP answers');
  });

  test('GET /metrics: findings of the latest day and the age of the last matched day, per account', async () => {
    const metrics = (await gw.app.inject({ method: 'GET', url: '/metrics', headers: adminHeaders })).body;
    assert.match(metrics, /gateway_reconciliation_findings\{account="api-pix:sandbox"\} 0/);
    const age = Number(/gateway_reconciliation_last_matched_age_seconds\{account="efi:sandbox"\} ([\d.]+)/.exec(metrics)?.[1]);
    // The last matched day of efi:sandbox is 2026-11-20, ended 2026-11-21 03:00Z; the clock is 2026-11-21 12:36Z.
    assert.equal(age, (now.getTime() - Date.parse('2026-11-21T03:00:00Z')) / 1000);
  });

  test('GET /admin/reconciliation: a day not reconciled is pending for every configured account; a bad date is a 400 naming it', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/admin/reconciliation?date=2026-10-01', headers: adminHeaders });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json().accounts.map((a: { account: string; state: string }) => [a.account, a.state]),
      [
        ['api-pix:sandbox', 'pending'],
        ['efi:sandbox', 'pending'],
        ['sandbox', 'pending'],
      ],
    );
    const bad = await gw.app.inject({ method: 'GET', url: '/admin/reconciliation?date=2026-02-30', headers: adminHeaders });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().details[0].field, 'date');
    const run = await gw.app.inject({
      method: 'POST',
      url: '/admin/reconciliation/run',
      headers: adminHeaders,
      payload: { date: '2026-11-19', account: 'nope' },
    });
    assert.equal(run.statusCode, 400);
    assert.equal(run.json().details[0].field, 'account');
    const yesterday = await gw.app.inject({ method: 'GET', url: '/admin/reconciliation', headers: adminHeaders });
    assert.equal(yesterday.json().date, '2026-11-20');
  });

  /** One movement at the PSP and its journal line, each at its own time (São Paulo −03:00). */
  async function straddling(reference: string, providerAt: string, ledgerAt: string) {
    await gw.ctx.db.query(
      "INSERT INTO provider_movements (account, id, kind, reference, amount, at) VALUES ('api-pix:sandbox', $1, 'PIX_RECEIVED', $2, 1000, $3)",
      [`pix:${reference}`, reference, providerAt],
    );
    const posting = await gw.ctx.db.query<{ id: number }>(
      "INSERT INTO postings (kind, seller_id, created_at) VALUES ('FIRST_PAYMENT', NULL, $1) RETURNING id",
      [ledgerAt],
    );
    await gw.ctx.db.query(
      "INSERT INTO journal_lines (posting_id, account, amount, reference, created_at) VALUES ($1, 'customer_funds:api-pix:sandbox', -1000, $2, $3), ($1, 'fee_revenue', 1000, NULL, $3)",
      [posting.rows[0]!.id, reference, ledgerAt],
    );
  }
  const onlyPix = (): AccountRecord => ({ account: { id: 'api-pix:sandbox', connector: 'api-pix' }, readers: [], lateByMs: 0 });
  const tallyOf = async (day: string) => {
    const o = await reconcileDay(gw.ctx, onlyPix(), day);
    const t = o.tally!;
    return {
      state: o.state,
      provider: [t.providerMovements, t.providerTotal],
      ledger: [t.ledgerMovements, t.ledgerTotal],
      findings: t.findings.map((f) => [f.side, f.reference]),
    };
  };

  test('a movement booked just before midnight by one side and just after by the other is one, counted on one day', async () => {
    await straddling('E1straddle', '2026-01-10T23:59:50-03:00', '2026-01-11T00:00:10-03:00');
    assert.deepEqual(await tallyOf('2026-01-10'), { state: 'matched', provider: [1, 1000], ledger: [1, 1000], findings: [] });
    assert.deepEqual(await tallyOf('2026-01-11'), { state: 'matched', provider: [0, 0], ledger: [0, 0], findings: [] });
  });

  test('the two sides farther apart than the overlap are two findings, each on its own day', async () => {
    await straddling('E2apart', '2026-02-10T23:30:00-03:00', '2026-02-11T01:10:00-03:00');
    assert.deepEqual(await tallyOf('2026-02-10'), { state: 'mismatched', provider: [1, 1000], ledger: [0, 0], findings: [['provider', 'E2apart']] });
    assert.deepEqual(await tallyOf('2026-02-11'), { state: 'mismatched', provider: [0, 0], ledger: [1, 1000], findings: [['ledger', 'E2apart']] });
  });
});
