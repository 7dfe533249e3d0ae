/**
 * What a reconciled day must show (CONTRACT §15), given what was moved at each side of each account
 * and the faults injected at the provider's: every account reconciles; its findings are exactly
 * the faults (one each, on the side the fault is on, of the amount it moved), each a provider event
 * RECONCILIATION stored once; a matched account's totals are equal, and each side's total is what
 * that side moved; reconciling moves no seller's money, and the ledger still verifies.
 */

import assert from 'node:assert/strict';
import type { DayOutcome } from '../../src/reconciliation/reconcile.ts';
import type { ReconciliationAccountView as AccountDay } from '../../src/reconciliation/report.ts';
import { adminHeaders, type Gateway } from './gateway.ts';
import { CARD_ACCOUNT, EFI_ACCOUNT, PIX_ACCOUNT, providerEvents } from './reconciliation-flows.ts';

export type FaultKind = 'devolucaoByHand' | 'foreignPix' | 'sentTwice' | 'boletoSilent' | 'refundNeverMade';

/** A finding the day must have: a fault injected, on `side`, of `amount` cents (+ into the account, − out). */
export interface Expected {
  kind: FaultKind;
  account: string;
  side: 'provider' | 'ledger';
  reference: string;
  amount: number;
}

/** What the day must show: its findings, and the cents each side of each account moved, since the gateway started. */
export interface Books {
  expected: Expected[];
  provider: Map<string, number>;
  ledger: Map<string, number>;
}

async function report(gw: Gateway, day: string): Promise<AccountDay[]> {
  const res = await gw.app.inject({ method: 'GET', url: `/admin/reconciliation?date=${day}`, headers: adminHeaders });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().date, day);
  return res.json().accounts;
}

/** Every seller's balance, as the API reads it and as its journal lines sum. */
async function sellerMoney(gw: Gateway): Promise<unknown[]> {
  const balances = await gw.ctx.db.query('SELECT seller_id::text, available::text, blocked::text FROM balances ORDER BY seller_id');
  const lines = await gw.ctx.db.query(
    'SELECT seller_id::text, account, sum(amount)::text AS total FROM journal_lines WHERE seller_id IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2',
  );
  return [balances.rows, lines.rows];
}

const tuple = (account: string, f: { side: string; reference: string; amount: number }) => [account, f.side, f.reference, f.amount];
const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();
/** How many of each kind on each side. */
const perKind = (rows: { kind: string; side: string }[]) => {
  const n: Record<string, number> = {};
  for (const r of rows) n[`${r.kind} (${r.side})`] = (n[`${r.kind} (${r.side})`] ?? 0) + 1;
  return n;
};

/** The findings: exactly the faults, per kind and side, then one by one; each a provider event RECONCILIATION, stored once. */
async function checkFindings(gw: Gateway, accounts: AccountDay[], books: Books): Promise<void> {
  const found = accounts.flatMap((a) => a.findings.map((f) => ({ account: a.account, ...f })));
  const kindOf = new Map(books.expected.map((e) => [`${e.account} ${e.side} ${e.reference}`, e.kind as string]));
  assert.deepEqual(
    perKind(found.map((f) => ({ kind: kindOf.get(`${f.account} ${f.side} ${f.reference}`) ?? 'not injected', side: f.side }))),
    perKind(books.expected),
    'the findings of the day, per kind and side: one per fault injected',
  );
  assert.deepEqual(
    sorted(found.map((f) => [...tuple(f.account, f), f.otherAmount])),
    sorted(books.expected.map((e) => [...tuple(e.account, e), null])),
    'the findings of the day are the faults injected, each of its amount, alone on its side',
  );
  const events = new Map((await providerEvents(gw, 'needs_operator')).filter((e) => e.kind === 'RECONCILIATION').map((e) => [e.id, e]));
  assert.deepEqual(
    found.map((f) => f.eventId).sort((x, y) => (x ?? 0) - (y ?? 0)),
    [...events.keys()].sort((x, y) => x - y),
    'each finding is one provider event RECONCILIATION needs_operator, stored once however often the day is reconciled',
  );
  for (const f of found) {
    const e = events.get(f.eventId!)!;
    assert.deepEqual([e.externalReference, e.amount], [f.reference, f.amount], `the provider event of ${f.side} ${f.reference}`);
  }
}

/**
 * Each account's state, counts and totals: matched when no fault is on it (then its totals are equal), every movement
 * either matched or a finding, each side's total what it moved.
 */
function checkTotals(accounts: AccountDay[], books: Books, clean: boolean): void {
  for (const a of accounts) {
    const faults = books.expected.filter((e) => e.account === a.account);
    assert.equal(a.state, faults.length === 0 ? 'matched' : 'mismatched', `${a.account}: ${JSON.stringify(a)}`);
    if (clean) assert.equal(a.state, 'matched', `${a.account}: a day without faults is matched`);
    if (a.state === 'matched') assert.equal(a.providerTotal, a.ledgerTotal, `${a.account}: a matched day's totals are equal`);
    const alone = (side: 'provider' | 'ledger') => a.findings.filter((f) => f.side === side).length;
    assert.deepEqual(
      [a.providerMovements - alone('provider'), a.ledgerMovements - alone('ledger')],
      [a.matched, a.matched],
      `${a.account}: every movement of either side not matched is a finding`,
    );
    const lone = a.findings.reduce((sum, f) => sum + (f.side === 'provider' ? f.amount : -f.amount), 0);
    assert.equal(a.providerTotal - a.ledgerTotal, lone, `${a.account}: the totals differ by the findings`);
    assert.deepEqual(
      { provider: a.providerTotal, ledger: a.ledgerTotal },
      { provider: books.provider.get(a.account) ?? 0, ledger: books.ledger.get(a.account) ?? 0 },
      `${a.account}: each side's total is what it moved`,
    );
  }
}

/** Reconciles `day` (by `reconcile`) and checks it against `books`; `clean`: the run injected no fault. */
export async function checkDay(
  gw: Gateway,
  day: string,
  books: Books,
  clean: boolean,
  reconcile: () => Promise<Map<string, DayOutcome>>,
): Promise<void> {
  const before = await sellerMoney(gw);
  const outcomes = await reconcile();
  assert.deepEqual([...outcomes.keys()].sort(), [CARD_ACCOUNT, EFI_ACCOUNT, PIX_ACCOUNT].sort(), 'every account is reconciled');
  for (const [account, o] of outcomes) assert.ok(o.state === 'matched' || o.state === 'mismatched', `${account}: ${o.state} ${o.error}`);
  const accounts = await report(gw, day);
  assert.deepEqual(accounts.map((a) => [a.account, a.state]).sort(), [...outcomes].map(([account, o]) => [account, o.state]).sort());
  for (const a of accounts) assert.equal(a.findingCount, a.findings.length, `${a.account}: every finding shown`);
  await checkFindings(gw, accounts, books);
  checkTotals(accounts, books, clean);
  assert.deepEqual(await sellerMoney(gw), before, 'reconciling moved no seller balance');
  const verify = await gw.app.inject({ method: 'GET', url: '/admin/ledger/verify', headers: adminHeaders });
  assert.deepEqual([verify.json().ok, verify.json().mismatches], [true, []], verify.body);
}
