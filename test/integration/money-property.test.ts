/**
 * Property test of the money movements: random sequences of sales, events (legal or not), cashouts
 * and their events, payouts through the embedded PSP (answered, refused, failed, unavailable, answers
 * lost as a crash loses them, callbacks dropped, money returned), fee schedule patches and the passing of time, run against the gateway and
 * against the independent model in test/helpers/money-model.ts (written from CONTRACT §5/§6, not
 * from src/). After every sequence the ledger must verify, and every balance and platform account
 * must equal the model.
 *
 * Provider facts (CONTRACT §14), MED 2.0 infractions among them (§11.5), go through the one apply
 * step against the independent model in test/helpers/fact-model.ts; after every sequence each fact's
 * state, and each infraction's recorded status, must equal the model's.
 *
 * One gateway for the whole file; every sequence gets three fresh sellers, and the clock goes back
 * to the same start (so card expiry dates stay valid whatever the sequences before did).
 *
 * PROPERTY_RUNS sets the number of sequences (default 200; CI runs 1000 on both databases), and
 * PROPERTY_SEED replays a run: the seed is new every run and printed at the start and in the report.
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { Fact, InfractionStatus } from '../../src/domain/provider-facts.ts';
import { applyProviderFact } from '../../src/providers/events/apply-fact.ts';
import { reserveReleaseJob } from '../../src/transactions/jobs.ts';
import { requestRefund, settleRefund } from '../../src/transactions/refund-moves.ts';
import { onPostgres } from '../helpers/databases.ts';
import { FactModel, type ModelFact } from '../helpers/fact-model.ts';
import { allows, EVENT_TABLE, EVENTS, METHODS, type Method, type Status, type TxEvent } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import {
  bpHalfEven,
  CASHOUT_EVENT_TABLE,
  type CashoutEvent,
  DAY_MS,
  defaultSchedule,
  type ModelCashout,
  type ModelSale,
  MoneyModel,
  type SchedulePatch,
  saleBody,
  splitOf,
} from '../helpers/money-model.ts';

/** Sequences per run: PROPERTY_RUNS (CI: 1000 on both databases), else a quicker default for a developer's `npm test`. */
const NUM_RUNS = positiveInteger('PROPERTY_RUNS', 200);
/** A new seed every run, printed; PROPERTY_SEED (and PROPERTY_PATH, from a failure's report) replays one. */
const SEED = process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : Math.floor(Math.random() * 0x7fffffff);
const PATH = process.env.PROPERTY_PATH || undefined;
if (!Number.isSafeInteger(SEED)) throw new Error(`PROPERTY_SEED must be an integer, got ${process.env.PROPERTY_SEED}`);
console.log(
  `money property: ${NUM_RUNS} runs, seed ${SEED} (replay with PROPERTY_SEED=${SEED}${PATH ? ` PROPERTY_PATH=${PATH}` : ''}) on ${onPostgres ? 'PostgreSQL' : 'PGlite'}`,
);

function positiveInteger(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${text}`);
  return n;
}

const START = Date.parse('2026-03-02T12:00:00.000Z');
let now = START;

/**
 * What the sequences actually did, reported at the end so a weak generator shows: every transaction
 * event and cashout event that moved (by kind), and the other outcomes.
 */
const applied = new Map<string, number>();
const count = (key: string, n = 1) => {
  if (n > 0) applied.set(key, (applied.get(key) ?? 0) + n);
};
const stats = { negativeAvailable: 0, verifyMs: 0, steps: 0 };

// ---- operations ----

type Op =
  | { kind: 'sale'; seller: number; method: Method; amount: number }
  /** any: one of all 15 events; legal: one the model allows; money: an allowed one that keeps the sale alive, when there is one. */
  | { kind: 'event'; sale: number; mode: 'any' | 'legal' | 'money'; pick: number }
  /**
   * One step towards `target`: on the sale (scanning from the `sale`-th newest) that is fewest legal
   * moves away from a status where `target` applies, the first move of that shortest path (the target
   * itself when it applies now), repeated up to `steps` times. When no sale can reach `target`, a
   * `fresh` sale of a method that can is created first. Without it, events three moves deep
   * (MED_LOST, CHARGEBACK_REVERTED) were rare.
   */
  | { kind: 'toward'; target: TxEvent; sale: number; steps: number; fresh: { seller: number; amount: number; pick: number } }
  | { kind: 'sellerSchedule'; seller: number; patch: SchedulePatch | null }
  | { kind: 'platformSchedule'; patch: SchedulePatch }
  | { kind: 'tick'; ms: number }
  /**
   * percent of the available balance (per the model), in whole reais, at least R$ 100, of `seller`
   * or, when null, of the seller with the most available (so cashouts mostly have money to move);
   * then `follow` legal moves of the new cashout (so cashouts get to COMPLETED or REJECTED).
   */
  | { kind: 'cashout'; seller: number | null; percent: number; follow: number; pick: number }
  /**
   * legal: a move the model allows, on the first cashout (from the `cashout`-th newest) that has one,
   * and a second on the same cashout when `twice` (so cashouts get to COMPLETED or REJECTED); any:
   * `event` on that cashout.
   */
  | { kind: 'cashoutEvent'; cashout: number; mode: 'any' | 'legal'; event: CashoutEvent; pick: number; twice: boolean }
  /**
   * A refund (CONTRACT §5a) of the first PAGO sale without a pending refund (from the `sale`-th
   * newest): all that is left, `part` percent of it, or one cent more than it (422). Through the
   * seller API (the sandbox settles it at once), or recorded PENDING as a PIX devolução is, then
   * settled SUCCEEDED or FAILED, or left PENDING for a later `settleRefund`.
   */
  | {
      kind: 'refund';
      sale: number;
      amount: 'all' | 'part' | 'over';
      part: number;
      via: 'api' | 'provider';
      settle: 'SUCCEEDED' | 'FAILED' | 'later';
      /** Then a dispute of what is left (without it, disputes after a partial refund were rare): opened, lost, or won. */
      dispute: 'none' | 'open' | 'lose' | 'win';
    }
  | { kind: 'settleRefund'; sale: number; outcome: 'SUCCEEDED' | 'FAILED' }
  /**
   * A provider fact (CONTRACT §14) about a sale (the first, from the `sale`-th newest, of a method the
   * fact concerns), through the one apply step, out of order as providers send them: a dispute step
   * before its payment or after a refund, an authorisation of the sale's amount or of another, or a
   * fact sent again. Held facts are tried again whenever their sale moves (the job, after every op).
   */
  | { kind: 'fact'; sale: number; fact: FactOp; pick: number }
  /**
   * A MED 2.0 infraction (CONTRACT §11.5) as the PIX PSP lists it, through the one apply step. `open`:
   * a new one along INFRACTION_PATHS[`path`] on a PIX sale (or, when `boleto`, a boleto paid by Pix,
   * which MED cannot take) that is paid (two times in three) or the newest (paid or not), a `fresh`
   * sale first when there is none; `next`: the next steps of one already open (from the `sale`-th
   * newest with steps left; none: `open`), after a refund of the sale left PENDING when `pending` (all
   * that is left, one time in four, else half). Then `follow` more steps. `jump`: the step after the next is
   * sent first, so the one it overtook comes late. `repeat`: a status sent again; `unknown`: an
   * infraction of a Pix no sale of this installation has.
   */
  | {
      kind: 'infraction';
      action: 'open' | 'next' | 'repeat' | 'unknown';
      sale: number;
      path: number;
      follow: number;
      jump: boolean;
      boleto: boolean;
      pending: boolean;
      pick: number;
      fresh: { seller: number; amount: number; pay: boolean };
    }
  /**
   * A round of the payout job (CONTRACT §11.3) for one cashout no operator has moved (the first, from
   * the `cashout`-th newest, that is PENDING or PROCESSING), the embedded PSP armed first when it has
   * no Pix for it yet: it answers, refuses (400), takes the Pix and fails it later (NAO_REALIZADO), is
   * unavailable (503), or takes the Pix and loses the answer (a reset: what a crash after the send
   * leaves). Then the PSP settles what it holds; its callbacks are `dropped` or delivered, so some
   * outcomes wait for a later round to be read back. With no such cashout, a new one of `percent` of
   * the richest seller's available balance first.
   */
  | { kind: 'payout'; cashout: number; psp: PspFate; dropCallbacks: boolean; percent: number }
  /** The receiver's bank returns `percent` of what is left of a paid payout (at least a cent). */
  | { kind: 'payoutReturn'; cashout: number; percent: number };

type PspFate = 'answer' | 'refuse' | 'fail' | 'unavailable' | 'lost';
const PSP_FATES: readonly PspFate[] = ['answer', 'answer', 'refuse', 'fail', 'unavailable', 'lost', 'lost'];

type FactOp = 'opened' | 'reversed' | 'lost' | 'med' | 'authorised' | 'otherAmount' | 'repeat';
const FACT_OPS: readonly FactOp[] = ['opened', 'reversed', 'lost', 'med', 'authorised', 'otherAmount', 'repeat'];

type InfractionStep = InfractionStatus | 'devolucao';
/**
 * An infraction's statuses in the order the PSP lists them; 'devolucao': the MED devolução that takes
 * the money after ACEITA (the `MED` fact). The plain paths twice, so they are the most frequent.
 */
const INFRACTION_PATHS: readonly (readonly InfractionStep[])[] = [
  ['ABERTA', 'EM_DEFESA', 'REJEITADA'],
  ['ABERTA', 'EM_DEFESA', 'REJEITADA'],
  ['ABERTA', 'EM_DEFESA', 'ACEITA', 'devolucao'],
  ['ABERTA', 'EM_DEFESA', 'ACEITA', 'devolucao'],
  ['ABERTA', 'ACEITA', 'devolucao'],
  ['ABERTA', 'CANCELADA'],
  ['ABERTA', 'CANCELADA'],
  ['ABERTA', 'EM_DEFESA', 'CANCELADA'],
  ['ABERTA', 'REJEITADA'],
  // a final status (or the defence) seen without the opening: the PSP listed it after the poll missed the rest
  ['REJEITADA'],
  ['CANCELADA'],
  ['ACEITA', 'devolucao'],
  ['EM_DEFESA', 'ACEITA', 'devolucao'],
  // two decisions: the first stands
  ['ABERTA', 'ACEITA', 'REJEITADA'],
  ['ABERTA', 'REJEITADA', 'ACEITA', 'devolucao'],
];
const INFRACTION_STATUSES: readonly InfractionStatus[] = ['ABERTA', 'EM_DEFESA', 'ACEITA', 'REJEITADA', 'CANCELADA'];
/** Infraction ids, new across the whole file (the gateway is shared by every sequence). */
let infractionSerial = 0;

const cents = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 500 }), weight: 4 }, { arbitrary: fc.integer({ min: 0, max: 600_000 }), weight: 1 });
const basisPoints = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 1000 }), weight: 4 },
  { arbitrary: fc.integer({ min: 0, max: 10_000 }), weight: 1 },
);
const methodFee = fc.record({ fixedCents: cents, percentBasisPoints: basisPoints }, { requiredKeys: [] });
const patchArb: fc.Arbitrary<SchedulePatch> = fc.record(
  {
    pix: methodFee,
    boleto: methodFee,
    creditCard: methodFee,
    debitCard: methodFee,
    reserveBasisPoints: fc.oneof(fc.constant(1000), fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 10_000 })),
    reserveDays: fc.integer({ min: 0, max: 60 }),
    chargebackFineCents: fc.oneof(fc.integer({ min: 0, max: 5000 }), cents),
    cashout: fc.record({ fixedCents: cents, variableBasisPoints: basisPoints }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
/** A patch that always holds a reserve back for a number of days a tick can pass (so reserves get released). */
const reservePatchArb: fc.Arbitrary<SchedulePatch> = fc
  .tuple(
    patchArb,
    fc.record({
      reserveBasisPoints: fc.oneof(fc.constant(1000), fc.integer({ min: 1, max: 3000 })),
      reserveDays: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 })),
    }),
  )
  .map(([patch, reserve]) => ({ ...patch, ...reserve }));
const sellerPatchArb: fc.Arbitrary<SchedulePatch | null> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: patchArb, weight: 1 },
  { arbitrary: reservePatchArb, weight: 2 },
);
// Multiples of 50 make half-cent ties frequent (e.g. PIX 15000 × 199 bp = 298.5).
const amountArb = fc.oneof(
  fc.integer({ min: 100, max: 500_000 }),
  fc.integer({ min: 2, max: 10_000 }).map((k) => k * 50),
);
/** Counted from the newest: mostly the newest, so one sale often gets far (e.g. PAGO → MED → ESTORNADO). */
const saleRefArb = fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, { arbitrary: fc.nat(), weight: 1 });
/** Seller 0 most often, so one seller's balance grows enough for cashouts, refunds against released money, etc. */
const sellerArb = fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.integer({ min: 0, max: 2 }), weight: 2 });
const CASHOUT_EVENTS: readonly CashoutEvent[] = ['PROCESSING', 'COMPLETED', 'REJECTED', 'CANCELLED'];

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({ kind: fc.constant('sale' as const), seller: sellerArb, method: fc.constantFrom(...METHODS), amount: amountArb }),
    weight: 5,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('event' as const),
      sale: saleRefArb,
      mode: fc.constantFrom('any' as const, 'legal' as const, 'money' as const, 'money' as const),
      pick: fc.nat(),
    }),
    weight: 5,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('toward' as const),
      target: fc.constantFrom(...EVENTS),
      sale: saleRefArb,
      steps: fc.oneof({ arbitrary: fc.constant(1), weight: 2 }, { arbitrary: fc.integer({ min: 2, max: 3 }), weight: 1 }),
      fresh: fc.record({ seller: sellerArb, amount: amountArb, pick: fc.nat() }),
    }),
    weight: 9,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('sellerSchedule' as const),
      seller: sellerArb,
      patch: fc.option(fc.oneof(patchArb, reservePatchArb), { freq: 6 }),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('platformSchedule' as const), patch: patchArb }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('cashout' as const),
      seller: fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: sellerArb, weight: 1 }),
      percent: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 100 }), weight: 4 }, { arbitrary: fc.integer({ min: 1, max: 130 }), weight: 1 }),
      follow: fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, { arbitrary: fc.integer({ min: 1, max: 2 }), weight: 3 }),
      pick: fc.nat(),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('cashoutEvent' as const),
      cashout: saleRefArb,
      mode: fc.oneof({ arbitrary: fc.constant('legal' as const), weight: 3 }, { arbitrary: fc.constant('any' as const), weight: 1 }),
      event: fc.constantFrom(...CASHOUT_EVENTS),
      pick: fc.nat(),
      twice: fc.boolean(),
    }),
    weight: 8,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      sale: saleRefArb,
      amount: fc.oneof(
        { arbitrary: fc.constant('part' as const), weight: 4 },
        { arbitrary: fc.constant('all' as const), weight: 2 },
        { arbitrary: fc.constant('over' as const), weight: 1 },
      ),
      part: fc.integer({ min: 1, max: 99 }),
      via: fc.constantFrom('api' as const, 'provider' as const),
      dispute: fc.constantFrom('none' as const, 'none' as const, 'open' as const, 'lose' as const, 'win' as const),
      settle: fc.oneof(
        { arbitrary: fc.constant('SUCCEEDED' as const), weight: 3 },
        { arbitrary: fc.constant('FAILED' as const), weight: 1 },
        { arbitrary: fc.constant('later' as const), weight: 2 },
      ),
    }),
    weight: 5,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('settleRefund' as const),
      sale: saleRefArb,
      outcome: fc.oneof({ arbitrary: fc.constant('SUCCEEDED' as const), weight: 3 }, { arbitrary: fc.constant('FAILED' as const), weight: 1 }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('fact' as const), sale: saleRefArb, fact: fc.constantFrom(...FACT_OPS), pick: fc.nat() }),
    weight: 6,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('infraction' as const),
      action: fc.oneof(
        { arbitrary: fc.constant('open' as const), weight: 4 },
        { arbitrary: fc.constant('next' as const), weight: 5 },
        { arbitrary: fc.constant('repeat' as const), weight: 1 },
        { arbitrary: fc.constant('unknown' as const), weight: 1 },
      ),
      sale: saleRefArb,
      path: fc.nat(),
      follow: fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, { arbitrary: fc.integer({ min: 1, max: 3 }), weight: 2 }),
      jump: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, { arbitrary: fc.constant(true), weight: 1 }),
      boleto: fc.oneof({ arbitrary: fc.constant(false), weight: 6 }, { arbitrary: fc.constant(true), weight: 1 }),
      pending: fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, { arbitrary: fc.constant(true), weight: 1 }),
      pick: fc.nat(),
      fresh: fc.record({
        seller: sellerArb,
        amount: amountArb,
        pay: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }),
      }),
    }),
    weight: 7,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('payout' as const),
      cashout: saleRefArb,
      psp: fc.constantFrom(...PSP_FATES),
      dropCallbacks: fc.oneof({ arbitrary: fc.constant(false), weight: 2 }, { arbitrary: fc.constant(true), weight: 1 }),
      percent: fc.integer({ min: 1, max: 100 }),
    }),
    weight: 6,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('payoutReturn' as const),
      cashout: saleRefArb,
      percent: fc.oneof(fc.constant(100), fc.integer({ min: 1, max: 100 })),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('tick' as const),
      ms: fc.oneof(
        fc.integer({ min: 0, max: 45 }).map((d) => d * DAY_MS),
        fc.integer({ min: 0, max: 45 * DAY_MS }),
      ),
    }),
    weight: 3,
  },
);

const DEAD_ENDS: readonly TxEvent[] = ['CANCELLED', 'EXPIRED', 'DECLINED', 'PROCESSING_ERROR'];

/** The facts about a sale the `fact` op sends (infractions have their own op). */
type SaleFact = Exclude<ModelFact, { kind: 'INFRACTION' }>;

function modelFactOf(op: Exclude<FactOp, 'repeat'>, sale: ModelSale): SaleFact {
  if (op === 'med') return { kind: 'MED' };
  if (op === 'authorised') return { kind: 'AUTHORISATION', amount: sale.amount };
  if (op === 'otherAmount') return { kind: 'AUTHORISATION', amount: sale.amount + 1 };
  return { kind: 'CHARGEBACK', step: op };
}

/** The model's fact as a connector hands it to the apply step, naming the sale by our reference. */
function gatewayFactOf(fact: SaleFact, sale: ModelSale): Fact {
  const ref = { ids: [], saleId: sale.id, referenceSuffices: true };
  if (fact.kind === 'MED') return { kind: 'MED', sale: ref, devolucaoId: `med${sale.id}`, amount: sale.amount };
  if (fact.kind === 'CHARGEBACK') return { kind: 'CHARGEBACK', sale: ref, step: fact.step };
  return {
    kind: 'AUTHORISATION',
    sale: ref,
    paymentId: `pay${sale.id}`,
    amount: fact.amount,
    currency: 'BRL',
    authorised: true,
    captureByGateway: false,
  };
}

const scenarioArb = fc.record({
  // each seller's own schedule before anything happens (none: follows the platform); mostly with a reserve
  initial: fc.tuple(sellerPatchArb, sellerPatchArb, sellerPatchArb),
  // 'max': lengths spread over the whole range (fast-check's default size keeps arrays near 10 at most)
  ops: fc.array(opArb, { minLength: 1, maxLength: 30, size: 'max' }),
});

/**
 * The first move of a shortest path of legal moves (CONTRACT §6, by breadth-first search over
 * EVENT_TABLE) from `status` to a status where `target` applies, and the path's length; null when
 * `target` cannot be reached. Distance 0: `target` itself applies now.
 */
function stepToward(method: Method, status: Status, target: TxEvent): { event: TxEvent; distance: number } | null {
  const applies = (s: Status) => allows(target, s, method);
  if (applies(status)) return { event: target, distance: 0 };
  const firstMove = new Map<Status, TxEvent>([[status, target]]);
  let frontier: Status[] = [status];
  for (let distance = 1; frontier.length > 0 && distance <= EVENTS.length; distance++) {
    const next: Status[] = [];
    for (const from of frontier) {
      for (const event of EVENTS) {
        if (!allows(event, from, method)) continue;
        const to = EVENT_TABLE[event].to;
        if (firstMove.has(to)) continue;
        const first = from === status ? event : firstMove.get(from)!;
        if (applies(to)) return { event: first, distance };
        firstMove.set(to, first);
        next.push(to);
      }
    }
    frontier = next;
  }
  return null;
}

describe('money property: random sequences against the independent model', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway({ clock: { now: () => new Date(now) } });
    // The PSP calls the gateway back (payout outcomes, returns): it listens, as it would in production.
    gw.ctx.providers.listeningAt(await gw.app.listen({ port: 0, host: '127.0.0.1' }));
  });
  after(async () => {
    await gw.close();
  });

  const inject = (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string>, payload?: unknown) =>
    gw.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  async function runReserveJob(): Promise<void> {
    for (let i = 0; i < 1000; i++) if ((await reserveReleaseJob.run(gw.ctx)) === 0) return;
    throw new Error('reserve job never settled');
  }

  async function runScenario(scenario: { initial: (SchedulePatch | null)[]; ops: Op[] }): Promise<void> {
    now = START;
    // The gateway is shared: a fact an earlier sequence left held (its sale never moves again) would be
    // tried by every later run of the held-facts job, each run the slower for every sequence before.
    // Left to the operator instead, so the job tries only this sequence's facts.
    await gw.ctx.db.query(
      "UPDATE provider_events SET state = 'needs_operator', reason = 'left held by an earlier property sequence' WHERE state = 'held'",
    );
    const model = new MoneyModel();
    const facts = new FactModel(model);
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
    /** Cashouts an operator moved (admin events), and those the payout job took: never both. */
    const operated = new Set<number>();
    const paidOut = new Set<number>();
    /** What the PSP holds for a cashout once it took its Pix: settled made or not made. */
    const atPsp = new Map<number, 'REALIZADO' | 'NAO_REALIZADO'>();
    /** Newest first, starting `offset` in (wrapping): how the ops refer to sales and cashouts. */
    const fromNewest = <T>(ids: number[], offset: number, get: (id: number) => T): T[] =>
      ids.map((_, i) => get(ids[ids.length - 1 - ((offset + i) % ids.length)]!));

    async function createSale(sellerIndex: number, method: Method, amount: number): Promise<void> {
      const seller = sellers[sellerIndex]!;
      const res = await inject('POST', '/api/sales', seller.headers, saleBody(method, amount));
      assert.equal(res.statusCode, 201, res.body);
      const id = res.json().sale.id as number;
      model.createSale(id, seller.id, method, amount);
      saleIds.push(id);
      count(`sale created (${method})`);
    }

    /** Sends `event` for `sale` to the gateway and the model; the gateway must answer as the model says. */
    async function sendEvent(sale: ModelSale, event: TxEvent): Promise<void> {
      const wasPaid = sale.split !== null;
      const heldBefore = sale.reserveHeld;
      const partlyRefunded = sale.refunded > 0;
      const outcome = model.applyEvent(sale.id, event, now);
      if (outcome === 'moved') count(event);
      else count(`transaction event ${outcome}`);
      if (outcome === 'moved' && partlyRefunded) count(`${event} after a partial refund`);
      if (outcome === 'moved' && (event === 'MED_WON' || event === 'CHARGEBACK_REVERTED') && heldBefore > 0 && sale.reserveHeld === 0)
        count('reserve released on the return to PAGO');
      const res = await inject('POST', `/admin/transactions/${sale.id}/events`, adminHeaders, { event });
      const label = `${event} on sale ${sale.id} (${sale.method})`;
      if (outcome === 'refused') {
        assert.equal(res.statusCode, 409, `${label}: ${res.body}`);
        assert.equal(res.json().errorType, 'INVALID_TRANSITION', `${label}: ${res.body}`);
      } else {
        assert.equal(res.statusCode, 200, `${label}: ${res.body}`);
        const body = res.json();
        assert.equal(body.status, sale.status, label);
        if (!wasPaid && sale.split) {
          assert.deepEqual(
            { systemFee: body.systemFee, reserveAmount: body.reserveAmount, netAmount: body.netAmount },
            sale.split,
            `${label}: split`,
          );
        }
      }
    }

    /** The cashout events the model allows; from PENDING, PROCESSING three times in four (so cashouts get as far as COMPLETED or REJECTED). */
    const legalCashoutEvents = (c: ModelCashout): readonly CashoutEvent[] =>
      c.status === 'PENDING'
        ? ['PROCESSING', 'PROCESSING', 'PROCESSING', 'CANCELLED']
        : CASHOUT_EVENTS.filter((e) => CASHOUT_EVENT_TABLE[e].from.includes(c.status));

    /** Sends `event` for cashout `c` to the gateway and the model; the gateway must answer as the model says. */
    async function sendCashoutEvent(c: ModelCashout, event: CashoutEvent): Promise<void> {
      operated.add(c.id);
      const outcome = model.applyCashoutEvent(c.id, event);
      count(outcome === 'moved' ? `cashout ${event}` : `cashout event ${outcome}`);
      const res = await inject('POST', `/admin/cashouts/${c.id}/events`, adminHeaders, { event });
      if (outcome === 'refused') {
        assert.equal(res.statusCode, 409, `${event} on cashout ${c.id}: ${res.body}`);
        assert.equal(res.json().errorType, 'INVALID_TRANSITION', `${event} on cashout ${c.id}: ${res.body}`);
      } else {
        assert.equal(res.statusCode, 200, `${event} on cashout ${c.id}: ${res.body}`);
        assert.equal(res.json().status, c.status, `${event} on cashout ${c.id}`);
      }
    }

    /** Refunds `sale` as the op says, on the gateway and the model; the gateway must answer as the model says. */
    async function refund(sale: ModelSale, amount: number | null, via: 'api' | 'provider', settle: 'SUCCEEDED' | 'FAILED' | 'later') {
      const label = `refund of ${amount ?? 'all'} on sale ${sale.id} (${sale.status}, ${sale.refunded} refunded of ${sale.amount})`;
      // A sale an infraction named a Pix for is refunded by a devolução of that Pix, which the embedded PSP never saw: settled as its answer would.
      if (via === 'api' && e2es.has(sale.id)) [via, settle] = ['provider', 'SUCCEEDED'];
      const expected = model.requestRefund(sale.id, amount);
      count(`refund request ${expected}`);
      if (via === 'api') {
        const seller = sellers.find((s) => s.id === sale.sellerId)!;
        const res = await inject('POST', `/api/transactions/${sale.id}/refund`, seller.headers, amount === null ? {} : { amount });
        const answer = { requested: [201, undefined], refused: [409, 'INVALID_TRANSITION'], exceeds: [422, 'REFUND_EXCEEDS_AMOUNT'] }[expected];
        assert.deepEqual([res.statusCode, res.json().errorType], answer, `${label}: ${res.body}`);
        if (expected !== 'requested') return;
        assert.equal(res.json().status, 'SUCCEEDED', `${label}: the sandbox refunds at once`);
        return settled(sale, 'SUCCEEDED');
      }
      const codes = { refused: 'INVALID_TRANSITION', exceeds: 'REFUND_EXCEEDS_AMOUNT' } as const;
      const made = await requestRefund(gw.ctx.db, sale.id, { amount, requestedBy: 'PLATFORM' }, new Date(now));
      if (!made.ok && (expected === 'requested' || made.refusal.code !== codes[expected])) throw new Error(`${label}: ${made.refusal.message}`);
      const row = made.ok ? made.value : null;
      assert.equal(row === null, expected !== 'requested', `${label}: requested ${expected}`);
      if (row && settle !== 'later') {
        await settleRefund(
          gw.ctx.db,
          Number(row.id),
          settle === 'FAILED' ? { status: 'FAILED', reason: 'test' } : { status: 'SUCCEEDED' },
          new Date(now),
        );
        return settled(sale, settle);
      }
    }

    function settled(sale: ModelSale, outcome: 'SUCCEEDED' | 'FAILED'): void {
      assert.ok(model.settleRefund(sale.id, outcome), `sale ${sale.id}: a refund was pending`);
      count(`refund ${outcome}${outcome === 'SUCCEEDED' ? (sale.status === 'ESTORNADO' ? ' (final)' : ' (partial)') : ''}`);
    }

    const sentFacts: { identity: string; saleId: number; fact: SaleFact; provider: 'sandbox' | 'api-pix' }[] = [];
    /** Sends a provider fact to the gateway's apply step and to the model; the gateway must end it in the model's state. */
    async function sendFact(op: Extract<Op, { kind: 'fact' }>): Promise<void> {
      if (op.fact === 'repeat' && sentFacts.length === 0) return;
      const again = op.fact === 'repeat' ? sentFacts[op.pick % sentFacts.length] : undefined;
      const methods: readonly Method[] = op.fact === 'med' ? ['PIX'] : ['CREDIT_CARD', 'DEBIT_CARD'];
      const candidates = fromNewest(saleIds, op.sale, (id) => model.sale(id)).filter((s) => methods.includes(s.method));
      // Half the time a paid sale, where a dispute can apply; else the newest, paid or not (out of order).
      const paid = op.pick % 2 === 0 ? candidates.find((s) => s.split !== null) : undefined;
      const sale = again ? model.sale(again.saleId) : (paid ?? candidates[0]);
      if (!sale) return;
      const fact = again?.fact ?? modelFactOf(op.fact as Exclude<FactOp, 'repeat'>, sale);
      const sent = again ?? {
        identity: `fact-${sale.id}-${sentFacts.length}`,
        saleId: sale.id,
        fact,
        provider: sale.method === 'PIX' ? 'api-pix' : 'sandbox',
      };
      const label = `${JSON.stringify(fact)} on sale ${sale.id} (${sale.method} ${sale.status}, refund pending ${sale.pendingRefund})`;
      const heldBefore = facts.heldCount();
      const expected = facts.send(sent.identity, sale.id, fact, now);
      count('provider fact held, then taken at once by a later fact', Math.max(0, heldBefore - facts.heldCount()));
      const got = await applyProviderFact(gw.ctx, {
        provider: sent.provider,
        identity: sent.identity,
        externalReference: `sale-${sale.id}`,
        fact: gatewayFactOf(fact, sale),
      });
      assert.equal(got.state, expected, label);
      if (!again) sentFacts.push(sent);
      count(`provider fact ${op.fact} ${expected}`);
    }

    /** The Pix that paid each sale an infraction names: set on the sale when its first infraction comes (sales paid by an operator event have none). */
    const e2es = new Map<number, string>();
    async function e2eOf(sale: ModelSale): Promise<string> {
      let e2e = e2es.get(sale.id);
      if (e2e === undefined) {
        e2e = `E00000000202603021200${String(sale.id).padStart(11, '0')}`;
        const set = await gw.ctx.db.query('UPDATE transactions SET pix_end_to_end_id = $2 WHERE id = $1 AND pix_end_to_end_id IS NULL', [
          sale.id,
          e2e,
        ]);
        assert.equal(set.rowCount, 1, `sale ${sale.id}: its Pix named`);
        e2es.set(sale.id, e2e);
      }
      return e2e;
    }

    interface OpenInfraction {
      id: string;
      saleId: number;
      e2e: string;
      steps: readonly InfractionStep[];
      sent: boolean[];
    }
    const infractions: OpenInfraction[] = [];
    /** Every infraction fact sent (for repeats and the final check of states), the devoluções among them. */
    const infractionFacts: { identity: string; saleId: number; model: ModelFact; fact: Fact; ref: string }[] = [];
    const pixAccount = gw.ctx.providers.rail('PIX').account.id;

    /** Sends one fact of an infraction to the apply step and to the model; the gateway must end it in the model's state. */
    async function sendInfractionFact(sent: (typeof infractionFacts)[number], again: boolean): Promise<void> {
      const sale = sent.saleId > 0 ? model.sale(sent.saleId) : null;
      const label = `${sent.identity} on ${sale ? `sale ${sale.id} (${sale.method} ${sale.status}, refund pending ${sale.pendingRefund})` : 'no sale'}`;
      const [statusBefore, heldBefore, lateBefore] = [sale?.status, facts.heldCount(), facts.lateWords];
      const expected = facts.send(sent.identity, sent.saleId, sent.model, now);
      const got = await applyProviderFact(gw.ctx, { provider: 'api-pix', identity: sent.identity, externalReference: sent.ref, fact: sent.fact });
      assert.equal(got.state, expected, label);
      if (!again && sent.model.kind === 'INFRACTION' && !sent.model.known) assert.equal(got.reason, "not this installation's", label);
      if (!again) infractionFacts.push(sent);
      const what = sent.model.kind === 'INFRACTION' ? (sent.model.known ? sent.model.status : 'of a Pix no sale has') : 'devolução';
      count(again ? 'infraction fact repeated' : `infraction ${what} ${expected}`);
      count('infraction late word', facts.lateWords - lateBefore);
      count('provider fact held, then taken at once by a later fact', Math.max(0, heldBefore - facts.heldCount()));
      if (sale && sale.status !== statusBefore) count(`infraction moved a sale ${statusBefore} → ${sale.status}`);
      if (sale && expected === 'held' && sale.pendingRefund > 0) count('infraction held behind a refund pending');
      const decided = sent.model.kind === 'INFRACTION' && (sent.model.status === 'REJEITADA' || sent.model.status === 'CANCELADA');
      if (decided && !again && statusBefore === 'MED' && sale?.status === 'MED')
        count('infraction decided, the sale left in MED (another undecided, or the first decision stands)');
    }

    /** Sends step `index` of infraction `inf`: a status, or the devolução that takes the money. */
    async function sendStep(inf: OpenInfraction, index: number): Promise<void> {
      inf.sent[index] = true;
      const step = inf.steps[index]!;
      const sale = model.sale(inf.saleId);
      const ref = { ids: [inf.e2e], saleId: null, referenceSuffices: false };
      if (step === 'devolucao') {
        const fact: Fact = { kind: 'MED', sale: ref, devolucaoId: `MED${inf.id}`, amount: sale.amount - sale.refunded };
        return sendInfractionFact({ identity: `devolucao/MED${inf.id}`, saleId: sale.id, model: { kind: 'MED' }, fact, ref: inf.e2e }, false);
      }
      const fact: Fact = {
        kind: 'INFRACTION',
        sale: ref,
        infractionId: inf.id,
        endToEndId: inf.e2e,
        account: pixAccount,
        status: step,
        amount: sale.amount,
        reason: 'Golpe relatado pelo pagador',
        openedAt: step === 'ABERTA' ? new Date(now).toISOString() : null,
        deadline: null,
        defense: step === 'EM_DEFESA' ? 'Entregue ao comprador' : null,
      };
      const modelFact: ModelFact = { kind: 'INFRACTION', infractionId: inf.id, status: step, known: true };
      await sendInfractionFact({ identity: `infracao/${inf.id}:${step}`, saleId: sale.id, model: modelFact, fact, ref: inf.id }, false);
    }

    /** The `infraction` op: see its type. */
    async function infraction(op: Extract<Op, { kind: 'infraction' }>): Promise<void> {
      if (op.action === 'repeat' && infractionFacts.length > 0) return sendInfractionFact(infractionFacts[op.pick % infractionFacts.length]!, true);
      if (op.action === 'unknown') {
        const id = `inf${++infractionSerial}`;
        const e2e = `E99999999202603021200${String(infractionSerial).padStart(11, '0')}`;
        const status = INFRACTION_STATUSES[op.pick % INFRACTION_STATUSES.length]!;
        const fact: Fact = {
          kind: 'INFRACTION',
          sale: { ids: [e2e], saleId: null, referenceSuffices: false },
          infractionId: id,
          endToEndId: e2e,
          account: pixAccount,
          status,
          amount: 1000,
          reason: null,
          openedAt: null,
          deadline: null,
          defense: null,
        };
        const modelFact: ModelFact = { kind: 'INFRACTION', infractionId: id, status, known: false };
        return sendInfractionFact({ identity: `infracao/${id}:${status}`, saleId: -1, model: modelFact, fact, ref: id }, false);
      }
      const unsent = (inf: OpenInfraction) => inf.steps.map((_, i) => i).filter((i) => !inf.sent[i]);
      const newest = infractions.map((_, i) => infractions[infractions.length - 1 - ((op.sale + i) % infractions.length)]!);
      let inf = op.action === 'next' ? newest.find((x) => unsent(x).length > 0) : undefined;
      if (!inf) {
        const method: Method = op.boleto ? 'BOLETO' : 'PIX';
        const candidates = fromNewest(saleIds, op.sale, (id) => model.sale(id)).filter((s) => s.method === method);
        let sale = op.pick % 3 === 0 ? candidates[0] : candidates.find((s) => s.status === 'PAGO');
        if (!sale) {
          await createSale(op.fresh.seller, method, op.fresh.amount);
          sale = model.sale(saleIds[saleIds.length - 1]!);
          if (op.fresh.pay) await sendEvent(sale, 'PAYMENT_CONFIRMED');
        }
        if (op.pending && sale.status === 'PAGO' && sale.pendingRefund === 0) {
          const left = sale.amount - sale.refunded;
          await refund(sale, op.pick % 4 === 0 ? null : Math.max(1, Math.floor(left / 2)), 'provider', 'later');
        }
        const steps = INFRACTION_PATHS[op.path % INFRACTION_PATHS.length]!;
        inf = { id: `inf${++infractionSerial}`, saleId: sale.id, e2e: await e2eOf(sale), steps, sent: steps.map(() => false) };
        infractions.push(inf);
        count(`infraction opened on a ${method} sale ${sale.status}`);
        count(`infraction path ${steps.join(' → ')}`);
      }
      for (let i = 0; i <= op.follow; i++) {
        const left = unsent(inf);
        if (left.length === 0) break;
        const jumped = i === 0 && op.jump && left.length > 1;
        if (jumped) count('infraction step sent before the one before it');
        await sendStep(inf, left[jumped ? 1 : 0]!);
      }
    }

    /**
     * A cashout of `percent` of the available balance (per the model), in whole reais, at least R$ 100,
     * of seller `sellerIndex` or, when null, of the richest; the gateway must answer as the model says.
     */
    async function newCashout(sellerIndex: number | null, percent: number): Promise<ModelCashout | null> {
      const richest = sellers.reduce((best, s) => (model.balance(s.id).available > model.balance(best.id).available ? s : best));
      const seller = sellerIndex === null ? richest : sellers[sellerIndex]!;
      const available = model.balance(seller.id).available;
      const amount = Math.max(10_000, Math.min(10_000_000, Math.floor((available * percent) / 100 / 100) * 100));
      const res = await inject('POST', '/api/public/cashout', seller.headers, { amount: (amount / 100).toFixed(2), pixKey: '52998224725' });
      const fees = model.cashoutFees(seller.id, amount);
      const label = `cashout of ${amount} cents by seller ${seller.id} (available ${available}, fees ${fees.total})`;
      if (fees.net <= 0) {
        assert.equal(res.statusCode, 422, `${label}: ${res.body}`);
        assert.equal(res.json().errorType, 'MINIMUM_VALUE', `${label}: ${res.body}`);
        count('cashout refused: MINIMUM_VALUE');
        return null;
      }
      if (amount > available) {
        assert.equal(res.statusCode, 422, `${label}: ${res.body}`);
        assert.equal(res.json().errorType, 'INSUFFICIENT_BALANCE', `${label}: ${res.body}`);
        count('cashout refused: INSUFFICIENT_BALANCE');
        return null;
      }
      assert.equal(res.statusCode, 201, `${label}: ${res.body}`);
      const reais = (c: number) => `${Math.trunc(c / 100)}.${String(c % 100).padStart(2, '0')}`;
      assert.deepEqual(
        { fees: res.json().fees, netAmount: res.json().netAmount },
        { fees: { fixed: reais(fees.fixed), variable: reais(fees.variable), total: reais(fees.total) }, netAmount: reais(fees.net) },
        `${label}: fees`,
      );
      const id = res.json().id as number;
      assert.ok(model.createCashout(id, seller.id, amount), `the model takes ${label}`);
      cashoutIds.push(id);
      count('cashout created');
      return model.cashouts.get(id)!;
    }

    /** One round of the payout job for one cashout; its status must be what the PSP's fate makes it. */
    async function payoutRound(op: Extract<Op, { kind: 'payout' }>): Promise<void> {
      const c =
        fromNewest(cashoutIds, op.cashout, (id) => model.cashouts.get(id)!).find(
          (c) => (c.status === 'PENDING' && !operated.has(c.id)) || (c.status === 'PROCESSING' && paidOut.has(c.id)),
        ) ?? (await newCashout(null, op.percent));
      if (!c) return;
      paidOut.add(c.id);
      const psp = gw.ctx.rails.psp!;
      const held = atPsp.get(c.id);
      // The PSP's Pix, once taken, decides: the round reads it back (409 then a read, or a read).
      let expected: ModelCashout['status'] = held === 'REALIZADO' ? 'COMPLETED' : 'REJECTED';
      if (held === undefined) {
        const fate = { answer: 'REALIZADO', fail: 'NAO_REALIZADO', lost: 'REALIZADO', refuse: undefined, unavailable: undefined } as const;
        const taken = fate[op.psp];
        if (taken) atPsp.set(c.id, taken);
        if (op.psp === 'refuse') psp.failNextSends(1, { status: 400, nome: 'chave_invalida' });
        if (op.psp === 'unavailable') psp.failNextSends(1, { status: 503 });
        if (op.psp === 'fail') psp.rejectNextSends(1);
        if (op.psp === 'lost') psp.loseNextSendAnswers(1, 'reset');
        const settled = taken === 'REALIZADO' ? 'COMPLETED' : 'REJECTED';
        // A dropped callback leaves what the round itself saw: PROCESSING after an answer, PENDING after a lost one.
        const unheard = op.psp === 'lost' ? 'PENDING' : 'PROCESSING';
        expected = op.psp === 'refuse' ? 'REJECTED' : op.psp === 'unavailable' ? 'PENDING' : op.dropCallbacks ? unheard : settled;
      }
      psp.setCallbacks(op.dropCallbacks ? 'drop' : 'deliver');
      try {
        // This cashout alone is due: the model knows what the PSP does with it, not with the others.
        await gw.ctx.db.query(
          'UPDATE cashouts SET next_check_at = CASE WHEN id = $1 THEN $2::timestamptz END WHERE next_check_at IS NOT NULL OR id = $1',
          [c.id, new Date(now)],
        );
        await railJob(gw, 'efi-payouts').run(gw.ctx);
        await psp.settleSends();
      } finally {
        psp.setCallbacks('deliver');
      }
      const got = await gw.ctx.db.query<{ status: string }>('SELECT status FROM cashouts WHERE id = $1', [c.id]);
      const label = `payout round of cashout ${c.id} (${c.status}, PSP ${held ?? op.psp}${op.dropCallbacks ? ', callbacks dropped' : ''})`;
      assert.equal(got.rows[0]!.status, expected, label);
      const path: Record<string, CashoutEvent[]> = {
        'PENDING→PROCESSING': ['PROCESSING'],
        'PENDING→COMPLETED': ['PROCESSING', 'COMPLETED'],
        'PROCESSING→COMPLETED': ['COMPLETED'],
        'PENDING→REJECTED': ['REJECTED'],
        'PROCESSING→REJECTED': ['REJECTED'],
      };
      const from = c.status;
      for (const event of path[`${from}→${expected}`] ?? []) assert.equal(model.applyCashoutEvent(c.id, event), 'moved', label);
      count(`payout ${from} → ${expected} (PSP ${held ? 'read back' : op.psp})`);
    }

    for (const op of scenario.ops) {
      stats.steps++;
      switch (op.kind) {
        case 'fact':
          await sendFact(op);
          break;
        case 'infraction':
          await infraction(op);
          break;
        case 'cashout': {
          const created = await newCashout(op.seller, op.percent);
          for (let i = 0; created && i < op.follow; i++) {
            const legal = legalCashoutEvents(created);
            if (legal.length === 0) break;
            await sendCashoutEvent(created, legal[(op.pick + i) % legal.length]!);
          }
          break;
        }
        case 'payout':
          await payoutRound(op);
          break;
        case 'payoutReturn': {
          const c = fromNewest(cashoutIds, op.cashout, (id) => model.cashouts.get(id)!).find(
            (c) => c.status === 'COMPLETED' && atPsp.get(c.id) === 'REALIZADO' && c.returned < c.netAmount,
          );
          if (!c) break;
          const amount = Math.max(1, Math.floor(((c.netAmount - c.returned) * op.percent) / 100));
          await gw.ctx.rails.psp!.returnSent(`${gw.ctx.rails.efi.installationId}${c.id}`, amount);
          assert.ok(model.returnCashout(c.id, amount), `the model takes a return of ${amount} on cashout ${c.id}`);
          count(amount === c.netAmount ? 'payout returned in full' : 'payout returned in part');
          break;
        }
        case 'cashoutEvent': {
          const ours = cashoutIds.filter((id) => !paidOut.has(id));
          if (ours.length === 0) break;
          const candidates = fromNewest(ours, op.cashout, (id) => model.cashouts.get(id)!);
          const legalOf = legalCashoutEvents;
          const movable = op.mode === 'legal' ? candidates.find((c) => legalOf(c).length > 0) : undefined;
          if (movable) {
            for (let i = 0; i < (op.twice ? 2 : 1); i++) {
              const legal = legalOf(movable);
              if (legal.length === 0) break;
              await sendCashoutEvent(movable, legal[(op.pick + i) % legal.length]!);
            }
          } else {
            await sendCashoutEvent(candidates[0]!, op.event);
          }
          break;
        }
        case 'sale':
          await createSale(op.seller, op.method, op.amount);
          break;
        case 'refund': {
          if (saleIds.length === 0) break;
          const candidates = fromNewest(saleIds, op.sale, (id) => model.sale(id));
          const sale = candidates.find((s) => s.status === 'PAGO' && s.pendingRefund === 0) ?? candidates[0]!;
          const left = sale.amount - sale.refunded;
          const amount = op.amount === 'all' ? null : op.amount === 'over' ? left + 1 : Math.max(1, Math.floor((left * op.part) / 100));
          await refund(sale, amount, op.via, op.settle);
          const opened = sale.method === 'PIX' ? 'MED_OPENED' : sale.method === 'BOLETO' ? null : 'CHARGEBACK_OPENED';
          if (op.dispute === 'none' || !opened || sale.status !== 'PAGO') break;
          await sendEvent(sale, opened);
          const ends = { open: null, lose: ['MED_LOST', 'CHARGEBACK_CONFIRMED'], win: ['MED_WON', 'CHARGEBACK_REVERTED'] }[op.dispute];
          if (ends) await sendEvent(sale, (opened === 'MED_OPENED' ? ends[0] : ends[1]) as TxEvent);
          break;
        }
        case 'settleRefund': {
          const sale = fromNewest(saleIds, op.sale, (id) => model.sale(id)).find((s) => s.pendingRefund > 0);
          if (!sale) break;
          const pending = await gw.ctx.db.query<{ id: unknown }>("SELECT id FROM refunds WHERE transaction_id = $1 AND status = 'PENDING'", [
            sale.id,
          ]);
          assert.equal(pending.rows.length, 1, `sale ${sale.id}: one PENDING refund`);
          const outcome = op.outcome === 'FAILED' ? { status: 'FAILED' as const, reason: 'test' } : { status: 'SUCCEEDED' as const };
          await settleRefund(gw.ctx.db, Number(pending.rows[0]!.id), outcome, new Date(now));
          settled(sale, op.outcome);
          break;
        }
        case 'event': {
          if (saleIds.length === 0) break;
          const sale = model.sale(saleIds[saleIds.length - 1 - (op.sale % saleIds.length)]!);
          const legal = model.legalEvents(sale);
          const alive = legal.filter((e) => !DEAD_ENDS.includes(e));
          const choices = op.mode === 'any' || legal.length === 0 ? EVENTS : op.mode === 'money' && alive.length > 0 ? alive : legal;
          await sendEvent(sale, choices[op.pick % choices.length]!);
          break;
        }
        case 'toward': {
          const nearest = () => {
            let best: { sale: ModelSale; event: TxEvent; distance: number } | undefined;
            for (const sale of fromNewest(saleIds, op.sale, (id) => model.sale(id))) {
              const step = stepToward(sale.method, sale.status, op.target);
              if (step && (!best || step.distance < best.distance)) best = { sale, ...step };
              if (best?.distance === 0) break;
            }
            return best;
          };
          if (!nearest()) {
            const methods = METHODS.filter((m) => stepToward(m, 'PENDENTE', op.target) !== null);
            await createSale(op.fresh.seller, methods[op.fresh.pick % methods.length]!, op.fresh.amount);
          }
          for (let i = 0; i < op.steps; i++) {
            const best = nearest();
            if (!best) break;
            await sendEvent(best.sale, best.event);
            if (best.distance === 0) break;
          }
          break;
        }
        case 'sellerSchedule':
          await patchSeller(sellers[op.seller]!, op.patch);
          count('seller schedule patched');
          break;
        case 'platformSchedule': {
          const res = await inject('PATCH', '/admin/settings', adminHeaders, { feeSchedule: op.patch });
          assert.equal(res.statusCode, 200, res.body);
          model.patchPlatformSchedule(op.patch);
          assert.deepEqual(res.json().feeSchedule, model.platformSchedule, 'the merged platform schedule');
          count('platform schedule patched');
          break;
        }
        case 'tick': {
          now += op.ms;
          await runReserveJob();
          const holding = () => saleIds.filter((id) => model.sale(id).reserveHeld > 0).length;
          const heldBefore = holding();
          model.releaseDue(now);
          count('reserve released by the job', heldBefore - holding());
          count('tick');
          break;
        }
      }
      // What moved a sale may let its held facts apply: the gateway's job, and the model, try them again.
      if (facts.heldCount() > 0) {
        const heldBefore = facts.heldCount();
        await railJob(gw, 'provider-events-held').run(gw.ctx);
        facts.retryAll(now);
        count('provider fact held, then taken by the job', heldBefore - facts.heldCount());
      }
    }
    // Every fact ends in the model's state (held ones taken later too), every infraction's recorded status is the model's.
    const byId = <T extends { id: string }>(rows: T[]) => rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const identities = [...new Set([...sentFacts.map((f) => f.identity), ...infractionFacts.map((f) => f.identity)])];
    if (identities.length > 0) {
      const states = await gw.ctx.db.query<{ identity: string; state: string }>(
        'SELECT identity, state FROM provider_events WHERE identity = ANY($1::text[])',
        [identities],
      );
      assert.deepEqual(
        byId(states.rows.map((r) => ({ id: r.identity, state: r.state }))),
        byId(identities.map((id) => ({ id, state: facts.stateOf(id) }))),
        'the state of every fact',
      );
    }
    if (facts.infractions.size > 0) {
      const recorded = await gw.ctx.db.query<{ id_infracao: string; status: string; transaction_id: unknown }>(
        'SELECT id_infracao, status, transaction_id FROM med_infractions WHERE transaction_id = ANY($1::bigint[])',
        [saleIds],
      );
      assert.deepEqual(
        byId(recorded.rows.map((r) => ({ id: r.id_infracao, status: r.status, sale: Number(r.transaction_id) }))),
        byId([...facts.infractions].map(([id, r]) => ({ id, status: r.status, sale: r.saleId }))),
        'the recorded status of every infraction',
      );
    }

    const held = await gw.ctx.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM provider_events WHERE state = 'held' AND transaction_id = ANY($1::bigint[])",
      [saleIds],
    );
    assert.equal(held.rows[0]!.n, facts.heldCount(), 'the facts still held');
    count('provider fact still held at the end', facts.heldCount());

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
    const accounts = await gw.ctx.db.query<{ seller_id: unknown; account: string; total: unknown }>(
      `
      SELECT p.seller_id, split_part(l.account, ':', 1) AS account, sum(l.amount)::bigint AS total
      FROM journal_lines l JOIN postings p ON p.id = l.posting_id
      WHERE p.seller_id = ANY($1::bigint[]) GROUP BY 1, 2`,
      [ids],
    );
    const actual = new Map<string, number>();
    for (const r of accounts.rows) actual.set(`${Number(r.seller_id)}:${r.account}`, Number(r.total));
    for (const id of ids) {
      const t = model.tally(id);
      const got = (account: string) => actual.get(`${id}:${account}`) ?? 0;
      assert.deepEqual(
        {
          available: got('available'),
          blocked: got('blocked'),
          fee_revenue: got('fee_revenue'),
          dispute_losses: got('dispute_losses'),
          customer_funds: got('customer_funds'),
          payouts: got('payouts'),
        },
        {
          available: t.available,
          blocked: t.blocked,
          fee_revenue: t.feeRevenue,
          dispute_losses: t.disputeLosses,
          customer_funds: t.customerFunds,
          payouts: t.payouts,
        },
        `platform accounts of seller ${id}`,
      );
    }

    if (saleIds.length > 0) {
      const funds = await gw.ctx.db.query<{ transaction_id: unknown; total: unknown }>(
        `
        SELECT p.transaction_id, sum(l.amount)::bigint AS total
        FROM journal_lines l JOIN postings p ON p.id = l.posting_id
        WHERE split_part(l.account, ':', 1) = 'customer_funds' AND p.transaction_id = ANY($1::bigint[]) GROUP BY p.transaction_id`,
        [saleIds],
      );
      const byId = new Map(funds.rows.map((r) => [Number(r.transaction_id), Number(r.total)]));
      for (const id of saleIds) {
        const sale = model.sale(id);
        if (sale.status === 'ESTORNADO') assert.equal(byId.get(id) ?? 0, 0, `ESTORNADO sale ${id}: customer_funds nets to zero`);
        assert.equal(byId.get(id) ?? 0, model.expectedCustomerFunds(id), `customer_funds of sale ${id} (${sale.status})`);
      }
      const rows = await gw.ctx.db.query<{
        id: unknown;
        status: string;
        system_fee: unknown;
        reserve_amount: unknown;
        net_amount: unknown;
        refunded_amount: unknown;
      }>('SELECT id, status, system_fee, reserve_amount, net_amount, refunded_amount FROM transactions WHERE id = ANY($1::bigint[])', [saleIds]);
      assert.equal(rows.rows.length, saleIds.length);
      for (const r of rows.rows) {
        const sale = model.sale(Number(r.id));
        assert.equal(r.status, sale.status, `status of sale ${sale.id}`);
        assert.equal(Number(r.refunded_amount), sale.refunded, `refundedAmount of sale ${sale.id}`);
        const split =
          r.system_fee === null
            ? null
            : { systemFee: Number(r.system_fee), reserveAmount: Number(r.reserve_amount), netAmount: Number(r.net_amount) };
        assert.deepEqual(split, sale.split, `split of sale ${sale.id}`);
      }
    }
  }

  test("the model's own arithmetic matches the contract's worked examples", () => {
    assert.equal(bpHalfEven(15000, 199), 298); // 298.5 → even
    assert.equal(bpHalfEven(15000, 499), 748); // 748.5 → even
    assert.equal(bpHalfEven(14215, 1000), 1422); // 1421.5 → even
    assert.equal(bpHalfEven(25, 2000), 5); // 5.0
    assert.equal(bpHalfEven(5, 5000), 2); // 2.5 → 2
    assert.equal(bpHalfEven(7, 5000), 4); // 3.5 → 4
    assert.equal(bpHalfEven(10001, 299), 299); // 299.0299
    assert.deepEqual(splitOf(15000, { fixedCents: 0, percentBasisPoints: 199 }, 0), { systemFee: 298, reserveAmount: 0, netAmount: 14702 });
    assert.deepEqual(splitOf(15000, { fixedCents: 49, percentBasisPoints: 499 }, 1000), { systemFee: 797, reserveAmount: 1420, netAmount: 12783 });
    assert.deepEqual(
      splitOf(100, { fixedCents: 349, percentBasisPoints: 0 }, 1000),
      { systemFee: 100, reserveAmount: 0, netAmount: 0 },
      'the fee is capped at the amount',
    );
  });

  test(`random sequences (${NUM_RUNS} runs, seed ${SEED}): balances, platform accounts and statuses equal the model`, async (t) => {
    const started = performance.now();
    let runs = 0;
    try {
      await fc.assert(
        fc.asyncProperty(scenarioArb, async (scenario) => {
          runs++;
          await runScenario(scenario);
        }),
        { numRuns: NUM_RUNS, seed: SEED, ...(PATH ? { path: PATH } : {}), includeErrorInReport: true },
      );
    } finally {
      const ms = performance.now() - started;
      const kinds = [...EVENTS, ...CASHOUT_EVENTS.map((e) => `cashout ${e}`)];
      const others = [...applied.keys()].filter((k) => !kinds.includes(k)).sort();
      const line = (keys: string[]) => keys.map((k) => `${k} ${applied.get(k) ?? 0}`).join(', ');
      t.diagnostic(
        `seed ${SEED} (PROPERTY_SEED=${SEED} replays it), ${runs} sequences of ${stats.steps} operations in ${(ms / 1000).toFixed(1)} s (${(ms / Math.max(runs, 1)).toFixed(1)} ms per sequence) on ${onPostgres ? 'PostgreSQL' : 'PGlite'}`,
      );
      t.diagnostic(`transaction events applied: ${line(EVENTS)}`);
      t.diagnostic(`cashout events applied: ${line(CASHOUT_EVENTS.map((e) => `cashout ${e}`))}`);
      t.diagnostic(
        `other operations: ${line(others)}; sellers ending with negative available ${stats.negativeAvailable}; verify ${(stats.verifyMs / 1000).toFixed(1)} s`,
      );
    }
    // The generator must keep reaching every event kind: in 500 sequences or more each occurs dozens
    // of times, so a kind that never moved means the generator (or the model) lost it. (Fewer
    // sequences, as in a developer's default run, could miss a rare kind by chance: printed only.)
    if (NUM_RUNS >= 500 && !PATH) {
      const never = [
        ...EVENTS,
        ...CASHOUT_EVENTS.map((e) => `cashout ${e}`),
        'reserve released by the job',
        'reserve released on the return to PAGO',
        'cashout created',
        'refund SUCCEEDED (partial)',
        'refund SUCCEEDED (final)',
        'refund FAILED',
        'refund request refused',
        'refund request exceeds',
        'MED_OPENED after a partial refund',
        'MED_LOST after a partial refund',
        'CHARGEBACK_CONFIRMED after a partial refund',
        'MED_WON after a partial refund',
        'CHARGEBACK_REVERTED after a partial refund',
        'infraction moved a sale PAGO → MED',
        'infraction moved a sale MED → PAGO',
        'infraction moved a sale MED → ESTORNADO',
        'infraction ABERTA held',
        'infraction ACEITA needs_operator',
        'infraction held behind a refund pending',
        'infraction late word',
        'infraction decided, the sale left in MED (another undecided, or the first decision stands)',
        'infraction of a Pix no sale has needs_operator',
        'infraction fact repeated',
      ].filter((k) => !applied.get(k));
      assert.deepEqual(never, [], `event kinds never applied in ${runs} sequences (seed ${SEED})`);
    }
  });
});
