/** MED infractions (sandbox_psp.infractions), and how Efí's API shows them. */
import type { Queryable } from './sql.ts';
import { maybeOne, one, run, sql } from './sql.ts';
import type { Infracao, InfracaoDecisao, InfracaoParte, InfracaoStatus } from './types.ts';
import { compact, iso } from './wire.ts';

export interface InfractionRow {
  id_infracao: string;
  seq: number;
  end_to_end_id: string;
  protocolo: number;
  status: InfracaoStatus;
  razao: string;
  defesa: string | null;
  justificativa_analista: string | null;
  abertura: Date;
  prazo: Date;
  recebimento_defesa: Date | null;
  finalizacao: Date | null;
  criado_em: Date;
  atualizado_em: Date;
}

/** An infraction with what it tells of its Pix: one row of the join, so a page is one query. */
export interface InfractionView extends InfractionRow {
  valor_cents: number;
  horario: Date;
  chave: string;
  pagador_cpf: string | null;
  pagador_cnpj: string | null;
}

export type NewInfraction = Pick<InfractionRow, 'id_infracao' | 'end_to_end_id' | 'razao' | 'abertura' | 'prazo'>;

/** An infraction not decided yet: the one a Pix may have at a time. */
export const isOpen = (status: InfracaoStatus): boolean => status === 'ABERTA' || status === 'EM_DEFESA';

// The Pix's columns an infraction shows; `i` is the infraction, `p` its Pix.
const VIEW = sql`i.*, p.valor_cents, p.horario, p.chave, p.pagador_cpf, p.pagador_cnpj`;

export async function insertInfraction(q: Queryable, n: NewInfraction): Promise<InfractionRow> {
  const r = await run<InfractionRow>(
    q,
    sql`INSERT INTO sandbox_psp.infractions (id_infracao, end_to_end_id, status, razao, abertura, prazo, criado_em, atualizado_em)
        VALUES (${n.id_infracao}, ${n.end_to_end_id}, 'ABERTA', ${n.razao}, ${n.abertura}, ${n.prazo}, ${n.abertura}, ${n.abertura})
        RETURNING *`,
  );
  return one(r);
}

export async function findInfraction(q: Queryable, id: string, lock = false): Promise<InfractionRow | null> {
  const r = lock
    ? await run<InfractionRow>(q, sql`SELECT * FROM sandbox_psp.infractions WHERE id_infracao = ${id} FOR UPDATE`)
    : await run<InfractionRow>(q, sql`SELECT * FROM sandbox_psp.infractions WHERE id_infracao = ${id}`);
  return maybeOne(r);
}

export async function viewOf(q: Queryable, id: string): Promise<InfractionView | null> {
  const r = await run<InfractionView>(
    q,
    sql`SELECT ${VIEW} FROM sandbox_psp.infractions i JOIN sandbox_psp.pix p USING (end_to_end_id) WHERE i.id_infracao = ${id}`,
  );
  return maybeOne(r);
}

/** The Pix's infraction not decided yet, if it has one. */
export async function openInfractionOf(q: Queryable, e2eid: string): Promise<InfractionRow | null> {
  const r = await run<InfractionRow>(
    q,
    sql`SELECT * FROM sandbox_psp.infractions WHERE end_to_end_id = ${e2eid} AND status IN ('ABERTA', 'EM_DEFESA')`,
  );
  return maybeOne(r);
}

/** ABERTA → EM_DEFESA with the receiver's justification. */
export async function defendInfraction(q: Queryable, id: string, defesa: string, now: Date): Promise<void> {
  await run(
    q,
    sql`UPDATE sandbox_psp.infractions SET status = 'EM_DEFESA', defesa = ${defesa}, recebimento_defesa = ${now}, atualizado_em = ${now}
        WHERE id_infracao = ${id} AND status = 'ABERTA'`,
  );
}

/** ABERTA or EM_DEFESA → the decision; the row, or null when it was decided already. */
export async function decideInfraction(
  q: Queryable,
  id: string,
  status: InfracaoDecisao,
  justificativa: string,
  now: Date,
): Promise<InfractionRow | null> {
  const r = await run<InfractionRow>(
    q,
    sql`UPDATE sandbox_psp.infractions SET status = ${status}, justificativa_analista = ${justificativa}, finalizacao = ${now}, atualizado_em = ${now}
        WHERE id_infracao = ${id} AND status IN ('ABERTA', 'EM_DEFESA')
        RETURNING *`,
  );
  return maybeOne(r);
}

/**
 * One page of GET /v2/gn/infracoes, oldest first, and how many infractions the period holds: one
 * statement, the count and the page each an index walk over (criado_em, seq), the Pix joined by key.
 * A page past the end is a single row of nulls but for the count.
 */
export async function listInfractions(
  q: Queryable,
  inicio: Date,
  fim: Date,
  page: number,
  perPage: number,
): Promise<{ total: number; rows: InfractionView[] }> {
  const r = await run<InfractionView & { total: number }>(
    q,
    sql`SELECT t.total, v.* FROM
          (SELECT count(*)::int AS total FROM sandbox_psp.infractions WHERE criado_em >= ${inicio} AND criado_em <= ${fim}) t
        LEFT JOIN LATERAL (
          SELECT ${VIEW} FROM sandbox_psp.infractions i JOIN sandbox_psp.pix p USING (end_to_end_id)
          WHERE i.criado_em >= ${inicio} AND i.criado_em <= ${fim}
          ORDER BY i.criado_em, i.seq LIMIT ${perPage} OFFSET ${page * perPage}
        ) v ON true
        ORDER BY v.criado_em, v.seq`,
  );
  const total = Number(one(r).total);
  return { total, rows: r.rows.filter((row) => row.id_infracao !== null) };
}

/** The two sides of the contested Pix: the payer's told by its Pix, the receiver's (this account) fixed. */
export interface InfractionParties {
  payer(view: InfractionView): InfracaoParte;
  receiver: InfracaoParte;
}

/** An item of GET /v2/gn/infracoes, and the answer of a defence. */
export function infracaoJson(v: InfractionView, parties: InfractionParties): Infracao {
  return compact({
    idInfracao: v.id_infracao,
    endToEndId: v.end_to_end_id,
    protocolo: Number(v.protocolo),
    dataTransacao: iso(v.horario),
    // Reais as a number: cents / 100 is the nearest double to the amount, which prints as written (147.02).
    valor: Number(v.valor_cents) / 100,
    chave: v.chave,
    status: v.status,
    razao: v.razao,
    tipoSituacao: 'golpe' as const,
    defesa: v.defesa ?? undefined,
    justificativaAnalista: v.justificativa_analista ?? undefined,
    // Efí's support ticket of the case: the sandbox opens one per infraction, numbered as it was opened.
    identificadorTicket: [Number(v.seq)],
    dadosAnalise: compact({
      abertura: iso(v.abertura),
      prazoFinalizacao: iso(v.prazo),
      recebimentoDefesa: v.recebimento_defesa ? iso(v.recebimento_defesa) : undefined,
      finalizacao: v.finalizacao ? iso(v.finalizacao) : undefined,
    }),
    origem: parties.payer(v),
    destino: parties.receiver,
    criadoEm: iso(v.criado_em),
    atualizadoEm: iso(v.atualizado_em),
  });
}
