/**
 * Property test of the money movements: random sequences of sales, events (legal or not), fee
 * schedule patches and the passing of time, run against the gateway and against the independent
 * model in test/helpers/money-model.ts (written from CONTRACT §5/§6, not from src/). After every
 * sequence the ledger must verify, and every balance and platform account must equal the model.
 *
 * One gateway for the whole file; every sequence gets three fresh sellers, and the clock goes back
 * to the same start (so card expiry dates stay valid whatever the sequences before did).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { adminHeaders, startGateway, type Gateway, type SellerKeys } from '../helpers/gateway.ts';
import { onPostgres } from '../helpers/databases.ts';
import {
  bpHalfEven, DAY_MS, defaultSchedule, EVENTS, METHODS, MoneyModel, saleBody, splitOf,
  type CashoutEvent, type Method, type SchedulePatch, type TxEvent,
} from '../helpers/money-model.ts';
import { reserveReleaseJob } from '../../src/transactions/jobs.ts';

const NUM_RUNS = onPostgres ? 100 : 1000;
const SEED = 424242;
const START = Date.parse('2026-03-02T12:00:00.000Z');
let now = START;
/** What the sequences exercised, reported at the end so a weak generator shows. */
const stats = { moved: new Map<string, number>(), noop: 0, refused: 0, releases: 0, negativeAvailable: 0, verifyMs: 0, cashouts: 0 };
const count = (key: string) => stats.moved.set(key, (stats.moved.get(key) ?? 0) + 1);

// ---- operations ----

type Op =
  | { kind: 'sale'; seller: number; method: Method; amount: number }
  /** any: one of all 15 events; legal: one the model allows; money: an allowed one that keeps the sale alive, when there is one. */
  | { kind: 'event'; sale: number; mode: 'any' | 'legal' | 'money'; pick: number }
  | { kind: 'sellerSchedule'; seller: number; patch: SchedulePatch | null }
  | { kind: 'platformSchedule'; patch: SchedulePatch }
  | { kind: 'tick'; ms: number }
  /** percent of the seller's available balance (per the model), in whole reais, at least R$ 100 */
  | { kind: 'cashout'; seller: number; percent: number }
  | { kind: 'cashoutEvent'; cashout: number; event: CashoutEvent };

const cents = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 500 }), weight: 4 }, { arbitrary: fc.integer({ min: 0, max: 600_000 }), weight: 1 });
const basisPoints = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 1000 }), weight: 4 }, { arbitrary: fc.integer({ min: 0, max: 10_000 }), weight: 1 });
const methodFee = fc.record({ fixedCents: cents, percentBasisPoints: basisPoints }, { requiredKeys: [] });
const patchArb: fc.Arbitrary<SchedulePatch> = fc.record({
  pix: methodFee, boleto: methodFee, creditCard: methodFee, debitCard: methodFee,
  reserveBasisPoints: fc.oneof(fc.constant(1000), fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 10_000 })),
  reserveDays: fc.integer({ min: 0, max: 60 }),
  chargebackFineCents: fc.oneof(fc.integer({ min: 0, max: 5000 }), cents),
  cashout: fc.record({ fixedCents: cents, variableBasisPoints: basisPoints }, { requiredKeys: [] }),
}, { requiredKeys: [] });
// Multiples of 50 make half-cent ties frequent (e.g. PIX 15000 × 199 bp = 298.5).
const amountArb = fc.oneof(fc.integer({ min: 100, max: 500_000 }), fc.integer({ min: 2, max: 10_000 }).map((k) => k * 50));
/** Counted from the newest sale: mostly the newest, so one sale often gets far (e.g. PAGO → MED → ESTORNADO). */
const saleRefArb = fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, { arbitrary: fc.nat(), weight: 1 });
const sellerArb = fc.integer({ min: 0, max: 2 });

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('sale' as const), seller: sellerArb, method: fc.constantFrom(...METHODS), amount: amountArb }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('event' as const), sale: saleRefArb, mode: fc.constantFrom('any' as const, 'legal' as const, 'money' as const, 'money' as const), pick: fc.nat() }), weight: 10 },
  { arbitrary: fc.record({ kind: fc.constant('sellerSchedule' as const), seller: sellerArb, patch: fc.option(patchArb, { freq: 6 }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('platformSchedule' as const), patch: patchArb }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('cashout' as const), seller: sellerArb, percent: fc.integer({ min: 1, max: 130 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('cashoutEvent' as const), cashout: saleRefArb, event: fc.constantFrom<CashoutEvent>('PROCESSING', 'COMPLETED', 'REJECTED', 'CANCELLED') }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.oneof(fc.integer({ min: 0, max: 45 }).map((d) => d * DAY_MS), fc.integer({ min: 0, max: 45 * DAY_MS })) }), weight: 2 },
);

const DEAD_ENDS: readonly TxEvent[] = ['CANCELLED', 'EXPIRED', 'DECLINED', 'PROCESSING_ERROR'];

const scenarioArb = fc.record({
  // each seller's own schedule before anything happens (none: follows the platform)
  initial: fc.tuple(fc.option(patchArb, { freq: 2 }), fc.option(patchArb, { freq: 2 }), fc.option(patchArb, { freq: 2 })),
  ops: fc.array(opArb, { minLength: 1, maxLength: 12 }),
});

describe('money property: random sequences against the independent model', () => {
  let gw: Gateway;
  before(async () => { gw = await startGateway({ clock: { now: () => new Date(now) } }); });
  after(async () => { await gw.close(); });

  const inject = (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string>, payload?: unknown) =>
    gw.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  async function runReserveJob(): Promise<void> {
    for (let i = 0; i < 1000; i++) if ((await reserveReleaseJob.run(gw.ctx)) === 0) return;
    throw new Error('reserve job never settled');
  }

  async function runScenario(scenario: { initial: (SchedulePatch | null)[]; ops: Op[] }): Promise<void> {
    now = START;
    const model = new MoneyModel();
    // the platform back to the contract's defaults (full schedule, so the model knows it exactly)
    const reset = await inject('PATCH', '/admin/settings', adminHeaders, { feeSchedule: defaultSchedule() });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.deepEqual(reset.json().feeSchedule, model.platformSchedule);

    const sellers: SellerKeys[] = [];
    for (let i = 0; i < 3; i++) {
      const s = await gw.createSeller();
      sellers.push(s);
      model.addSeller(s.id);
    }
    const patchSeller = async (seller: SellerKeys, patch: SchedulePatch | null) => {
      const res = await inject('PATCH', `/admin/sellers/${seller.id}`, adminHeaders, { feeSchedule: patch });
      assert.equal(res.statusCode, 200, res.body);
      model.patchSellerSchedule(seller.id, patch);
      assert.deepEqual(res.json().feeSchedule, model.sellerSchedules.get(seller.id), 'the merged seller schedule');
    };
    for (let i = 0; i < 3; i++) {
      const patch = scenario.initial[i];
      if (patch) await patchSeller(sellers[i]!, patch);
    }

    const saleIds: number[] = [];
    const cashoutIds: number[] = [];
    for (const op of scenario.ops) {
      switch (op.kind) {
        case 'cashout': {
          const seller = sellers[op.seller]!;
          const available = model.balance(seller.id).available;
          const amount = Math.max(10_000, Math.min(10_000_000, Math.floor((available * op.percent) / 100 / 100) * 100));
          const res = await inject('POST', '/api/public/cashout', seller.headers, { amount: (amount / 100).toFixed(2), pixKey: '52998224725' });
          const fees = model.cashoutFees(seller.id, amount);
          if (fees.net <= 0) {
            assert.equal(res.statusCode, 422, res.body);
            assert.equal(res.json().errorType, 'MINIMUM_VALUE');
          } else if (amount > available) {
            assert.equal(res.statusCode, 422, res.body);
            assert.equal(res.json().errorType, 'INSUFFICIENT_BALANCE');
          } else {
            assert.equal(res.statusCode, 201, res.body);
            const id = res.json().id as number;
            assert.ok(model.createCashout(id, seller.id, amount));
            cashoutIds.push(id);
            stats.cashouts++;
          }
          break;
        }
        case 'cashoutEvent': {
          if (cashoutIds.length === 0) break;
          const id = cashoutIds[cashoutIds.length - 1 - (op.cashout % cashoutIds.length)]!;
          const outcome = model.applyCashoutEvent(id, op.event);
          const res = await inject('POST', `/admin/cashouts/${id}/events`, adminHeaders, { event: op.event });
          if (outcome === 'refused') {
            assert.equal(res.statusCode, 409, `${op.event} on cashout ${id}: ${res.body}`);
            assert.equal(res.json().errorType, 'INVALID_TRANSITION');
          } else {
            assert.equal(res.statusCode, 200, `${op.event} on cashout ${id}: ${res.body}`);
            assert.equal(res.json().status, model.cashouts.get(id)!.status);
          }
          break;
        }
        case 'sale': {
          const seller = sellers[op.seller]!;
          const res = await inject('POST', '/api/sales', seller.headers, saleBody(op.method, op.amount));
          assert.equal(res.statusCode, 201, res.body);
          const id = res.json().sale.id as number;
          model.createSale(id, seller.id, op.method, op.amount);
          saleIds.push(id);
          break;
        }
        case 'event': {
          if (saleIds.length === 0) break;
          const sale = model.sale(saleIds[saleIds.length - 1 - (op.sale % saleIds.length)]!);
          const legal = model.legalEvents(sale);
          const alive = legal.filter((e) => !DEAD_ENDS.includes(e));
          const choices = op.mode === 'any' || legal.length === 0 ? EVENTS : op.mode === 'money' && alive.length > 0 ? alive : legal;
          const event: TxEvent = choices[op.pick % choices.length]!;
          const wasPaid = sale.split !== null;
          const heldBefore = sale.reserveHeld;
          const outcome = model.applyEvent(sale.id, event, now);
          if (outcome === 'moved') count(event); else if (outcome === 'noop') stats.noop++; else stats.refused++;
          if (outcome === 'moved' && (event === 'MED_WON' || event === 'CHARGEBACK_REVERTED') && heldBefore > 0 && sale.reserveHeld === 0) stats.releases++;
          const res = await inject('POST', `/admin/transactions/${sale.id}/events`, adminHeaders, { event });
          const label = `${event} on sale ${sale.id} (${sale.method})`;
          if (outcome === 'refused') {
            assert.equal(res.statusCode, 409, `${label}: ${res.body}`);
            assert.equal(res.json().errorType, 'INVALID_TRANSITION');
          } else {
            assert.equal(res.statusCode, 200, `${label}: ${res.body}`);
            const body = res.json();
            assert.equal(body.status, sale.status, label);
            if (!wasPaid && sale.split) {
              assert.deepEqual({ systemFee: body.systemFee, reserveAmount: body.reserveAmount, netAmount: body.netAmount }, sale.split, `${label}: split`);
            }
          }
          break;
        }
        case 'sellerSchedule':
          await patchSeller(sellers[op.seller]!, op.patch);
          break;
        case 'platformSchedule': {
          const res = await inject('PATCH', '/admin/settings', adminHeaders, { feeSchedule: op.patch });
          assert.equal(res.statusCode, 200, res.body);
          model.patchPlatformSchedule(op.patch);
          assert.deepEqual(res.json().feeSchedule, model.platformSchedule, 'the merged platform schedule');
          break;
        }
        case 'tick':
          now += op.ms;
          await runReserveJob();
          const holding = () => saleIds.filter((id) => model.sale(id).reserveHeld > 0).length;
          const heldBefore = holding();
          model.releaseDue(now);
          stats.releases += heldBefore - holding();
          break;
      }
    }

    // ---- after the sequence: the gateway and the model agree ----
    const verifyStarted = performance.now();
    const verify = await inject('GET', '/admin/ledger/verify', adminHeaders);
    stats.verifyMs += performance.now() - verifyStarted;
    assert.deepEqual(verify.json().mismatches, []);
    assert.equal(verify.json().ok, true);

    for (const seller of sellers) {
      const res = await inject('GET', '/api/public/balance', seller.headers);
      assert.equal(res.statusCode, 200, res.body);
      const b = res.json();
      assert.equal(b.total, b.available + b.blocked, 'total = available + blocked');
      assert.deepEqual(b, model.balance(seller.id), `balance of seller ${seller.id}`);
      if (b.available < 0) stats.negativeAvailable++;
    }

    const ids = sellers.map((s) => s.id);
    const accounts = await gw.ctx.db.query<{ seller_id: unknown; account: string; total: unknown }>(`
      SELECT p.seller_id, l.account, sum(l.amount)::bigint AS total
      FROM journal_lines l JOIN postings p ON p.id = l.posting_id
      WHERE p.seller_id = ANY($1::bigint[]) GROUP BY p.seller_id, l.account`, [ids]);
    const actual = new Map<string, number>();
    for (const r of accounts.rows) actual.set(`${Number(r.seller_id)}:${r.account}`, Number(r.total));
    for (const id of ids) {
      const t = model.tally(id);
      const got = (account: string) => actual.get(`${id}:${account}`) ?? 0;
      assert.deepEqual(
        { available: got('available'), blocked: got('blocked'), fee_revenue: got('fee_revenue'), dispute_losses: got('dispute_losses'), customer_funds: got('customer_funds'), payouts: got('payouts') },
        { available: t.available, blocked: t.blocked, fee_revenue: t.feeRevenue, dispute_losses: t.disputeLosses, customer_funds: t.customerFunds, payouts: t.payouts },
        `platform accounts of seller ${id}`);
    }

    if (saleIds.length > 0) {
      const funds = await gw.ctx.db.query<{ transaction_id: unknown; total: unknown }>(`
        SELECT p.transaction_id, sum(l.amount)::bigint AS total
        FROM journal_lines l JOIN postings p ON p.id = l.posting_id
        WHERE l.account = 'customer_funds' AND p.transaction_id = ANY($1::bigint[]) GROUP BY p.transaction_id`, [saleIds]);
      const byId = new Map(funds.rows.map((r) => [Number(r.transaction_id), Number(r.total)]));
      for (const id of saleIds) {
        const sale = model.sale(id);
        if (sale.status === 'ESTORNADO') assert.equal(byId.get(id) ?? 0, 0, `ESTORNADO sale ${id}: customer_funds nets to zero`);
        assert.equal(byId.get(id) ?? 0, model.expectedCustomerFunds(id), `customer_funds of sale ${id} (${sale.status})`);
      }
      const rows = await gw.ctx.db.query<{ id: unknown; status: string; system_fee: unknown; reserve_amount: unknown; net_amount: unknown }>(
        'SELECT id, status, system_fee, reserve_amount, net_amount FROM transactions WHERE id = ANY($1::bigint[])', [saleIds]);
      assert.equal(rows.rows.length, saleIds.length);
      for (const r of rows.rows) {
        const sale = model.sale(Number(r.id));
        assert.equal(r.status, sale.status, `status of sale ${sale.id}`);
        const split = r.system_fee === null ? null : { systemFee: Number(r.system_fee), reserveAmount: Number(r.reserve_amount), netAmount: Number(r.net_amount) };
        assert.deepEqual(split, sale.split, `split of sale ${sale.id}`);
      }
    }
  }

  test('the model\'s own arithmetic matches the contract\'s worked examples', () => {
    assert.equal(bpHalfEven(15000, 199), 298); // 298.5 → even
    assert.equal(bpHalfEven(15000, 499), 748); // 748.5 → even
    assert.equal(bpHalfEven(14215, 1000), 1422); // 1421.5 → even
    assert.equal(bpHalfEven(25, 2000), 5); // 5.0
    assert.equal(bpHalfEven(5, 5000), 2); // 2.5 → 2
    assert.equal(bpHalfEven(7, 5000), 4); // 3.5 → 4
    assert.equal(bpHalfEven(10001, 299), 299); // 299.0299
    assert.deepEqual(splitOf(15000, { fixedCents: 0, percentBasisPoints: 199 }, 0), { systemFee: 298, reserveAmount: 0, netAmount: 14702 });
    assert.deepEqual(splitOf(15000, { fixedCents: 49, percentBasisPoints: 499 }, 1000), { systemFee: 797, reserveAmount: 1420, netAmount: 12783 });
    assert.deepEqual(splitOf(100, { fixedCents: 349, percentBasisPoints: 0 }, 1000), { systemFee: 100, reserveAmount: 0, netAmount: 0 }, 'the fee is capped at the amount');
  });

  test(`random sequences (${NUM_RUNS} runs, seed ${SEED}): balances, platform accounts and statuses equal the model`, async (t) => {
    const started = performance.now();
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => { runs++; await runScenario(scenario); }),
      { numRuns: NUM_RUNS, seed: SEED, includeErrorInReport: true },
    );
    const ms = performance.now() - started;
    t.diagnostic(`moves: ${[...stats.moved].sort().map(([k, v]) => `${k} ${v}`).join(', ')}; repeats ${stats.noop}; refused ${stats.refused}; reserve releases ${stats.releases}; sellers ending with negative available ${stats.negativeAvailable}; cashouts created ${stats.cashouts}; verify ${(stats.verifyMs / 1000).toFixed(1)} s`);
    t.diagnostic(`${runs} sequences in ${(ms / 1000).toFixed(1)} s (${(ms / runs).toFixed(1)} ms per sequence) on ${onPostgres ? 'PostgreSQL' : 'PGlite'}`);
  });
});
