/**
 * MED infractions (MED 2.0, as Efí's API tells them): the payer's bank contests a Pix received here
 * (ABERTA), the receiver may send its defence once (EM_DEFESA), and the payer's bank or Efí decides
 * (ACEITA, REJEITADA, CANCELADA_EFI). An infraction accepted takes back what is left of the Pix as a
 * MED devolução, the way Devolucoes.openMed makes one: DEVOLVIDO at once, then the callback.
 */
import { randomUUID } from 'node:crypto';
import { committedCents } from './devolucao-store.ts';
import type { Devolucoes } from './devolucoes.ts';
import {
  decideInfraction,
  defendInfraction,
  findInfraction,
  type InfractionParties,
  type InfractionView,
  infracaoJson,
  insertInfraction,
  isOpen,
  listInfractions,
  openInfractionOf,
  viewOf,
} from './infraction-store.ts';
import { findPix } from './pix-store.ts';
import { notFound, problem } from './problems.ts';
import type { Db } from './sql.ts';
import type { Infracao, InfracaoDecisao, PspClock, SandboxPsp } from './types.ts';

// The MED's analysis period: the receiver's PSP has 7 days from the opening to defend and decide.
const ANALYSIS_MS = 7 * 24 * 3600 * 1000;
const DEFAULT_RAZAO = 'Golpe do falso vendedor relatado pelo pagador';
const RAZAO_MAX = 2000;
const REFUSED = 'Defesa recusada: prazo de análise encerrado (falha simulada pelo sandbox).';
const DECISIONS: readonly InfracaoDecisao[] = ['ACEITA', 'REJEITADA', 'CANCELADA_EFI'];
const JUSTIFICATIVAS: Record<InfracaoDecisao, string> = {
  ACEITA: 'Infração procedente: o PSP do pagador confirmou a fraude e pediu a devolução dos recursos.',
  REJEITADA: 'Infração improcedente: não houve indício de fraude na transação.',
  CANCELADA_EFI: 'Infração cancelada pela Efí.',
};

/** A lever's refusal, with the HTTP status a route would answer it with. */
function leverError(status: 404 | 409, message: string): Error {
  return Object.assign(new Error(message), { statusCode: status });
}

export interface InfractionsOptions {
  db: Db;
  clock: PspClock;
  devolucoes: Devolucoes;
  /** The account's holder (the receiver of every Pix here): the infraction's `destino`. */
  receiver: { nome: string; documento: string };
}

export class Infractions {
  private refusals = 0;
  readonly parties: InfractionParties;

  constructor(private readonly o: InfractionsOptions) {
    this.parties = {
      // The payer's bank is the one in the Pix's end-to-end id (the sandbox's placeholder ISPB); its
      // client is known by the document the Pix came with, when it came with one.
      payer: (v: InfractionView) => ({
        nomeParticipante: 'Banco do pagador (sandbox)',
        conta: 1234567,
        nome: 'Pagador',
        documento: v.pagador_cpf ?? v.pagador_cnpj ?? '',
      }),
      receiver: { nomeParticipante: 'EFI S.A. (sandbox)', conta: 7654321, nome: o.receiver.nome, documento: o.receiver.documento },
    };
  }

  refuseNext(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`refuseNextDefenses: ${n} is not a count`);
    this.refusals += n;
  }

  /** A page of GET /v2/gn/infracoes. */
  async list(inicio: Date, fim: Date, page: number, perPage: number): Promise<{ total: number; infracoes: Infracao[] }> {
    const { total, rows } = await listInfractions(this.o.db, inicio, fim, page, perPage);
    return { total, infracoes: rows.map((v) => infracaoJson(v, this.parties)) };
  }

  /** The payer's bank contests the Pix: a new infraction ABERTA. */
  async open(e2eid: string, razao: string = DEFAULT_RAZAO): Promise<{ idInfracao: string }> {
    if (typeof razao !== 'string' || razao.trim() === '' || razao.length > RAZAO_MAX) {
      throw new RangeError(`openInfraction: razao must be 1–${RAZAO_MAX} characters`);
    }
    return this.o.db.tx(async (q) => {
      // The Pix's lock makes two contests of one Pix wait for each other; the partial unique index backs it.
      if (!(await findPix(q, e2eid, true))) throw leverError(404, `openInfraction: no Pix ${e2eid}`);
      const pending = await openInfractionOf(q, e2eid);
      if (pending) {
        throw leverError(409, `openInfraction: Pix ${e2eid} already has infraction ${pending.id_infracao}, ${pending.status}`);
      }
      const now = this.o.clock.now();
      const row = await insertInfraction(q, {
        id_infracao: randomUUID(),
        end_to_end_id: e2eid,
        razao,
        abertura: now,
        prazo: new Date(now.getTime() + ANALYSIS_MS),
      });
      return { idInfracao: row.id_infracao };
    });
  }

  /**
   * POST /v2/gn/infracoes/{idInfracao}/defesa: the receiver's defence of an infraction ABERTA. An
   * armed refusal is taken by a defence that would be accepted, and only by such a one.
   */
  async defend(id: string, justificativa: string): Promise<Infracao> {
    const refuse = this.refusals > 0;
    if (refuse) this.refusals--;
    let refused = false;
    try {
      const view = await this.o.db.tx(async (q) => {
        const row = await findInfraction(q, id, true);
        if (!row) throw notFound('InfracaoNaoEncontrada', 'Infração não encontrada para o idInfracao informado.');
        if (row.status !== 'ABERTA') {
          throw problem(409, 'InfracaoNaoAberta', 'Infração não está aberta.', `A infração não está aberta (status ${row.status}).`);
        }
        if (refuse) {
          refused = true;
          throw problem(400, 'InfracaoDefesaRecusada', 'Defesa recusada.', REFUSED);
        }
        await defendInfraction(q, id, justificativa, this.o.clock.now());
        return (await viewOf(q, id))!;
      });
      return infracaoJson(view, this.parties);
    } finally {
      if (refuse && !refused) this.refusals++;
    }
  }

  /**
   * The decision. Committed first: an accepted infraction's devolução follows, of what is left of
   * the Pix then (devoluções made or under way count as gone), and none when nothing is left.
   */
  async resolve(id: string, status: InfracaoDecisao, options: { withoutDevolucao?: true } = {}): Promise<void> {
    if (!DECISIONS.includes(status)) throw new RangeError(`resolveInfraction: status ${status}`);
    const decided = await this.o.db.tx(async (q) => {
      const row = await findInfraction(q, id, true);
      if (!row) throw leverError(404, `resolveInfraction: no infraction ${id}`);
      if (!isOpen(row.status)) throw leverError(409, `resolveInfraction: infraction ${id} is ${row.status} already`);
      return (await decideInfraction(q, id, status, JUSTIFICATIVAS[status], this.o.clock.now()))!;
    });
    if (status !== 'ACEITA' || options.withoutDevolucao) return;
    const e2eid = decided.end_to_end_id;
    const pix = (await findPix(this.o.db, e2eid))!;
    const left = pix.valor_cents - (await committedCents(this.o.db, e2eid));
    if (left > 0) await this.o.devolucoes.openMed(e2eid, left, 'MED_FRAUDE');
  }

  /** The handle's levers. */
  levers(): Pick<SandboxPsp, 'openInfraction' | 'resolveInfraction' | 'refuseNextDefenses'> {
    return {
      openInfraction: (e2eid, input = {}) => this.open(e2eid, input.razao),
      resolveInfraction: (id, status, options) => this.resolve(id, status, options),
      refuseNextDefenses: (n) => this.refuseNext(n),
    };
  }
}
