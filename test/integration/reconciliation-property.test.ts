/**
 * Property test of reconciliation (CONTRACT §15): random runs of the gateway's own flows through the
 * embedded PSP (PIX sales paid and refunded, card sales, boletos, cashouts paid out) and, beside
 * them, random provider-side faults (a devolução by hand, a Pix for another installation, a payout
 * sent twice, a boleto paid without a word, a devolução answered made and never made), each on a
 * random target among the run's sales and cashouts. After each run the day (São Paulo) is reconciled:
 * every account reconciles, its findings are exactly the faults injected (each a provider event
 * RECONCILIATION), a matched account's totals are equal and each side's total is what was moved on
 * it, no seller balance moves, and the ledger verifies.
 *
 * A gateway lives for several runs: what it keeps of earlier runs (their findings, stored once, and
 * every movement of the day) is in the expectation, cumulated since it started. A new gateway starts
 * for a run without faults once the day has findings (so a clean day must be matched), before the
 * findings would pass what the report shows, on a new day, and for every run once one failed (so the
 * counterexample fast-check shrinks to stands alone; shrinking is bounded in time).
 *
 * PROPERTY_RUNS / 5 runs (the money property test's variable: 40 by default, 200 in CI). The seed is
 * printed; PROPERTY_SEED replays the whole sequence of runs (a failure may hang on what earlier runs left
 * on the gateway), PROPERTY_PATH the failing run alone on a fresh gateway.
 */
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { saoPauloDate } from '../../src/domain/calendar.ts';
import { reconcileAccounts } from '../../src/reconciliation/run.ts';
import { onPostgres } from '../helpers/databases.ts';
import { type Gateway, startGateway } from '../helpers/gateway.ts';
import { type Books, checkDay, type Expected, type FaultKind } from '../helpers/reconciliation-checks.ts';
import { type BoletoSale, CARD_ACCOUNT, EFI_ACCOUNT, Flows, PIX_ACCOUNT, type PixSale } from '../helpers/reconciliation-flows.ts';

/** A fifth of PROPERTY_RUNS (a run here pays through the PSP and reconciles: heavier than a money sequence), 40 by default, 200 in CI. */
const NUM_RUNS = Math.max(1, Math.round(positiveInteger('PROPERTY_RUNS', 200) / 5));
const SEED = process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : Math.floor(Math.random() * 0x7fffffff);
const PATH = process.env.PROPERTY_PATH || undefined;
if (!Number.isSafeInteger(SEED)) throw new Error(`PROPERTY_SEED must be an integer, got ${process.env.PROPERTY_SEED}`);

function positiveInteger(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${text}`);
  return n;
}

/** What the report shows of a day's findings (src/reconciliation/matcher.ts): a gateway is replaced before its day has more. */
const SHOWN_FINDINGS = 100;
/** How long fast-check may shrink a failure. */
const SHRINK_MS = 60_000;

type Op =
  | { kind: 'pix'; amount: number; refund: number | null }
  | { kind: 'card'; amount: number; refund: number | null }
  | { kind: 'boleto'; amount: number; paid: boolean }
  | { kind: 'cashout'; cents: number };
type Fault =
  | { kind: 'devolucaoByHand'; target: number; percent: number }
  | { kind: 'foreignPix'; amount: number }
  | { kind: 'sentTwice'; target: number }
  | { kind: 'boletoSilent'; target: number; amount: number | null }
  | { kind: 'refundNeverMade'; target: number; percent: number };
interface Run {
  ops: Op[];
  faults: Fault[];
}

const amountArb = fc.oneof(
  fc.integer({ min: 100, max: 500_000 }),
  fc.integer({ min: 2, max: 10_000 }).map((k) => k * 50),
);
/** Percent of what is left, refunded: none half the time. */
const refundArb = fc.option(fc.integer({ min: 1, max: 100 }), { freq: 2 });
const percentArb = fc.oneof(fc.integer({ min: 1, max: 100 }), fc.constant(100));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('pix' as const), amount: amountArb, refund: refundArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('card' as const), amount: amountArb, refund: refundArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('boleto' as const), amount: amountArb, paid: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cashout' as const), cents: fc.integer({ min: 10_000, max: 1_000_000 }) }) },
);
const faultArb: fc.Arbitrary<Fault> = fc.oneof(
  fc.record({ kind: fc.constant('devolucaoByHand' as const), target: fc.nat(), percent: percentArb }),
  fc.record({ kind: fc.constant('foreignPix' as const), amount: amountArb }),
  fc.record({ kind: fc.constant('sentTwice' as const), target: fc.nat() }),
  fc.record({ kind: fc.constant('boletoSilent' as const), target: fc.nat(), amount: fc.option(amountArb, { freq: 3 }) }),
  fc.record({ kind: fc.constant('refundNeverMade' as const), target: fc.nat(), percent: percentArb }),
);
const runArb: fc.Arbitrary<Run> = fc.record({
  ops: fc.array(opArb, { maxLength: 6 }),
  faults: fc.oneof({ weight: 1, arbitrary: fc.constant<Fault[]>([]) }, { weight: 7, arbitrary: fc.array(faultArb, { minLength: 1, maxLength: 5 }) }),
});

/** The first of `items`, from the `start`-th (wrapping), that `fits`; its index. */
function pick<T>(items: readonly T[], start: number, fits: (item: T, i: number) => boolean): number | null {
  for (let k = 0; k < items.length; k++) {
    const i = (start + k) % items.length;
    if (fits(items[i]!, i)) return i;
  }
  return null;
}

const part = (left: number, percent: number) => Math.max(1, Math.floor((left * percent) / 100));

/**
 * The ops a run makes: its own, and the targets of its faults that must exist before them (the
 * cashout whose send the PSP doubles, the unpaid boleto paid in silence), made when the run has none.
 */
function plan(run: Run): { ops: Op[]; twice: Set<number>; silent: Map<Fault, number> } {
  const ops = [...run.ops];
  const twice = new Set<number>();
  const silent = new Map<Fault, number>();
  const taken = new Set<number>();
  for (const fault of run.faults) {
    if (fault.kind === 'sentTwice') {
      const i =
        pick(ops, fault.target, (op, i) => op.kind === 'cashout' && !twice.has(i)) ??
        ops.push({ kind: 'cashout', cents: 10_000 + (fault.target % 90_000) }) - 1;
      twice.add(i);
    } else if (fault.kind === 'boletoSilent') {
      const unpaid = (op: Op, i: number) => op.kind === 'boleto' && !op.paid && !taken.has(i);
      const i = pick(ops, fault.target, unpaid) ?? ops.push({ kind: 'boleto', amount: 100 + (fault.target % 100_000), paid: false }) - 1;
      taken.add(i);
      silent.set(fault, i);
    }
  }
  return { ops, twice, silent };
}

interface Made {
  pix: PixSale[];
  boletos: Map<number, BoletoSale>;
}

/** The runs, one after another, on a gateway that lives for several of them. */
class Runs {
  private gw: Gateway | null = null;
  private f!: Flows;
  private day = '';
  /** False while a run is under way or after it failed: what the gateway holds is then unknown. */
  private trusted = false;
  /**
   * When a run first failed. fast-check then shrinks it, each run on a gateway of its own so the counterexample
   * stands alone; a run that failed only after what earlier runs left never fails alone, and fast-check would try
   * every smaller run in vain: past SHRINK_MS the runs are not made, and the smallest failure so far is reported.
   */
  private failedAt: number | null = null;
  private books: Books = { expected: [], provider: new Map(), ledger: new Map() };
  readonly injected = new Map<string, number>();
  readonly stats = { gateways: 0, runs: 0, cleanRuns: 0, ops: 0 };

  async close(): Promise<void> {
    await this.gw?.close();
  }

  private async freshGateway(day: string): Promise<void> {
    await this.gw?.close();
    const gw = await startGateway();
    this.gw = gw;
    gw.ctx.providers.listeningAt(await gw.app.listen({ port: 0, host: '127.0.0.1' }));
    this.f = new Flows(gw, await gw.createSeller());
    this.day = day;
    this.books = { expected: [], provider: new Map(), ledger: new Map() };
    this.stats.gateways++;
  }

  private move(side: 'provider' | 'ledger' | 'both', account: string, cents: number): void {
    for (const s of side === 'both' ? (['provider', 'ledger'] as const) : [side])
      this.books[s].set(account, (this.books[s].get(account) ?? 0) + cents);
  }
  private expect(kind: FaultKind, account: string, side: Expected['side'], reference: string, amount: number): void {
    this.books.expected.push({ kind, account, side, reference, amount });
    this.injected.set(kind, (this.injected.get(kind) ?? 0) + 1);
  }

  /** The run's own ops, in order: PIX sales paid (and refunded), card sales, boletos, cashouts (sent twice when planned). */
  private async runOps(ops: Op[], twice: Set<number>): Promise<Made> {
    const made: Made = { pix: [], boletos: new Map() };
    for (const [i, op] of ops.entries()) {
      this.stats.ops++;
      if (op.kind === 'pix') {
        const sale = await this.f.paidPix(op.amount);
        this.move('both', PIX_ACCOUNT, op.amount);
        const refund = op.refund === null ? 0 : part(op.amount, op.refund);
        if (refund > 0) await this.f.refundPix(sale, refund);
        this.move('both', PIX_ACCOUNT, -refund);
        made.pix.push(sale);
      } else if (op.kind === 'card') {
        const refund = op.refund === null ? 0 : part(op.amount, op.refund);
        await this.f.paidCard(op.amount, refund);
        this.move('both', CARD_ACCOUNT, op.amount - refund);
      } else if (op.kind === 'boleto') {
        made.boletos.set(i, await this.f.boleto(op.amount, op.paid));
        if (op.paid) this.move('both', EFI_ACCOUNT, op.amount);
      } else {
        const sent = await this.f.cashout(op.cents, twice.has(i));
        this.move('both', EFI_ACCOUNT, -sent.net);
        if (!twice.has(i)) continue;
        this.move('provider', EFI_ACCOUNT, -sent.net);
        this.expect('sentTwice', EFI_ACCOUNT, 'provider', sent.idEnvio, -sent.net);
      }
    }
    return made;
  }

  /** A PIX sale of the run of which `left` is more than nothing (from the `target`-th), or a new one paid. */
  private async pixTarget(pix: PixSale[], target: number, left: (s: PixSale) => number): Promise<PixSale> {
    const i = pick(pix, target, (s) => left(s) > 0);
    if (i !== null) return pix[i]!;
    const sale = await this.f.paidPix(100 + (target % 100_000));
    this.move('both', PIX_ACCOUNT, sale.amount);
    pix.push(sale);
    return sale;
  }

  /** The run's faults, after its ops, in order (a doubled send was armed before its cashout). */
  private async injectFaults(run: Run, made: Made, silent: Map<Fault, number>): Promise<void> {
    for (const fault of run.faults) {
      if (fault.kind === 'devolucaoByHand') {
        const sale = await this.pixTarget(made.pix, fault.target, (s) => s.amount - s.devolved);
        const amount = part(sale.amount - sale.devolved, fault.percent);
        this.expect(fault.kind, PIX_ACCOUNT, 'provider', await this.f.devolveByHand(sale, amount), -amount);
        this.move('provider', PIX_ACCOUNT, -amount);
      } else if (fault.kind === 'refundNeverMade') {
        const sale = await this.pixTarget(made.pix, fault.target, (s) => s.amount - s.refunded);
        const amount = part(sale.amount - sale.refunded, fault.percent);
        this.expect(fault.kind, PIX_ACCOUNT, 'ledger', await this.f.refundNeverMade(sale, amount), -amount);
        this.move('ledger', PIX_ACCOUNT, -amount);
      } else if (fault.kind === 'foreignPix') {
        this.expect(fault.kind, PIX_ACCOUNT, 'provider', await this.f.foreignPix(fault.amount), fault.amount);
        this.move('provider', PIX_ACCOUNT, fault.amount);
      } else if (fault.kind === 'boletoSilent') {
        const boleto = made.boletos.get(silent.get(fault)!)!;
        const paid = await this.f.boletoPaidSilently(boleto, fault.amount);
        this.expect(fault.kind, EFI_ACCOUNT, 'provider', boleto.chargeId, paid);
        this.move('provider', EFI_ACCOUNT, paid);
      }
    }
  }

  /** One run: its ops and faults, then its day reconciled and checked against everything the gateway did that day. */
  async run(run: Run): Promise<void> {
    if (this.failedAt !== null && performance.now() - this.failedAt > SHRINK_MS) return;
    const day = saoPauloDate(new Date());
    const clean = run.faults.length === 0;
    const stale = !this.gw || !this.trusted || this.failedAt !== null || this.day !== day;
    const { expected } = this.books;
    if (stale || (clean && expected.length > 0) || expected.length + run.faults.length > SHOWN_FINDINGS) await this.freshGateway(day);
    this.trusted = false;
    this.stats.runs++;
    if (clean) this.stats.cleanRuns++;
    try {
      const { ops, twice, silent } = plan(run);
      await this.injectFaults(run, await this.runOps(ops, twice), silent);
      // A run across midnight has its movements on two days: it proves nothing of one (and is rare).
      fc.pre(saoPauloDate(new Date()) === day);
      const gw = this.gw!;
      await checkDay(gw, day, this.books, clean, () => reconcileAccounts(gw.ctx, day));
    } catch (error) {
      if (!fc.PreconditionFailure.isFailure(error)) this.failedAt ??= performance.now();
      throw error;
    }
    this.trusted = true;
  }
}

describe('reconciliation property: provider-side faults at random beside the gateway’s flows', () => {
  const runs = new Runs();
  after(() => runs.close());

  test(`random runs (${NUM_RUNS} runs, seed ${SEED}): the findings are exactly the faults injected`, async (t) => {
    const started = performance.now();
    try {
      await fc.assert(
        fc.asyncProperty(runArb, (run) => runs.run(run)),
        { numRuns: NUM_RUNS, seed: SEED, ...(PATH ? { path: PATH } : {}), includeErrorInReport: true },
      );
    } finally {
      const ms = performance.now() - started;
      const { stats } = runs;
      t.diagnostic(
        `seed ${SEED} (PROPERTY_SEED=${SEED} replays it): ${stats.runs} runs (${stats.cleanRuns} without faults) of ${stats.ops} ops on ${stats.gateways} gateways in ${(ms / 1000).toFixed(1)} s on ${onPostgres ? 'PostgreSQL' : 'PGlite'}`,
      );
      t.diagnostic(`faults injected: ${[...runs.injected].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    }
  });
});
