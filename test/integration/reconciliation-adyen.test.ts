// Reconciliation of an Adyen account (CONTRACT §15) through Adyen's wire protocol only: card sales sent
// to the test double's Checkout API, signed notifications posted to the gateway, a signed
// REPORT_AVAILABLE naming the Settlement details report the double serves, the report job run, then
// the day reconciled and read as the operator reads it. A clean day matches and posts Adyen's costs
// once as the platform's; a Settled line of another amount is one finding that moves nothing; a day no
// report covers yet is pending, and reconciles once the report arrives.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { saoPauloDate } from '../../src/domain/calendar.ts';
import { dayWindow } from '../../src/reconciliation/days.ts';
import type { ReconciliationAccountView as AccountDay } from '../../src/reconciliation/report.ts';
import { reconcileAccounts } from '../../src/reconciliation/run.ts';
import { type NotificationItemInput, type SettlementRow, settlementCsv } from '../helpers/adyen-double.ts';
import { accepted, balance, ledgerOk, paidSale, type Rail, read, refund, refundPsp, startRail, stopRail } from '../helpers/adyen-rail.ts';
import { adminHeaders, railJob } from '../helpers/gateway.ts';

const credentials = { ADYEN_REPORT_USERNAME: 'report@Company.PagarGateway', ADYEN_REPORT_PASSWORD: 'report-password-of-the-test' };

interface Sale {
  id: number;
  psp: string;
}

const day = () => saoPauloDate(new Date());
const accountOf = (r: Rail) => r.gw.ctx.rails.adyen!.account.id;

async function startAdyenRail(): Promise<Rail> {
  const r = await startRail(credentials);
  r.adyen.reportUsername = credentials.ADYEN_REPORT_USERNAME;
  r.adyen.reportPassword = credentials.ADYEN_REPORT_PASSWORD;
  return r;
}

const publishRows = (r: Rail, file: string, rows: SettlementRow[]) => r.adyen.publishReport(file, settlementCsv(r.adyen.merchantAccount, rows));

/** The report published, announced by a signed REPORT_AVAILABLE, and downloaded by the report job. */
async function deliverReport(r: Rail, file: string, rows: SettlementRow[]): Promise<void> {
  publishRows(r, file, rows);
  await accepted(r, r.adyen.reportNotification(file));
  assert.equal(await railJob(r.gw, 'adyen-settlement-reports').run(r.gw.ctx), 1, `${file} downloaded`);
}

/** The batch's closing payout, the next night: the report reaches past the day (and its hour of overlap). */
const payoutLine = (batch: number): SettlementRow => ({
  type: 'MerchantPayout',
  at: new Date(dayWindow(day()).to.getTime() + 2 * 3600_000),
  modificationReference: 'Payout',
  net: -1,
  batch,
});

/** Runs the day's reconciliation; the Adyen account's day as GET /admin/reconciliation shows it. */
async function reconciled(r: Rail): Promise<AccountDay> {
  const outcome = (await reconcileAccounts(r.gw.ctx, day())).get(accountOf(r));
  assert.ok(outcome, 'the Adyen account was reconciled');
  return accountDay(r);
}

async function accountDay(r: Rail): Promise<AccountDay> {
  const res = await r.gw.app.inject({ method: 'GET', url: `/admin/reconciliation?date=${day()}`, headers: adminHeaders });
  assert.equal(res.statusCode, 200, res.body);
  const mine = (res.json().accounts as AccountDay[]).find((a) => a.account === accountOf(r));
  assert.ok(mine, 'the Adyen account is listed');
  return mine;
}

const dispute = (eventCode: string, s: Sale, amount: number): NotificationItemInput => ({
  eventCode,
  success: true,
  pspReference: s.psp,
  merchantReference: String(s.id),
  amount: { value: amount },
});

/** Sale `a` refunded in part at Adyen (its REFUND success notified); the refund's pspReference. */
async function refundedInPart(r: Rail, a: Sale, amount: number): Promise<string> {
  const asked = await refund(r, a.id, amount);
  assert.equal(asked.status, 'PENDING');
  const psp = refundPsp(r, asked.id as number);
  const item = { pspReference: psp, originalReference: a.psp, merchantReference: `refund-${asked.id}`, amount: { value: amount } };
  await accepted(r, { eventCode: 'REFUND', success: true, ...item });
  assert.equal((await read(r, a.id)).refundedAmount, amount);
  return psp;
}

const feeLines = async (r: Rail) =>
  (
    await r.gw.ctx.db.query<{ account: string; amount: string; reference: string; seller: number | null }>(
      `SELECT j.account, j.amount::text AS amount, j.reference, p.seller_id AS seller FROM journal_lines j JOIN postings p ON p.id = j.posting_id
       WHERE p.kind = 'PROVIDER_FEE' ORDER BY j.account, j.reference`,
    )
  ).rows.map((l) => ({ ...l, amount: Number(l.amount) }));
/** The provider event `id` as GET /admin/provider-events lists it. */
async function providerEvent(r: Rail, id: number | null) {
  const res = await r.gw.app.inject({ method: 'GET', url: '/admin/provider-events?provider=adyen&limit=100', headers: adminHeaders });
  assert.equal(res.statusCode, 200, res.body);
  const event = (res.json().data as { id: number; kind: string; state: string; amount: number | null; externalReference: string }[]).find(
    (e) => e.id === id,
  );
  assert.ok(event, `provider event ${id} listed`);
  return event;
}

const journalSize = async (r: Rail) => Number((await r.gw.ctx.db.query<{ n: string }>('SELECT count(*)::text AS n FROM journal_lines')).rows[0]!.n);

/** Adyen's costs as posted: each lowers the platform's funds at the account and is its expense, once, of no seller. */
async function assertCostsPosted(r: Rail, costs: { reference: string; cost: number }[]): Promise<void> {
  const account = accountOf(r);
  const lines = await feeLines(r);
  assert.ok(
    lines.every((l) => l.seller === null),
    'postings of no seller',
  );
  const pairs = (ls: { reference: string; amount: number }[]) => ls.map((l) => `${l.reference} ${l.amount}`).sort();
  const funds = lines.filter((l) => l.account === `customer_funds:${account}`);
  assert.deepEqual(pairs(funds), pairs(costs.map((c) => ({ reference: c.reference, amount: c.cost }))), "the platform's funds lowered");
  const expense = lines.filter((l) => l.account === `provider_fees:${account}`);
  assert.deepEqual(
    expense.map((l) => l.amount).sort((x, y) => x - y),
    costs.map((c) => -c.cost).sort((x, y) => x - y),
    `provider_fees:${account}, once each`,
  );
  assert.equal(lines.length, 2 * costs.length);
}

/** The batch of the clean day: both sales settled with their costs, the refund, the chargeback and its reversal, the fee. */
function cleanBatch(a: Sale, b: Sale, refundRef: string): SettlementRow[] {
  const at = new Date();
  const line = (s: Sale, type: SettlementRow['type'], modificationReference: string, gross: number, costs = {}): SettlementRow => ({
    type,
    at,
    pspReference: s.psp,
    merchantReference: String(s.id),
    modificationReference,
    gross,
    ...costs,
  });
  return [
    line(a, 'Settled', `${a.psp.slice(0, 8)}CAPTURE1`, 16000, { commission: 130, markup: 40 }),
    line(b, 'Settled', `${b.psp.slice(0, 8)}CAPTURE1`, 20000, { commission: 160, markup: 50 }),
    line(a, 'Refunded', refundRef, -5000),
    line(b, 'Chargeback', `${b.psp.slice(0, 8)}CHARGEBK`, -20000),
    line(b, 'ChargebackReversed', `${b.psp.slice(0, 8)}CBREVERS`, 20000),
    { type: 'Fee', at, modificationReference: 'Transaction Fees', net: -250 },
    payoutLine(1),
  ];
}

describe('reconciliation of an Adyen account against its settlement reports', () => {
  let r: Rail;
  before(async () => {
    r = await startAdyenRail();
  });
  after(() => stopRail(r));

  test('a clean day matches: two sales settled, a partial refund, a chargeback reversed; the costs posted once as the platform’s', async () => {
    const a = await paidSale(r, 16000);
    const b = await paidSale(r, 20000);
    const refundRef = await refundedInPart(r, a, 5000);
    for (const code of ['NOTIFICATION_OF_CHARGEBACK', 'CHARGEBACK', 'CHARGEBACK_REVERSED']) await accepted(r, dispute(code, b, 20000));
    assert.equal((await read(r, b.id)).status, 'PAGO', 'the chargeback reversed');
    await deliverReport(r, 'settlement_detail_report_batch_1.csv', cleanBatch(a, b, refundRef));

    const sellers = await balance(r);
    const first = await reconciled(r);
    assert.equal(first.state, 'matched', JSON.stringify(first));
    assert.deepEqual(
      [first.providerMovements, first.ledgerMovements, first.matched, first.findingCount],
      [5, 5, 5, 0],
      'Settled ×2, Refunded, Chargeback, ChargebackReversed: each to one journal movement',
    );
    assert.equal(first.providerTotal, 16000 + 20000 - 5000 - 20000 + 20000);
    assert.equal(first.ledgerTotal, first.providerTotal);
    const costs = [
      { reference: `${a.psp}:fee`, cost: 130 + 40 },
      { reference: `${b.psp}:fee`, cost: 160 + 50 },
      { reference: 'Transaction Fees:fee', cost: 250 },
    ];
    await assertCostsPosted(r, costs);
    assert.equal((await reconciled(r)).state, 'matched', 'reconciled again');
    await assertCostsPosted(r, costs);
    assert.deepEqual(await balance(r), sellers, "the sellers' balances are not reconciliation's to move");
    await ledgerOk(r);
  });

  test('a Settled line of another amount than the sale’s is one finding on the provider side; nothing moves', async () => {
    const c = await paidSale(r, 12000);
    await deliverReport(r, 'settlement_detail_report_batch_2.csv', [
      {
        type: 'Settled',
        at: new Date(),
        pspReference: c.psp,
        merchantReference: String(c.id),
        modificationReference: `${c.psp.slice(0, 8)}CAPTURE2`,
        gross: 11900,
        batch: 2,
      },
      payoutLine(2),
    ]);
    const sellers = await balance(r);
    const lines = await journalSize(r);
    const found = await reconciled(r);
    assert.equal(found.state, 'mismatched');
    assert.equal(found.findingCount, 1);
    assert.deepEqual(
      found.findings.map(({ side, reference, amount, otherAmount }) => ({ side, reference, amount, otherAmount })),
      [{ side: 'provider', reference: c.psp, amount: 11900, otherAmount: 12000 }],
    );
    const event = await providerEvent(r, found.findings[0]!.eventId);
    assert.deepEqual([event.kind, event.state, event.amount, event.externalReference], ['RECONCILIATION', 'needs_operator', 11900, c.psp]);
    assert.equal((await read(r, c.id)).status, 'PAGO');
    assert.deepEqual(await balance(r), sellers, 'no money moved');
    assert.equal(await journalSize(r), lines, 'not a journal line written');
    await ledgerOk(r);
  });
});

describe('an Adyen day no settlement report covers yet', () => {
  let r: Rail;
  before(async () => {
    r = await startAdyenRail();
  });
  after(() => stopRail(r));

  test('is pending (not unreadable), while its report is announced but unread too, and reconciles once it is read', async () => {
    const d = await paidSale(r, 16000);
    assert.equal((await accountDay(r)).state, 'pending', 'not reconciled yet');
    const none = await reconciled(r);
    assert.equal(none.state, 'pending', JSON.stringify(none));
    assert.match(none.error!, /has not reported account .* yet/);

    const file = 'settlement_detail_report_batch_5.csv';
    publishRows(r, file, [
      { type: 'Settled', at: new Date(), pspReference: d.psp, modificationReference: `${d.psp.slice(0, 8)}CAPTURE5`, gross: 16000, batch: 5 },
      payoutLine(5),
    ]);
    await accepted(r, r.adyen.reportNotification(file));
    const unread = await reconciled(r);
    assert.equal(unread.state, 'pending', JSON.stringify(unread));
    assert.match(unread.error!, /settlement_detail_report_batch_5\.csv .* is not read yet/);

    assert.equal(await railJob(r.gw, 'adyen-settlement-reports').run(r.gw.ctx), 1);
    const read = await reconciled(r);
    assert.equal(read.state, 'matched', JSON.stringify(read));
    assert.deepEqual([read.providerMovements, read.matched, read.providerTotal, read.ledgerTotal], [1, 1, 16000, 16000]);
    await ledgerOk(r);
  });
});
