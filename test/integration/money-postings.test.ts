/**
 * CONTRACT §5's posting table for transactions, row by row, through the HTTP API: every expected
 * figure below is worked out by hand from the §5 formulas (never computed by src/), so a wrong
 * formula in the gateway cannot agree with its own test.
 *
 * Schedules used (defaults per §5: PIX 0 + 199 bp, BOLETO 349 + 0, CREDIT 49 + 499 bp,
 * DEBIT 49 + 299 bp, reserve 0 bp / 30 days, chargeback fine 1500):
 *   PIX 15000 default        fee round(298.5) = 298 (even)           reserve 0                       net 14702
 *   PIX 14504, reserve 10 %  fee round(288.6296) = 289               reserve round(1421.5) = 1422    net 12793
 *   PIX 20000, reserve 10 %  fee round(398.0) = 398                  reserve round(1960.2) = 1960    net 17642
 *   BOLETO 5000 default      fee 349 + 0                             reserve 0                       net 4651
 *   CREDIT 15000 default     fee 49 + round(748.5) = 49 + 748 = 797  reserve 0                       net 14203
 *   CREDIT 15000, reserve 10 % fee 797                               reserve round(1420.3) = 1420    net 12783
 *   DEBIT 10001 default      fee 49 + round(299.0299) = 348          reserve 0                       net 9653
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { post } from '../../src/ledger/postings.ts';
import { expiryJob, reserveReleaseJob } from '../../src/transactions/jobs.ts';
import type { Method, TxEvent } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { saleBody } from '../helpers/money-model.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const start = new Date('2026-03-02T12:00:00.000Z');
let current = new Date(start);
const clock = { now: () => new Date(current) };

type Step = { event: TxEvent } | { advanceMs: number } | { job: true };
const ev = (event: TxEvent): Step => ({ event });
const days = (n: number): Step => ({ advanceMs: n * DAY_MS });
const job: Step = { job: true };
type Figures = [available: number, blocked: number, total: number];
interface PlatformDelta {
  customer_funds?: number;
  fee_revenue?: number;
  dispute_losses?: number;
}

interface Row {
  name: string;
  method: Method;
  amount: number;
  /** The seller's own fee schedule (deep-partial over the platform's), when not the default. */
  schedule?: Record<string, unknown>;
  setup: Step[];
  move: Step;
  before: Figures;
  after: Figures;
  /** Net of the platform lines the move wrote for this sale (absent accounts: 0). */
  platform: PlatformDelta;
  status: string;
}

const reserve10 = { reserveBasisPoints: 1000, reserveDays: 30 };
const paidCard: Step[] = [ev('SENT_TO_PROCESSOR'), ev('APPROVED')];

const rows: Row[] = [
  // ---- first payment: customer_funds −amount; available +net; blocked +reserve; fee_revenue +fee
  {
    name: 'first payment PENDENTE → PAGO (PIX 15000, default schedule)',
    method: 'PIX',
    amount: 15000,
    setup: [],
    move: ev('PAYMENT_CONFIRMED'),
    before: [0, 0, 0],
    after: [14702, 0, 14702],
    platform: { customer_funds: -15000, fee_revenue: 298 },
    status: 'PAGO',
  },
  {
    name: 'first payment PENDENTE → PAGO (PIX 14504, reserve 1000 bp, half-even reserve 1421.5 → 1422)',
    method: 'PIX',
    amount: 14504,
    schedule: reserve10,
    setup: [],
    move: ev('PAYMENT_CONFIRMED'),
    before: [0, 0, 0],
    after: [12793, 1422, 14215],
    platform: { customer_funds: -14504, fee_revenue: 289 },
    status: 'PAGO',
  },
  {
    name: 'first payment PENDENTE → PAGO (BOLETO 5000, fixed fee 349)',
    method: 'BOLETO',
    amount: 5000,
    setup: [],
    move: ev('PAYMENT_CONFIRMED'),
    before: [0, 0, 0],
    after: [4651, 0, 4651],
    platform: { customer_funds: -5000, fee_revenue: 349 },
    status: 'PAGO',
  },
  {
    name: 'first payment EM_PROCESSAMENTO → PAGO (credit 15000, reserve 1000 bp)',
    method: 'CREDIT_CARD',
    amount: 15000,
    schedule: reserve10,
    setup: [ev('SENT_TO_PROCESSOR')],
    move: ev('APPROVED'),
    before: [0, 0, 0],
    after: [12783, 1420, 14203],
    platform: { customer_funds: -15000, fee_revenue: 797 },
    status: 'PAGO',
  },
  {
    name: 'first payment FALHA → PAGO by RETRY_PROCESSED (debit 10001)',
    method: 'DEBIT_CARD',
    amount: 10001,
    setup: [ev('SENT_TO_PROCESSOR'), ev('PROCESSING_ERROR')],
    move: ev('RETRY_PROCESSED'),
    before: [0, 0, 0],
    after: [9653, 0, 9653],
    platform: { customer_funds: -10001, fee_revenue: 348 },
    status: 'PAGO',
  },

  // ---- reserve release: blocked −held; available +held
  {
    name: 'reserve released by the job reserveDays after the first payment (not 1 ms earlier)',
    method: 'PIX',
    amount: 20000,
    schedule: reserve10,
    setup: [ev('PAYMENT_CONFIRMED'), { advanceMs: 30 * DAY_MS - 1 }, job, { advanceMs: 1 }],
    move: job,
    before: [17642, 1960, 19602],
    after: [19602, 0, 19602],
    platform: {},
    status: 'PAGO',
  },
  {
    name: 'reserve not released by the job while in MED, even past the due date',
    method: 'PIX',
    amount: 20000,
    schedule: reserve10,
    setup: [ev('PAYMENT_CONFIRMED'), ev('MED_OPENED'), days(31)],
    move: job,
    before: [0, 19602, 19602],
    after: [0, 19602, 19602],
    platform: {},
    status: 'MED',
  },
  {
    name: 'MED_WON after the due date: the net comes back and the held reserve is released',
    method: 'PIX',
    amount: 20000,
    schedule: reserve10,
    setup: [ev('PAYMENT_CONFIRMED'), ev('MED_OPENED'), days(31), job],
    move: ev('MED_WON'),
    before: [0, 19602, 19602],
    after: [19602, 0, 19602],
    platform: {},
    status: 'PAGO',
  },
  {
    name: 'no release after ESTORNADO (refunded with the reserve held, then the due date passes)',
    method: 'PIX',
    amount: 20000,
    schedule: reserve10,
    setup: [ev('PAYMENT_CONFIRMED'), ev('REFUNDED'), days(31)],
    move: job,
    // available 17642 − (20000 − 1960) = −398
    before: [-398, 0, -398],
    after: [-398, 0, -398],
    platform: {},
    status: 'ESTORNADO',
  },
  {
    name: 'no release after ESTORNADO (MED lost with the reserve held, then the due date passes)',
    method: 'PIX',
    amount: 20000,
    schedule: reserve10,
    setup: [ev('PAYMENT_CONFIRMED'), ev('MED_OPENED'), ev('MED_LOST'), days(31)],
    move: job,
    before: [0, 0, 0],
    after: [0, 0, 0],
    platform: {},
    status: 'ESTORNADO',
  },

  // ---- refund: blocked −held; available −(amount − held); customer_funds +amount; the fee stays
  {
    name: 'refund PAGO → ESTORNADO without reserve: available goes negative by the fee',
    method: 'PIX',
    amount: 15000,
    setup: [ev('PAYMENT_CONFIRMED')],
    move: ev('REFUNDED'),
    before: [14702, 0, 14702],
    after: [-298, 0, -298],
    platform: { customer_funds: 15000 },
    status: 'ESTORNADO',
  },
  {
    name: 'refund PAGO → ESTORNADO with the reserve held',
    method: 'CREDIT_CARD',
    amount: 15000,
    schedule: reserve10,
    setup: paidCard,
    move: ev('REFUNDED'),
    // blocked 1420 − 1420 = 0; available 12783 − (15000 − 1420) = −797
    before: [12783, 1420, 14203],
    after: [-797, 0, -797],
    platform: { customer_funds: 15000 },
    status: 'ESTORNADO',
  },
  {
    name: 'refund PAGO → ESTORNADO after the reserve was released',
    method: 'CREDIT_CARD',
    amount: 15000,
    schedule: reserve10,
    setup: [...paidCard, days(30), job],
    move: ev('REFUNDED'),
    before: [14203, 0, 14203],
    after: [-797, 0, -797],
    platform: { customer_funds: 15000 },
    status: 'ESTORNADO',
  },

  // ---- MED: opened available −net, blocked +net; won the reverse; lost blocked −net −held, dispute_losses −(amount − net − held)
  {
    name: 'MED opened with the reserve held',
    method: 'PIX',
    amount: 20000,
    schedule: reserve10,
    setup: [ev('PAYMENT_CONFIRMED')],
    move: ev('MED_OPENED'),
    before: [17642, 1960, 19602],
    after: [0, 19602, 19602],
    platform: {},
    status: 'MED',
  },
  {
    name: 'MED won before the due date: the net comes back, the reserve stays held',
    method: 'PIX',
    amount: 20000,
    schedule: reserve10,
    setup: [ev('PAYMENT_CONFIRMED'), ev('MED_OPENED')],
    move: ev('MED_WON'),
    before: [0, 19602, 19602],
    after: [17642, 1960, 19602],
    platform: {},
    status: 'PAGO',
  },
  {
    name: 'MED lost with the reserve held',
    method: 'PIX',
    amount: 20000,
    schedule: reserve10,
    setup: [ev('PAYMENT_CONFIRMED'), ev('MED_OPENED')],
    move: ev('MED_LOST'),
    // dispute_losses −(20000 − 17642 − 1960) = −398
    before: [0, 19602, 19602],
    after: [0, 0, 0],
    platform: { customer_funds: 20000, dispute_losses: -398 },
    status: 'ESTORNADO',
  },
  {
    name: 'MED opened after the reserve was released',
    method: 'PIX',
    amount: 20000,
    schedule: reserve10,
    setup: [ev('PAYMENT_CONFIRMED'), days(30), job],
    move: ev('MED_OPENED'),
    before: [19602, 0, 19602],
    after: [1960, 17642, 19602],
    platform: {},
    status: 'MED',
  },
  {
    name: 'MED won after the reserve was released',
    method: 'PIX',
    amount: 20000,
    schedule: reserve10,
    setup: [ev('PAYMENT_CONFIRMED'), days(30), job, ev('MED_OPENED')],
    move: ev('MED_WON'),
    before: [1960, 17642, 19602],
    after: [19602, 0, 19602],
    platform: {},
    status: 'PAGO',
  },
  {
    name: 'MED lost after the reserve was released: the platform absorbs fee and released reserve',
    method: 'PIX',
    amount: 20000,
    schedule: reserve10,
    setup: [ev('PAYMENT_CONFIRMED'), days(30), job, ev('MED_OPENED')],
    move: ev('MED_LOST'),
    // dispute_losses −(20000 − 17642 − 0) = −2358; available keeps the released 1960
    before: [1960, 17642, 19602],
    after: [1960, 0, 1960],
    platform: { customer_funds: 20000, dispute_losses: -2358 },
    status: 'ESTORNADO',
  },
  {
    name: 'MED lost without any reserve',
    method: 'PIX',
    amount: 15000,
    setup: [ev('PAYMENT_CONFIRMED'), ev('MED_OPENED')],
    move: ev('MED_LOST'),
    before: [0, 14702, 14702],
    after: [0, 0, 0],
    platform: { customer_funds: 15000, dispute_losses: -298 },
    status: 'ESTORNADO',
  },

  // ---- chargeback: opened available −fine, fee_revenue +fine; reverted nothing; confirmed as a refund
  {
    name: 'chargeback opened: pre-chargeback fine 1500 (default)',
    method: 'CREDIT_CARD',
    amount: 15000,
    setup: paidCard,
    move: ev('CHARGEBACK_OPENED'),
    before: [14203, 0, 14203],
    after: [12703, 0, 12703],
    platform: { fee_revenue: 1500, customer_funds: 15000, dispute_losses: -15000 },
    status: 'CHARGEBACK',
  },
  {
    name: 'chargeback reverted: nothing moves for the seller, the fine is kept, the processor credits the platform back',
    method: 'CREDIT_CARD',
    amount: 15000,
    setup: [...paidCard, ev('CHARGEBACK_OPENED')],
    move: ev('CHARGEBACK_REVERTED'),
    before: [12703, 0, 12703],
    after: [12703, 0, 12703],
    platform: { customer_funds: -15000, dispute_losses: 15000 },
    status: 'PAGO',
  },
  {
    name: 'chargeback confirmed: as a refund, the fine is kept',
    method: 'CREDIT_CARD',
    amount: 15000,
    setup: [...paidCard, ev('CHARGEBACK_OPENED')],
    move: ev('CHARGEBACK_CONFIRMED'),
    // available 12703 − 15000 = −2297; the processor debited the platform at the opening, the seller now makes it good
    before: [12703, 0, 12703],
    after: [-2297, 0, -2297],
    platform: { dispute_losses: 15000 },
    status: 'ESTORNADO',
  },
  {
    name: 'chargeback opened on a debit card with the reserve held',
    method: 'DEBIT_CARD',
    amount: 10001,
    schedule: reserve10,
    // fee 348; reserve round((10001 − 348) × 0.1 = 965.3) = 965; net 10001 − 348 − 965 = 8688
    setup: paidCard,
    move: ev('CHARGEBACK_OPENED'),
    before: [8688, 965, 9653],
    after: [7188, 965, 8153],
    // the processor debits the disputed amount at once: the platform's loss until decided (CONTRACT §15)
    platform: { fee_revenue: 1500, customer_funds: 10001, dispute_losses: -10001 },
    status: 'CHARGEBACK',
  },
  {
    name: 'chargeback confirmed with the reserve held',
    method: 'CREDIT_CARD',
    amount: 15000,
    schedule: reserve10,
    setup: [...paidCard, ev('CHARGEBACK_OPENED')],
    move: ev('CHARGEBACK_CONFIRMED'),
    // before: 12783 − 1500 = 11283; after: blocked 0, available 11283 − (15000 − 1420) = −2297
    before: [11283, 1420, 12703],
    after: [-2297, 0, -2297],
    platform: { dispute_losses: 15000 },
    status: 'ESTORNADO',
  },
  {
    name: 'chargeback reverted after the due date: the reserve (kept through the job) is released',
    method: 'CREDIT_CARD',
    amount: 15000,
    schedule: reserve10,
    setup: [...paidCard, ev('CHARGEBACK_OPENED'), days(31), job],
    move: ev('CHARGEBACK_REVERTED'),
    before: [11283, 1420, 12703],
    after: [12703, 0, 12703],
    platform: { customer_funds: -15000, dispute_losses: 15000 },
    status: 'PAGO',
  },
  {
    name: 'reserve not released by the job while in CHARGEBACK',
    method: 'CREDIT_CARD',
    amount: 15000,
    schedule: reserve10,
    setup: [...paidCard, ev('CHARGEBACK_OPENED'), days(31)],
    move: job,
    before: [11283, 1420, 12703],
    after: [11283, 1420, 12703],
    platform: {},
    status: 'CHARGEBACK',
  },
];

// One gateway for both describes (a gateway costs about 2 s to start on PGlite). The second describe
// breaks the ledger on purpose, so it must stay last in this file.
let gw: Gateway;
before(async () => {
  gw = await startGateway({ clock });
});
after(async () => {
  await gw?.close();
});

describe('money postings: CONTRACT §5 posting table through the API', () => {
  const inject = (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string>, payload?: unknown) =>
    gw.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  async function createSale(seller: SellerKeys, method: Method, amount: number): Promise<number> {
    const res = await inject('POST', '/api/sales', seller.headers, saleBody(method, amount));
    assert.equal(res.statusCode, 201, res.body);
    return res.json().sale.id;
  }
  async function event(id: number, e: TxEvent) {
    return inject('POST', `/admin/transactions/${id}/events`, adminHeaders, { event: e });
  }
  async function mustMove(id: number, e: TxEvent) {
    const res = await event(id, e);
    assert.equal(res.statusCode, 200, `${e} on ${id}: ${res.body}`);
    return res.json();
  }
  async function figures(seller: SellerKeys): Promise<Figures> {
    const res = await inject('GET', '/api/public/balance', seller.headers);
    assert.equal(res.statusCode, 200, res.body);
    const b = res.json();
    assert.equal(b.total, b.available + b.blocked, 'total = available + blocked');
    return [b.available, b.blocked, b.total];
  }
  async function runReserveJob(): Promise<void> {
    // The job works in batches; run it until nothing is left due.
    for (let i = 0; i < 100; i++) if ((await reserveReleaseJob.run(gw.ctx)) === 0) return;
    throw new Error('reserve job never settled');
  }
  async function assertVerifyOk(): Promise<void> {
    const res = await inject('GET', '/admin/ledger/verify', adminHeaders);
    assert.equal(res.statusCode, 200);
    const report = res.json();
    assert.deepEqual(report.mismatches, []);
    assert.equal(report.ok, true);
  }
  async function setSchedule(seller: SellerKeys, feeSchedule: Record<string, unknown> | null) {
    const res = await inject('PATCH', `/admin/sellers/${seller.id}`, adminHeaders, { feeSchedule });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }
  async function step(saleId: number, s: Step): Promise<void> {
    if ('event' in s) await mustMove(saleId, s.event);
    else if ('advanceMs' in s) current = new Date(current.getTime() + s.advanceMs);
    else await runReserveJob();
  }
  async function maxPostingId(): Promise<number> {
    const r = await gw.ctx.db.query<{ id: unknown }>('SELECT coalesce(max(id), 0)::bigint AS id FROM postings');
    return Number(r.rows[0]!.id);
  }
  async function platformLinesSince(saleId: number, postingId: number): Promise<Required<PlatformDelta>> {
    const r = await gw.ctx.db.query<{ account: string; total: unknown }>(
      `
      SELECT split_part(l.account, ':', 1) AS account, sum(l.amount)::bigint AS total FROM journal_lines l JOIN postings p ON p.id = l.posting_id
      WHERE p.transaction_id = $1 AND p.id > $2 AND split_part(l.account, ':', 1) IN ('customer_funds', 'fee_revenue', 'dispute_losses', 'payouts')
      GROUP BY 1`,
      [saleId, postingId],
    );
    const out = { customer_funds: 0, fee_revenue: 0, dispute_losses: 0 } as Record<string, number>;
    for (const row of r.rows) out[row.account] = Number(row.total);
    return out as Required<PlatformDelta>;
  }
  async function readTransaction(seller: SellerKeys, id: number) {
    const res = await inject('GET', `/api/transactions/${id}`, seller.headers);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }

  for (const row of rows) {
    test(row.name, async () => {
      const seller = await gw.createSeller();
      if (row.schedule) await setSchedule(seller, row.schedule);
      const saleId = await createSale(seller, row.method, row.amount);
      for (const s of row.setup) await step(saleId, s);
      assert.deepEqual(await figures(seller), row.before, 'before the move');
      const since = await maxPostingId();
      await step(saleId, row.move);
      assert.deepEqual(await figures(seller), row.after, 'after the move');
      assert.deepEqual(
        await platformLinesSince(saleId, since),
        { customer_funds: 0, fee_revenue: 0, dispute_losses: 0, ...row.platform },
        'platform lines of the move',
      );
      assert.equal((await readTransaction(seller, saleId)).status, row.status);
      await assertVerifyOk();
    });
  }

  test('worked example: PIX 15000 on the default schedule → 298 / 0 / 14702, completedAt set and kept', async () => {
    const seller = await gw.createSeller();
    const id = await createSale(seller, 'PIX', 15000);
    const pending = await readTransaction(seller, id);
    assert.deepEqual([pending.systemFee, pending.reserveAmount, pending.netAmount, pending.completedAt], [null, null, null, null]);
    const paidAt = clock.now().toISOString();
    await mustMove(id, 'PAYMENT_CONFIRMED');
    const paid = await readTransaction(seller, id);
    assert.equal(paid.status, 'PAGO');
    assert.equal(paid.systemFee, 298);
    assert.equal(paid.reserveAmount, 0);
    assert.equal(paid.netAmount, 14702);
    assert.equal(paid.completedAt, paidAt);
    current = new Date(current.getTime() + 60_000);
    await mustMove(id, 'REFUNDED');
    const refunded = await readTransaction(seller, id);
    assert.equal(refunded.status, 'ESTORNADO');
    assert.equal(refunded.completedAt, paidAt, 'completedAt is kept after the first payment');
    assert.deepEqual([refunded.systemFee, refunded.reserveAmount, refunded.netAmount], [298, 0, 14702]);
    await assertVerifyOk();
  });

  test('worked example: credit 15000 at 49 + 499 bp with reserve 1000 bp → 797 / 1420 / 12783', async () => {
    const seller = await gw.createSeller();
    await setSchedule(seller, { creditCard: { fixedCents: 49, percentBasisPoints: 499 }, reserveBasisPoints: 1000 });
    const id = await createSale(seller, 'CREDIT_CARD', 15000);
    await mustMove(id, 'SENT_TO_PROCESSOR');
    const approved = await mustMove(id, 'APPROVED');
    assert.deepEqual([approved.systemFee, approved.reserveAmount, approved.netAmount], [797, 1420, 12783]);
    const read = await readTransaction(seller, id);
    assert.deepEqual([read.systemFee, read.reserveAmount, read.netAmount], [797, 1420, 12783]);
    assert.notEqual(read.completedAt, null);
    assert.deepEqual(await figures(seller), [12783, 1420, 14203]);
    await assertVerifyOk();
  });

  test('a seller schedule change after a sale is created does not change that sale; new sales use it', async () => {
    const seller = await gw.createSeller();
    await setSchedule(seller, { pix: { fixedCents: 0, percentBasisPoints: 199 }, reserveBasisPoints: 0 });
    const old = await createSale(seller, 'PIX', 15000);
    const oldCard = await createSale(seller, 'CREDIT_CARD', 15000);
    const patched = await setSchedule(seller, {
      pix: { fixedCents: 100, percentBasisPoints: 500 },
      reserveBasisPoints: 1000,
      chargebackFineCents: 2500,
    });
    // deep-partial: the untouched sections keep their values
    assert.deepEqual(patched.feeSchedule.creditCard, { fixedCents: 49, percentBasisPoints: 499 });
    assert.equal(patched.feeSchedule.reserveDays, 30);

    const oldPaid = await mustMove(old, 'PAYMENT_CONFIRMED');
    assert.deepEqual([oldPaid.systemFee, oldPaid.reserveAmount, oldPaid.netAmount], [298, 0, 14702]);
    await mustMove(oldCard, 'SENT_TO_PROCESSOR');
    await mustMove(oldCard, 'APPROVED'); // 797 / 0 / 14203
    assert.deepEqual(await figures(seller), [14702 + 14203, 0, 28905]);
    await mustMove(oldCard, 'CHARGEBACK_OPENED'); // the fine of the snapshot: 1500, not 2500
    assert.deepEqual(await figures(seller), [28905 - 1500, 0, 27405]);

    const fresh = await createSale(seller, 'PIX', 15000);
    const freshPaid = await mustMove(fresh, 'PAYMENT_CONFIRMED');
    // fee 100 + round(750.0) = 850; reserve round(14150 × 0.1 = 1415.0) = 1415; net 15000 − 850 − 1415 = 12735
    assert.deepEqual([freshPaid.systemFee, freshPaid.reserveAmount, freshPaid.netAmount], [850, 1415, 12735]);
    assert.deepEqual(await figures(seller), [27405 + 12735, 1415, 27405 + 12735 + 1415]);

    const freshCard = await createSale(seller, 'CREDIT_CARD', 20000);
    await mustMove(freshCard, 'SENT_TO_PROCESSOR');
    const cardPaid = await mustMove(freshCard, 'APPROVED');
    // fee 49 + round(998.0) = 1047; reserve round(18953 × 0.1 = 1895.3) = 1895; net 20000 − 1047 − 1895 = 17058
    assert.deepEqual([cardPaid.systemFee, cardPaid.reserveAmount, cardPaid.netAmount], [1047, 1895, 17058]);
    const beforeFine = await figures(seller);
    await mustMove(freshCard, 'CHARGEBACK_OPENED'); // the new fine: 2500
    assert.deepEqual(await figures(seller), [beforeFine[0] - 2500, beforeFine[1], beforeFine[2] - 2500]);
    await assertVerifyOk();
  });

  test('a platform default change applies to new sales of sellers without their own schedule, not to existing sales', async () => {
    const seller = await gw.createSeller();
    const own = await gw.createSeller();
    await setSchedule(own, { pix: { percentBasisPoints: 199 } });
    const old = await createSale(seller, 'PIX', 15000);
    try {
      const res = await inject('PATCH', '/admin/settings', adminHeaders, { feeSchedule: { pix: { percentBasisPoints: 300 } } });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().feeSchedule.pix, { fixedCents: 0, percentBasisPoints: 300 });
      const read = (await inject('GET', '/admin/settings', adminHeaders)).json();
      assert.deepEqual(read.feeSchedule.pix, { fixedCents: 0, percentBasisPoints: 300 });
      assert.deepEqual(read.feeSchedule.boleto, { fixedCents: 349, percentBasisPoints: 0 }, 'deep-partial patch keeps the rest');

      const oldPaid = await mustMove(old, 'PAYMENT_CONFIRMED');
      assert.equal(oldPaid.systemFee, 298, 'the schedule in force at creation');
      const fresh = await createSale(seller, 'PIX', 15000);
      const freshPaid = await mustMove(fresh, 'PAYMENT_CONFIRMED');
      assert.deepEqual([freshPaid.systemFee, freshPaid.netAmount], [450, 14550]); // round(450.0)
      const ownSale = await createSale(own, 'PIX', 15000);
      assert.equal((await mustMove(ownSale, 'PAYMENT_CONFIRMED')).systemFee, 298, 'a seller with its own schedule does not follow');

      // back to following the platform
      assert.equal((await setSchedule(own, null)).feeSchedule, null);
      const ownFresh = await createSale(own, 'PIX', 15000);
      assert.equal((await mustMove(ownFresh, 'PAYMENT_CONFIRMED')).systemFee, 450);
      assert.deepEqual(await figures(seller), [14702 + 14550, 0, 29252]);
      await assertVerifyOk();
    } finally {
      const reset = await inject('PATCH', '/admin/settings', adminHeaders, { feeSchedule: { pix: { fixedCents: 0, percentBasisPoints: 199 } } });
      assert.equal(reset.statusCode, 200, reset.body);
    }
  });

  test('fee schedule validation names every bad field and changes nothing', async () => {
    const before = (await inject('GET', '/admin/settings', adminHeaders)).json();
    const one = await inject('PATCH', '/admin/settings', adminHeaders, { feeSchedule: { pix: { percentBasisPoints: -1 } } });
    assert.equal(one.statusCode, 400);
    assert.equal(one.json().errorType, 'VALIDATION_ERROR');
    assert.deepEqual(
      one.json().details.map((d: { field: string }) => d.field),
      ['feeSchedule.pix.percentBasisPoints'],
    );

    const many = await inject('PATCH', '/admin/settings', adminHeaders, {
      feeSchedule: {
        reserveBasisPoints: 10001,
        reserveDays: 366,
        creditCard: { fixedCents: 1.5 },
        debitCard: { percentBasisPoints: '299' },
        cashout: 'x',
        pix: { percentBasisPoints: 150 },
      },
    });
    assert.equal(many.statusCode, 400);
    assert.equal(many.json().errorType, 'VALIDATION_ERROR');
    assert.deepEqual(
      new Set(many.json().details.map((d: { field: string }) => d.field)),
      new Set([
        'feeSchedule.reserveBasisPoints',
        'feeSchedule.reserveDays',
        'feeSchedule.creditCard.fixedCents',
        'feeSchedule.debitCard.percentBasisPoints',
        'feeSchedule.cashout',
      ]),
    );
    assert.deepEqual(
      (await inject('GET', '/admin/settings', adminHeaders)).json(),
      before,
      'a refused patch changes nothing (not even its valid part)',
    );

    const seller = await gw.createSeller();
    const bad = await inject('PATCH', `/admin/sellers/${seller.id}`, adminHeaders, {
      feeSchedule: { pix: { percentBasisPoints: -1 }, chargebackFineCents: -5 },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().errorType, 'VALIDATION_ERROR');
    assert.deepEqual(
      new Set(bad.json().details.map((d: { field: string }) => d.field)),
      new Set(['feeSchedule.pix.percentBasisPoints', 'feeSchedule.chargebackFineCents']),
    );
    const read = (await inject('GET', `/admin/sellers/${seller.id}`, adminHeaders)).json();
    assert.equal(read.feeSchedule, null);

    // the boundary values are accepted
    const edge = await inject('PATCH', `/admin/sellers/${seller.id}`, adminHeaders, {
      feeSchedule: { pix: { percentBasisPoints: 10000 }, reserveBasisPoints: 0, reserveDays: 365 },
    });
    assert.equal(edge.statusCode, 200, edge.body);
  });

  test("statement: the seller's lines newest first, with bucket/amount/kind/transactionId, paginated without gaps", async () => {
    const seller = await gw.createSeller();
    const other = await gw.createSeller();
    await setSchedule(seller, reserve10);
    const s1 = await createSale(seller, 'PIX', 20000);
    const s2 = await createSale(seller, 'PIX', 15000);
    const foreign = await createSale(other, 'PIX', 15000);
    await mustMove(foreign, 'PAYMENT_CONFIRMED');
    await mustMove(s1, 'PAYMENT_CONFIRMED');
    await mustMove(s1, 'MED_OPENED');
    await mustMove(s1, 'MED_WON'); // before the due date: no release yet
    current = new Date(current.getTime() + 30 * DAY_MS);
    await runReserveJob();
    await mustMove(s2, 'PAYMENT_CONFIRMED');
    await mustMove(s2, 'REFUNDED');

    // oldest posting first; each posting's seller lines as a set
    const expected: { kind: string; transactionId: number; lines: [string, number][] }[] = [
      {
        kind: 'FIRST_PAYMENT',
        transactionId: s1,
        lines: [
          ['available', 17642],
          ['blocked', 1960],
        ],
      },
      {
        kind: 'MED_OPENED',
        transactionId: s1,
        lines: [
          ['available', -17642],
          ['blocked', 17642],
        ],
      },
      {
        kind: 'MED_WON',
        transactionId: s1,
        lines: [
          ['available', 17642],
          ['blocked', -17642],
        ],
      },
      {
        kind: 'RESERVE_RELEASE',
        transactionId: s1,
        lines: [
          ['available', 1960],
          ['blocked', -1960],
        ],
      },
      // s2 PIX 15000 under the same schedule: fee 298, reserve round(1470.2) = 1470, net 13232
      {
        kind: 'FIRST_PAYMENT',
        transactionId: s2,
        lines: [
          ['available', 13232],
          ['blocked', 1470],
        ],
      },
      // refund of the whole 15000 at once (CONTRACT §5a): requested, SUCCEEDED, then the reserve back to
      // available; net available −(15000 − 1470) = −13530, blocked −1470 (the old single row)
      {
        kind: 'REFUND_REQUESTED',
        transactionId: s2,
        lines: [
          ['available', -15000],
          ['blocked', 15000],
        ],
      },
      { kind: 'REFUND_SUCCEEDED', transactionId: s2, lines: [['blocked', -15000]] },
      {
        kind: 'RESERVE_RELEASE',
        transactionId: s2,
        lines: [
          ['available', 1470],
          ['blocked', -1470],
        ],
      },
    ];
    const all = await inject('GET', '/api/public/statement?limit=100', seller.headers);
    assert.equal(all.statusCode, 200, all.body);
    const { data, nextCursor } = all.json() as {
      data: { id: number; createdAt: string; bucket: string; amount: number; kind: string; transactionId: number | null; cashoutId: number | null }[];
      nextCursor: string | null;
    };
    assert.equal(nextCursor, null);
    assert.equal(data.length, 15);
    for (let i = 1; i < data.length; i++) assert.ok(data[i - 1]!.id > data[i]!.id, 'newest first');
    for (const line of data) {
      assert.ok(
        line.bucket === 'available' || line.bucket === 'blocked',
        `statement line ${line.id}: bucket available or blocked, got ${line.bucket}`,
      );
      assert.equal(line.cashoutId, null);
      assert.ok(!Number.isNaN(Date.parse(line.createdAt)), `statement line ${line.id}: createdAt a date, got ${line.createdAt}`);
    }
    // group consecutive lines (oldest first) into postings
    const groups: { kind: string; transactionId: number | null; lines: [string, number][] }[] = [];
    for (const line of [...data].reverse()) {
      const last = groups[groups.length - 1];
      if (last && last.kind === line.kind && last.transactionId === line.transactionId) last.lines.push([line.bucket, line.amount]);
      else groups.push({ kind: line.kind, transactionId: line.transactionId, lines: [[line.bucket, line.amount]] });
    }
    for (const g of groups) g.lines.sort((a, b) => a[0].localeCompare(b[0]));
    assert.deepEqual(groups, expected);

    const sum = (bucket: string) => data.filter((l) => l.bucket === bucket).reduce((s, l) => s + l.amount, 0);
    // available 17642 − 17642 + 17642 + 1960 + 13232 − 15000 + 1470 = 19304; blocked 1960 + 17642 − 17642 − 1960 + 1470 + 15000 − 15000 − 1470 = 0
    assert.deepEqual(await figures(seller), [19304, 0, 19304]);
    assert.deepEqual([sum('available'), sum('blocked')], [19304, 0]);

    for (const limit of [1, 3, 5, 6, 15, 20]) {
      const pages: typeof data = [];
      let cursor: string | null = null;
      let count = 0;
      do {
        const url: string = `/api/public/statement?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
        const page = await inject('GET', url, seller.headers);
        assert.equal(page.statusCode, 200, page.body);
        const body = page.json() as { data: typeof data; nextCursor: string | null };
        assert.ok(body.data.length <= limit, `limit ${limit}: at most ${limit} lines a page, got ${body.data.length}`);
        pages.push(...body.data);
        cursor = body.nextCursor;
        assert.ok(++count <= 20, 'pagination terminates');
      } while (cursor !== null);
      assert.deepEqual(pages, data, `limit ${limit}: the pages, concatenated, are the whole statement`);
      assert.equal(count, Math.ceil(data.length / limit), `limit ${limit}: no empty trailing page`);
    }
    await assertVerifyOk();
  });

  test('available may go negative through refunds and disputes, also after money left by a cashout', async () => {
    const seller = await gw.createSeller();
    const a = await createSale(seller, 'PIX', 15000);
    await mustMove(a, 'PAYMENT_CONFIRMED');
    assert.deepEqual(await figures(seller), [14702, 0, 14702]);
    // money leaves: a cashout of 100.00 (cashout created: available −10000; blocked +10000)
    const cashout = await inject('POST', '/api/public/cashout', seller.headers, { amount: 100, pixKey: '52998224725', pixKeyType: 'CPF' });
    assert.equal(cashout.statusCode, 201, cashout.body);
    assert.deepEqual(await figures(seller), [4702, 10000, 14702]);
    // the refund takes the whole amount from available: 4702 − 15000 = −10298
    await mustMove(a, 'REFUNDED');
    assert.deepEqual(await figures(seller), [-10298, 10000, -298]);
    // a negative available does not cover a cashout
    const refused = await inject('POST', '/api/public/cashout', seller.headers, { amount: 100, pixKey: '52998224725', pixKeyType: 'CPF' });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().errorType, 'INSUFFICIENT_BALANCE');
    // new sales pay the debt back first: credit 15000 → 14203
    const b = await createSale(seller, 'CREDIT_CARD', 15000);
    await mustMove(b, 'SENT_TO_PROCESSOR');
    await mustMove(b, 'APPROVED');
    assert.deepEqual(await figures(seller), [-10298 + 14203, 10000, 3905 + 10000]);
    // chargeback confirmed: −1500 fine, then −15000
    await mustMove(b, 'CHARGEBACK_OPENED');
    await mustMove(b, 'CHARGEBACK_CONFIRMED');
    assert.deepEqual(await figures(seller), [3905 - 1500 - 15000, 10000, -12595 + 10000]);
    await assertVerifyOk();
  });

  test('expiry by the scheduler moves no money, and a payment reported afterwards is refused', async () => {
    const seller = await gw.createSeller();
    const pixRes = await inject('POST', '/api/sales', seller.headers, { ...saleBody('PIX', 15000), pix: { expiresInSeconds: 3600 } });
    assert.equal(pixRes.statusCode, 201, pixRes.body);
    const pix = pixRes.json().sale.id as number;
    const boleto = await createSale(seller, 'BOLETO', 5000); // due today + 3 days (São Paulo)
    const runExpiry = async () => {
      for (let i = 0; i < 100; i++) if ((await expiryJob.run(gw.ctx)) === 0) return;
    };

    current = new Date(current.getTime() + 3600_000 - 1);
    await runExpiry();
    assert.equal((await readTransaction(seller, pix)).status, 'PENDENTE', 'not expired 1 ms early');
    current = new Date(current.getTime() + 2);
    await runExpiry();
    assert.equal((await readTransaction(seller, pix)).status, 'CANCELADO', 'expired 1 ms after expiresAt');

    current = new Date(current.getTime() + 6 * DAY_MS); // the due date + 3 days: still payable
    await runExpiry();
    assert.equal((await readTransaction(seller, boleto)).status, 'PENDENTE');
    current = new Date(current.getTime() + DAY_MS);
    await runExpiry();
    assert.equal((await readTransaction(seller, boleto)).status, 'CANCELADO');

    for (const id of [pix, boleto]) {
      const late = await event(id, 'PAYMENT_CONFIRMED');
      assert.equal(late.statusCode, 409, late.body);
      assert.equal(late.json().errorType, 'INVALID_TRANSITION');
      const read = await readTransaction(seller, id);
      assert.deepEqual([read.systemFee, read.netAmount, read.completedAt], [null, null, null]);
    }
    assert.deepEqual(await figures(seller), [0, 0, 0]);
    const lines = await gw.ctx.db.query('SELECT 1 FROM postings WHERE transaction_id = ANY($1::bigint[])', [[pix, boleto]]);
    assert.equal(lines.rows.length, 0, 'no posting for sales that were never paid');
    await assertVerifyOk();
  });

  test('illegal moves are 409 INVALID_TRANSITION and move no money; repeating the last event is 200 and moves nothing', async () => {
    const seller = await gw.createSeller();
    const pix = await createSale(seller, 'PIX', 15000);
    const card = await createSale(seller, 'CREDIT_CARD', 15000);
    for (const [id, e] of [
      [pix, 'REFUNDED'],
      [pix, 'MED_WON'],
      [pix, 'SENT_TO_PROCESSOR'],
      [card, 'EXPIRED'],
      [card, 'APPROVED'],
    ] as [number, TxEvent][]) {
      const res = await event(id, e);
      assert.equal(res.statusCode, 409, `${e}: ${res.body}`);
      assert.equal(res.json().errorType, 'INVALID_TRANSITION');
    }
    await mustMove(pix, 'PAYMENT_CONFIRMED');
    assert.equal((await mustMove(pix, 'PAYMENT_CONFIRMED')).status, 'PAGO', 'a repeat is 200');
    assert.deepEqual(await figures(seller), [14702, 0, 14702], 'paid once');
    await mustMove(card, 'SENT_TO_PROCESSOR');
    await mustMove(card, 'APPROVED');
    for (const e of ['MED_OPENED', 'PAYMENT_CONFIRMED', 'RETRY_PROCESSED'] as TxEvent[]) {
      const res = await event(card, e);
      assert.equal(res.statusCode, 409, `${e}: ${res.body}`);
    }
    const res = await event(pix, 'CHARGEBACK_OPENED');
    assert.equal(res.statusCode, 409, 'chargebacks are for cards');
    assert.deepEqual(await figures(seller), [14702 + 14203, 0, 28905]);
    await mustMove(pix, 'MED_OPENED');
    await mustMove(pix, 'MED_OPENED');
    assert.deepEqual(await figures(seller), [14203, 14702, 28905], 'MED blocked once');
    await assertVerifyOk();
  });
});

describe('money postings: ledger verification covers every §5 invariant', () => {
  test('verify reports an ESTORNADO sale whose customer_funds does not net to zero', {}, async () => {
    const seller = await gw.createSeller();
    const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: saleBody('PIX', 15000) });
    const id = res.json().sale.id as number;
    for (const event of ['PAYMENT_CONFIRMED', 'REFUNDED']) {
      assert.equal(
        (await gw.app.inject({ method: 'POST', url: `/admin/transactions/${id}/events`, headers: adminHeaders, payload: { event } })).statusCode,
        200,
      );
    }
    const verify = async () => (await gw.app.inject({ method: 'GET', url: '/admin/ledger/verify', headers: adminHeaders })).json();
    assert.equal((await verify()).ok, true);
    // A balanced posting that leaves 1 cent of this refunded sale's customer money with the platform.
    await gw.ctx.db.tx((q) =>
      post(q, {
        kind: 'TEST_LEAK',
        sellerId: seller.id,
        transactionId: id,
        lines: [
          { account: 'customer_funds', amount: -1 },
          { account: 'fee_revenue', amount: 1 },
        ],
      }),
    );
    const report = await verify();
    assert.equal(report.ok, false);
    const mine = report.mismatches.filter((m: { transactionId?: unknown }) => Number(m.transactionId) === id);
    assert.equal(mine.length, 1, JSON.stringify(report.mismatches));
    assert.equal(Number(mine[0].customerFunds), -1);
  });
});
