/**
 * Pix sending, as Efí's API does it (CONTRACT §11.3): PUT /v3/gn/pix/{idEnvio} takes a Pix from the
 * paying key's balance (EM_PROCESSAMENTO), the PSP settles it a moment later (REALIZADO, or
 * NAO_REALIZADO for the sandbox rule's keys and armed refusals) and calls the paying key's webhook
 * back. The settle time is stored: what is under way at a restart is settled by the next process.
 * The knobs let tests make it refuse, lose its answer, reject later or return money.
 */

import type { CallbackSender } from './callbacks.ts';
import {
  accountBalanceCents,
  addReturn,
  findSent,
  insertSent,
  payerBalanceCents,
  pendingSent,
  type SentRow,
  sentCallbackItem,
  settleSent,
} from './sent-store.ts';
import type { Db } from './sql.ts';
import { run, sql } from './sql.ts';
import type { PspClock, PspLogger, SendFailure } from './types.ts';
import { centsOf, newEndToEndId, newRtrId, randomAlnum, valorOf } from './wire.ts';

export const ID_ENVIO_RE = /^[a-zA-Z0-9]{1,35}$/;
const REJECT_RULE = /@reject\.test$/;
const RULE_MOTIVO = 'Pix não realizado: a chave recusou o crédito (regra do sandbox, e-mail @reject.test).';
const ARMED_MOTIVO = 'Pix não realizado: recusado pelo PSP recebedor (falha simulada pelo sandbox).';

/** Efí's error answer on its own endpoints. */
export class EfiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly nome: string,
    readonly mensagem: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(`${status} ${nome}`);
  }
}

export interface SendRequest {
  valorCents: number;
  pagadorChave: string;
  infoPagador: string | null;
  favorecidoChave: string;
  favorecidoDocumento: string | null;
  canonical: string;
}

/** What happens to the answer of an accepted send: sent, lost by a reset connection, or never sent. */
export type AnswerFate = 'answer' | 'reset' | 'hang';

export interface SendsOptions {
  db: Db;
  clock: PspClock;
  delayMs: number;
  payerFloatCents: number;
  callbacks: CallbackSender;
  logger: PspLogger;
}

export class Sends {
  private readonly failures: SendFailure[] = [];
  private readonly fates: AnswerFate[] = [];
  private rejections = 0;
  private twice = 0;
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly settling = new Set<Promise<void>>();

  constructor(private readonly o: SendsOptions) {}

  failNext(n: number, failure: SendFailure): void {
    for (let i = 0; i < n; i++) this.failures.push(failure);
  }
  loseNextAnswers(n: number, how: 'reset' | 'hang'): void {
    for (let i = 0; i < n; i++) this.fates.push(how);
  }
  rejectNext(n: number): void {
    this.rejections += n;
  }
  /** The next send is booked twice: a second sent Pix of the same idEnvio, its own end-to-end id, settled with the first. */
  twiceNext(): void {
    this.twice++;
  }

  /** GET /v2/gn/saldo of the account whose paying key is `chave`. */
  balanceCents(chave: string): Promise<number> {
    return accountBalanceCents(this.o.db, chave, this.o.payerFloatCents);
  }

  /** PUT /v3/gn/pix/{idEnvio}: the new sent Pix and the fate of its answer, or an EfiRefusal. */
  async send(idEnvio: string, r: SendRequest): Promise<{ row: SentRow; fate: AnswerFate }> {
    const failure = this.failures.shift();
    if (failure) throw new EfiRefusal(failure.status, failure.nome ?? 'erro_simulado', 'Falha simulada pelo sandbox.', failure.retryAfterSeconds);
    const reject = this.rejections > 0;
    // Taken now, handed back unless this request books a new send.
    const twice = this.twice > 0;
    if (twice) this.twice--;
    const row = await this.o.db
      .tx(async (q) => {
        // One send at a time per paying key: its balance is read and taken in one step.
        await run(q, sql`SELECT pg_advisory_xact_lock(hashtext(${`sandbox_psp_send:${r.pagadorChave}`}))`);
        if (await findSent(q, idEnvio)) throw new EfiRefusal(409, 'id_envio_duplicado', 'O idEnvio informado já foi utilizado em outra requisição.');
        if ((await payerBalanceCents(q, r.pagadorChave, this.o.payerFloatCents)) < r.valorCents) {
          throw new EfiRefusal(400, 'saldo_insuficiente', 'Saldo insuficiente para realizar o envio.');
        }
        const now = this.o.clock.now();
        const motivo = REJECT_RULE.test(r.favorecidoChave) ? RULE_MOTIVO : reject ? ARMED_MOTIVO : null;
        const sent = {
          id_envio: idEnvio,
          end_to_end_id: newEndToEndId(now),
          valor_cents: r.valorCents,
          pagador_chave: r.pagadorChave,
          info_pagador: r.infoPagador,
          favorecido_chave: r.favorecidoChave,
          favorecido_documento: r.favorecidoDocumento,
          status: 'EM_PROCESSAMENTO' as const,
          motivo,
          solicitacao: now,
          settle_at: new Date(now.getTime() + this.o.delayMs),
          request_canonical: r.canonical,
        };
        const first = await insertSent(q, sent);
        // The fault books the money twice, whatever the balance: the point is a record that disagrees.
        if (twice) await insertSent(q, { ...sent, end_to_end_id: newEndToEndId(now) }, true);
        return first;
      })
      .catch((error: unknown) => {
        if (twice) this.twice++;
        throw error;
      });
    if (reject && row.motivo === ARMED_MOTIVO) this.rejections--;
    this.schedule(idEnvio, this.o.delayMs);
    return { row, fate: this.fates.shift() ?? 'answer' };
  }

  /** Money the receiver's bank sends back: a devolução on the sent Pix, then the callback. */
  async returnSent(idEnvio: string, amountCents: number): Promise<SentRow> {
    const row = await this.o.db.tx(async (q) => {
      const sent = await findSent(q, idEnvio, true);
      if (sent?.status !== 'REALIZADO') throw new Error(`returnSent: no sent Pix ${idEnvio} made`);
      const returned = sent.devolucoes.reduce((sum, d) => sum + (centsOf(d.valor) ?? 0), 0);
      if (!Number.isSafeInteger(amountCents) || amountCents <= 0 || returned + amountCents > sent.valor_cents) {
        throw new RangeError(`returnSent: ${amountCents} cents is not within the ${sent.valor_cents - returned} left`);
      }
      const now = this.o.clock.now();
      const at = now.toISOString();
      return addReturn(q, idEnvio, {
        id: `D${randomAlnum(16)}`,
        rtrId: newRtrId(now),
        valor: valorOf(amountCents),
        horario: { solicitacao: at, liquidacao: at },
        status: 'DEVOLVIDO',
      });
    });
    await this.o.callbacks.notifyItem(row.pagador_chave, sentCallbackItem(row), idEnvio);
    return row;
  }

  async settleAll(): Promise<void> {
    const pending = await pendingSent(this.o.db);
    await Promise.all(pending.map((s) => this.settle(s.id_envio)));
  }

  async resume(): Promise<void> {
    const now = this.o.clock.now().getTime();
    for (const s of await pendingSent(this.o.db)) this.schedule(s.id_envio, Math.max(0, s.settle_at.getTime() - now));
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  async drain(): Promise<void> {
    await Promise.allSettled([...this.settling]);
  }

  private schedule(idEnvio: string, delayMs: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.settle(idEnvio);
    }, delayMs);
    this.timers.add(timer);
  }

  private settle(idEnvio: string): Promise<void> {
    const p = (async () => {
      const row = await settleSent(this.o.db, idEnvio, this.o.clock.now());
      if (row) await this.o.callbacks.notifyItem(row.pagador_chave, sentCallbackItem(row), idEnvio);
    })().catch((err) => this.o.logger.error({ err, idEnvio }, 'sandbox PSP: settling a sent Pix failed'));
    this.settling.add(p);
    void p.finally(() => this.settling.delete(p));
    return p;
  }
}
