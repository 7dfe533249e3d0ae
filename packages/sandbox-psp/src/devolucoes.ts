/**
 * Devoluções: requested EM_PROCESSAMENTO, settled by the PSP a moment later (DEVOLVIDO, or
 * NAO_REALIZADO when a failure was armed), then called back. MED devoluções are settled at once.
 * The settle time is stored, so devoluções pending at a restart are settled by the next process.
 */

import type { CallbackSender } from './callbacks.ts';
import {
  committedCents,
  type DevolucaoRow,
  devolucaoJson,
  findDevolucao,
  insertDevolucao,
  pendingDevolucoes,
  settleDevolucao,
} from './devolucao-store.ts';
import { findPix } from './pix-store.ts';
import { problem } from './problems.ts';
import type { Db } from './sql.ts';
import type { Devolucao, DevolucaoNatureza, MedNatureza, PspClock, PspLogger } from './types.ts';
import { newRtrId, randomAlnum } from './wire.ts';

const WINDOW_MS = 90 * 24 * 3600 * 1000;
const ARMED_MOTIVO = 'Devolução não realizada: recusada pelo PSP do pagador (falha simulada pelo sandbox).';

export interface DevolucaoRequest {
  valorCents: number;
  natureza: 'ORIGINAL';
  descricao?: string;
  /** The normalised request, to tell a repeat (idempotent) from a different use of the same id. */
  canonical: string;
}

export interface DevolucoesOptions {
  db: Db;
  clock: PspClock;
  delayMs: number;
  callbacks: CallbackSender;
  logger: PspLogger;
}

export const devolucaoInvalida = (razao: string, propriedade: string) =>
  problem(
    400,
    'PixDevolucaoInvalida',
    'Devolução inválida.',
    'A presente requisição de devolução não respeita o schema ou não faz sentido semanticamente.',
    [{ razao, propriedade }],
  );

export class Devolucoes {
  private armed = 0;
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly settling = new Set<Promise<void>>();

  constructor(private readonly o: DevolucoesOptions) {}

  failNext(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`failNextDevolucoes: ${n} is not a count`);
    this.armed += n;
  }

  /** PUT /pix/{e2eid}/devolucao/{id}: the devolução, new (EM_PROCESSAMENTO) or the one already made by this request. */
  async request(e2eid: string, id: string, r: DevolucaoRequest): Promise<Devolucao> {
    // An armed failure is taken now and handed back unless this request makes a new devolução.
    const fail = this.armed > 0;
    if (fail) this.armed--;
    let created = false;
    try {
      const row = await this.o.db.tx(async (q) => {
        const pix = await findPix(q, e2eid, true);
        if (!pix) throw problem(404, 'PixNaoEncontrado', 'Não Encontrado', 'Pix não encontrado para o e2eid informado.');
        const existing = await findDevolucao(q, e2eid, id);
        if (existing) return sameRequestOrRefuse(existing, r);
        const now = this.o.clock.now();
        if (now.getTime() - pix.horario.getTime() > WINDOW_MS) {
          throw devolucaoInvalida('A devolução viola a janela de 90 dias desde a liquidação do Pix.', 'e2eid');
        }
        if ((await committedCents(q, e2eid)) + r.valorCents > pix.valor_cents) {
          throw devolucaoInvalida('A devolução, com as anteriores, excederia o valor do Pix originário.', 'devolucao.valor');
        }
        created = true;
        return insertDevolucao(q, {
          end_to_end_id: e2eid,
          id,
          rtr_id: newRtrId(now),
          valor_cents: r.valorCents,
          natureza: r.natureza,
          descricao: r.descricao ?? null,
          status: 'EM_PROCESSAMENTO',
          solicitacao: now,
          settle_at: new Date(now.getTime() + this.o.delayMs),
          planned_failure: fail ? ARMED_MOTIVO : null,
          request_canonical: r.canonical,
        });
      });
      if (created) this.schedule(e2eid, id, this.o.delayMs);
      return devolucaoJson(row);
    } finally {
      if (fail && !created) this.armed++;
    }
  }

  /** A MED devolução: the payer's PSP took the money back; DEVOLVIDO at once, then the callback. */
  async openMed(e2eid: string, amountCents: number, natureza: MedNatureza): Promise<Devolucao> {
    if (natureza !== 'MED_OPERACIONAL' && natureza !== 'MED_FRAUDE') throw new RangeError(`openMedDevolucao: natureza ${natureza}`);
    const row = await this.settledNow('openMedDevolucao', e2eid, amountCents, natureza, 'MED');
    await this.o.callbacks.notify(e2eid);
    return devolucaoJson(row);
  }

  /**
   * A devolução made at the PSP by hand (its back office, not the API): DEVOLVIDO at once, with an
   * id the PSP made, and no callback. The receiver learns of it only by reading its Pix.
   */
  async byHand(e2eid: string, amountCents: number): Promise<Devolucao> {
    return devolucaoJson(await this.settledNow('devolveByHand', e2eid, amountCents, 'ORIGINAL', 'PSP'));
  }

  /** A devolução DEVOLVIDO from the start, of at most what is left of the Pix. */
  private settledNow(what: string, e2eid: string, amountCents: number, natureza: DevolucaoNatureza, idPrefix: string): Promise<DevolucaoRow> {
    if (!Number.isSafeInteger(amountCents) || amountCents <= 0) throw new RangeError(`${what}: amountCents ${amountCents} is not positive cents`);
    return this.o.db.tx(async (q) => {
      const pix = await findPix(q, e2eid, true);
      if (!pix) throw new Error(`${what}: no Pix ${e2eid}`);
      const left = pix.valor_cents - (await committedCents(q, e2eid));
      if (amountCents > left) throw new RangeError(`${what}: ${amountCents} cents is more than the ${left} left of Pix ${e2eid}`);
      const now = this.o.clock.now();
      return insertDevolucao(q, {
        end_to_end_id: e2eid,
        id: `${idPrefix}${randomAlnum(16)}`,
        rtr_id: newRtrId(now),
        valor_cents: amountCents,
        natureza,
        descricao: null,
        status: 'DEVOLVIDO',
        solicitacao: now,
        liquidacao: now,
        settle_at: now,
        planned_failure: null,
        request_canonical: '',
      });
    });
  }

  /** Every devolução still EM_PROCESSAMENTO, settled now; resolves after their callbacks. */
  async settleAll(): Promise<void> {
    const pending = await pendingDevolucoes(this.o.db);
    await Promise.all(pending.map((d) => this.settle(d.end_to_end_id, d.id)));
  }

  /** At start: what a previous process left EM_PROCESSAMENTO is settled when it was due (or now). */
  async resume(): Promise<void> {
    const now = this.o.clock.now().getTime();
    for (const d of await pendingDevolucoes(this.o.db)) this.schedule(d.end_to_end_id, d.id, Math.max(0, d.settle_at.getTime() - now));
  }

  /** No settlement starts after this; what is still pending is the next process's (see resume). */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** Waits for the settlements under way. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.settling]);
  }

  private schedule(e2eid: string, id: string, delayMs: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.settle(e2eid, id);
    }, delayMs);
    this.timers.add(timer);
  }

  private settle(e2eid: string, id: string): Promise<void> {
    const p = (async () => {
      const row = await settleDevolucao(this.o.db, e2eid, id, this.o.clock.now());
      if (row) await this.o.callbacks.notify(e2eid);
    })().catch((err) => this.o.logger.error({ err, e2eid, id }, 'sandbox PSP: settling a devolução failed'));
    this.settling.add(p);
    void p.finally(() => this.settling.delete(p));
    return p;
  }
}

function sameRequestOrRefuse(existing: DevolucaoRow, r: DevolucaoRequest): DevolucaoRow {
  if (existing.request_canonical === r.canonical) return existing;
  throw devolucaoInvalida('O id já foi utilizado por outra requisição de devolução para este e2eid.', 'id');
}
