/**
 * The embedded PSP's boletos, as Efí's Cobranças API keeps them (CONTRACT §11.4): a one-step charge
 * gets a FEBRABAN-valid code with the PSP's bank code and a Pix charge beside it (boleto híbrido);
 * every status change is kept in the charge's history and told to its notification URL as a token
 * the receiver reads back. A bank may pay a boleto however it stands (a cancelled one too): telling
 * what happened is the PSP's job, deciding what it means is the receiver's.
 */
import { randomBytes } from 'node:crypto';
import type { CallbackSender } from './callbacks.ts';
import { insertCob } from './cob-store.ts';
import { boletoCodes, printedLine } from './encoders.ts';
import type { Db, Queryable } from './sql.ts';
import { maybeOne, one, run, sql } from './sql.ts';
import type { PspClock, PspLogger } from './types.ts';

export interface ChargeRow {
  charge_id: number;
  custom_id: string | null;
  notification_url: string | null;
  total_cents: number;
  status: string;
  barcode: string;
  pix_txid: string | null;
  pix_code: string | null;
  expire_at: string;
  paid_cents: number | null;
  created_at: Date;
  /** When it was first paid. */
  paid_at: Date | null;
  /** `via: 'pix'` marks a payment by the boleto's own Pix (already counted among the Pix received). */
  history: { id: number; status: string; previous: string | null; value?: number; at: string; via?: 'pix' }[];
}

/** How a bank's payment reaches the PSP: by the boleto's Pix or not; told to the receiver or not (a fault a test arms). */
export interface PayHow {
  via?: 'pix';
  silent?: boolean;
}

/** GET /v1/charges: boletos made (creation), paid (payment) or due (expired) between two São Paulo days, a page of them. */
export interface ChargeFilter {
  dateOf: 'creation' | 'payment' | 'expired';
  from: string;
  to: string;
  customId: string | null;
  status: string | null;
  limit: number;
  page: number;
}

/** A refusal in Efí's words: `{ code, error, error_description }`. */
export class ChargeRefusal extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

export interface NewCharge {
  totalCents: number;
  customId: string | null;
  notificationUrl: string | null;
  expireAt: string;
  request: unknown;
}

export interface ChargesOptions {
  db: Db;
  clock: PspClock;
  bankCode: string;
  callbacks: CallbackSender;
  logger: PspLogger;
  /** The Pix side: a charge (cob) of the receiver's key, its BR Code made by the API Pix routes' rules. */
  pixCharge(txid: string, cents: number): { location: string; locToken: string; pixCopiaECola: string; chave: string };
}

const columns = sql`charge_id::float8 AS charge_id, custom_id, notification_url, total_cents::float8 AS total_cents, status, barcode, pix_txid,
  pix_code, expire_at::text AS expire_at, paid_cents::float8 AS paid_cents, created_at, paid_at, history`;
// Statuses a bank can still pay as the boleto asks; the others are told as they are.
const payable = new Set(['waiting', 'unpaid']);

export class Charges {
  private refusals = 0;
  constructor(private readonly o: ChargesOptions) {}

  /** The next n one-step charges are refused (a test knob: Efí saying no). */
  refuseNext(n: number): void {
    this.refusals += n;
  }

  async create(c: NewCharge): Promise<ChargeRow> {
    if (this.refusals > 0) {
      this.refusals--;
      throw new ChargeRefusal(400, 'validation_error', 'Cobrança recusada (simulada pelo sandbox).');
    }
    const row = await this.o.db.tx(async (q) => {
      const chargeId = Number(one(await run<{ id: number }>(q, sql`SELECT nextval('sandbox_psp.charge_ids')::float8 AS id`)).id);
      let built: ReturnType<typeof boletoCodes>;
      try {
        built = boletoCodes(this.o.bankCode, c.totalCents, c.expireAt, chargeId);
      } catch (error) {
        throw new ChargeRefusal(400, 'validation_error', (error as Error).message);
      }
      const txid = `bolix${String(chargeId).padStart(25, '0')}`;
      const pix = this.o.pixCharge(txid, c.totalCents);
      const now = this.o.clock.now();
      const fields = { expiracao: 365 * 86_400, originalCents: c.totalCents, modalidadeAlteracao: 0 as const, chave: pix.chave };
      await insertCob(q, {
        txid,
        fields,
        criacao: now,
        locToken: pix.locToken,
        location: pix.location,
        pixCopiaECola: pix.pixCopiaECola,
      });
      const history = [{ id: 1, status: 'waiting', previous: 'new', at: now.toISOString() }];
      return one(
        await run<ChargeRow>(
          q,
          sql`INSERT INTO sandbox_psp.charges (charge_id, custom_id, notification_url, total_cents, status, barcode, pix_txid, pix_code, expire_at, request, created_at, history)
              VALUES (${chargeId}, ${c.customId}, ${c.notificationUrl}, ${c.totalCents}, 'waiting', ${printedLine(built.digitableLine)},
                ${txid}, ${pix.pixCopiaECola}, ${c.expireAt}::date, ${JSON.stringify(c.request)}::jsonb, ${now}, ${JSON.stringify(history)}::jsonb)
              RETURNING ${columns}`,
        ),
      );
    });
    return row;
  }

  find(chargeId: number): Promise<ChargeRow | null> {
    return findCharge(this.o.db, chargeId);
  }

  /** GET /v1/charges, one page (page 1 first), oldest charge first. Brazil keeps UTC−3 all year: a day is 24 h from 03:00 UTC. */
  async list(f: ChargeFilter): Promise<(ChargeRow & { customer: unknown })[]> {
    const start = new Date(`${f.from}T00:00:00-03:00`);
    const end = new Date(new Date(`${f.to}T00:00:00-03:00`).getTime() + 86_400_000);
    const when =
      f.dateOf === 'payment'
        ? sql`paid_at >= ${start} AND paid_at < ${end}`
        : f.dateOf === 'expired'
          ? sql`expire_at >= ${f.from}::date AND expire_at <= ${f.to}::date`
          : sql`created_at >= ${start} AND created_at < ${end}`;
    const r = await run<ChargeRow & { customer: unknown }>(
      this.o.db,
      sql`SELECT ${columns}, request #> '{payment,banking_billet,customer}' AS customer FROM sandbox_psp.charges
          WHERE ${when} AND (${f.customId}::text IS NULL OR custom_id = ${f.customId}::text) AND (${f.status}::text IS NULL OR status = ${f.status}::text)
          ORDER BY charge_id LIMIT ${f.limit} OFFSET ${(f.page - 1) * f.limit}`,
    );
    return r.rows;
  }

  /** PUT /v1/charge/{id}/cancel: a charge nobody paid; cancelling it again changes nothing. */
  async cancel(chargeId: number): Promise<void> {
    await this.change(chargeId, (row) => {
      if (row.status === 'canceled') return null;
      if (!payable.has(row.status))
        throw new ChargeRefusal(400, 'charge_cannot_be_canceled', `A cobrança está com status ${row.status} e não pode ser cancelada.`);
      return { status: 'canceled', paid: null };
    });
  }

  /** A bank (or the boleto's Pix) paying it; `cents` defaults to the boleto's value. */
  async pay(chargeId: number, cents?: number, how: PayHow = {}): Promise<ChargeRow> {
    return this.change(
      chargeId,
      (row) => {
        if (row.status === 'paid' || row.status === 'settled') throw new ChargeRefusal(400, 'charge_already_paid', 'A cobrança já foi paga.');
        return { status: 'paid', paid: cents ?? row.total_cents, via: how.via };
      },
      !how.silent,
    );
  }

  /** The charge a boleto's Pix txid belongs to, if any. */
  async ofPixTxid(txid: string): Promise<ChargeRow | null> {
    return maybeOne(await run<ChargeRow>(this.o.db, sql`SELECT ${columns} FROM sandbox_psp.charges WHERE pix_txid = ${txid}`));
  }

  /** GET /v1/notification/{token}: the history of the charge the token names. */
  async notification(token: string): Promise<ChargeRow | null> {
    return maybeOne(
      await run<ChargeRow>(
        this.o.db,
        sql`SELECT ${columns} FROM sandbox_psp.charges WHERE charge_id = (SELECT charge_id FROM sandbox_psp.charge_notifications WHERE token = ${token})`,
      ),
    );
  }

  /** One status change, kept in the history and told by a new token (unless `tell` is false); null from `decide` changes nothing. */
  private async change(
    chargeId: number,
    decide: (row: ChargeRow) => { status: string; paid: number | null; via?: 'pix' } | null,
    tell = true,
  ): Promise<ChargeRow> {
    const now = this.o.clock.now();
    const token = randomBytes(16).toString('hex');
    const outcome = await this.o.db.tx(async (q) => {
      const row = await findCharge(q, chargeId, true);
      if (!row) throw new ChargeRefusal(404, 'charge_not_found', 'Cobrança não encontrada.');
      const next = decide(row);
      if (!next) return { row, told: false };
      const entry = {
        id: row.history.length + 1,
        status: next.status,
        previous: row.status,
        at: now.toISOString(),
        ...(next.paid === null ? {} : { value: next.paid }),
        ...(next.via ? { via: next.via } : {}),
      };
      const updated = one(
        await run<ChargeRow>(
          q,
          sql`UPDATE sandbox_psp.charges SET status = ${next.status}, paid_cents = coalesce(${next.paid}, paid_cents),
                paid_at = CASE WHEN ${next.status}::text = 'paid' THEN coalesce(paid_at, ${now}::timestamptz) ELSE paid_at END,
                history = history || ${JSON.stringify([entry])}::jsonb
              WHERE charge_id = ${chargeId} RETURNING ${columns}`,
        ),
      );
      if (!tell) return { row: updated, told: false };
      await run(q, sql`INSERT INTO sandbox_psp.charge_notifications (token, charge_id, created_at) VALUES (${token}, ${chargeId}, ${now})`);
      return { row: updated, told: true };
    });
    if (outcome.told && outcome.row.notification_url) await this.o.callbacks.notifyCharge(outcome.row.notification_url, token, `charge ${chargeId}`);
    return outcome.row;
  }
}

async function findCharge(q: Queryable, chargeId: number, lock = false): Promise<ChargeRow | null> {
  const r = lock
    ? await run<ChargeRow>(q, sql`SELECT ${columns} FROM sandbox_psp.charges WHERE charge_id = ${chargeId} FOR UPDATE`)
    : await run<ChargeRow>(q, sql`SELECT ${columns} FROM sandbox_psp.charges WHERE charge_id = ${chargeId}`);
  return maybeOne(r);
}
