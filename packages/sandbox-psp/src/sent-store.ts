/** Pix sent by the embedded PSP (sandbox_psp.sent), and how Efí's API shows them. */
import type { Queryable } from './sql.ts';
import { maybeOne, one, run, sql } from './sql.ts';
import { compact, iso, valorOf } from './wire.ts';

export type SentStatus = 'EM_PROCESSAMENTO' | 'REALIZADO' | 'NAO_REALIZADO';

export interface SentReturn {
  id: string;
  rtrId: string;
  valor: string;
  horario: { solicitacao: string; liquidacao: string };
  status: 'DEVOLVIDO';
}

export interface SentRow {
  id_envio: string;
  end_to_end_id: string;
  valor_cents: number;
  pagador_chave: string;
  info_pagador: string | null;
  favorecido_chave: string;
  favorecido_documento: string | null;
  status: SentStatus;
  motivo: string | null;
  solicitacao: Date;
  liquidacao: Date | null;
  settle_at: Date;
  request_canonical: string;
  devolucoes: SentReturn[];
  /** A second booking of the same send (a PSP fault a test arms): listed, never what a read by idEnvio finds. */
  duplicate: boolean;
}

export async function insertSent(q: Queryable, row: Omit<SentRow, 'devolucoes' | 'liquidacao' | 'duplicate'>, duplicate = false): Promise<SentRow> {
  const r = await run<SentRow>(
    q,
    sql`INSERT INTO sandbox_psp.sent (id_envio, end_to_end_id, valor_cents, pagador_chave, info_pagador, favorecido_chave, favorecido_documento,
          status, motivo, solicitacao, settle_at, request_canonical, duplicate)
        VALUES (${row.id_envio}, ${row.end_to_end_id}, ${row.valor_cents}, ${row.pagador_chave}, ${row.info_pagador}, ${row.favorecido_chave},
          ${row.favorecido_documento}, ${row.status}, ${row.motivo}, ${row.solicitacao}, ${row.settle_at}, ${row.request_canonical}, ${duplicate})
        RETURNING *`,
  );
  return one(r);
}

export async function findSent(q: Queryable, idEnvio: string, lock = false): Promise<SentRow | null> {
  const r = lock
    ? await run<SentRow>(q, sql`SELECT * FROM sandbox_psp.sent WHERE id_envio = ${idEnvio} AND NOT duplicate FOR UPDATE`)
    : await run<SentRow>(q, sql`SELECT * FROM sandbox_psp.sent WHERE id_envio = ${idEnvio} AND NOT duplicate`);
  return maybeOne(r);
}

export async function pendingSent(q: Queryable): Promise<SentRow[]> {
  return (await run<SentRow>(q, sql`SELECT * FROM sandbox_psp.sent WHERE status = 'EM_PROCESSAMENTO' ORDER BY settle_at`)).rows;
}

/**
 * Settles a sent Pix still under way: REALIZADO, or NAO_REALIZADO when it carries a refusal; a
 * duplicate booking with it. The request's own row, or null when it was already settled.
 */
export async function settleSent(q: Queryable, idEnvio: string, at: Date): Promise<SentRow | null> {
  const r = await run<SentRow>(
    q,
    sql`UPDATE sandbox_psp.sent SET status = CASE WHEN motivo IS NULL THEN 'REALIZADO' ELSE 'NAO_REALIZADO' END,
          liquidacao = CASE WHEN motivo IS NULL THEN ${at}::timestamptz END
        WHERE id_envio = ${idEnvio} AND status = 'EM_PROCESSAMENTO' RETURNING *`,
  );
  return r.rows.find((row) => !row.duplicate) ?? null;
}

export async function addReturn(q: Queryable, idEnvio: string, ret: SentReturn): Promise<SentRow> {
  const r = await run<SentRow>(
    q,
    sql`UPDATE sandbox_psp.sent SET devolucoes = devolucoes || ${JSON.stringify([ret])}::jsonb WHERE id_envio = ${idEnvio} AND NOT duplicate
        RETURNING *`,
  );
  return one(r);
}

/**
 * The paying key's balance: its float, plus Pix received and sent Pix returned, less devoluções
 * made and Pix sent that were not refused. Read under the caller's lock on sending.
 */
export async function payerBalanceCents(q: Queryable, chave: string, floatCents: number): Promise<number> {
  const r = await run<{ balance: string }>(
    q,
    sql`SELECT (${floatCents}::bigint
        + (SELECT coalesce(sum(valor_cents), 0) FROM sandbox_psp.pix WHERE chave = ${chave})
        - (SELECT coalesce(sum(d.valor_cents), 0) FROM sandbox_psp.devolucoes d JOIN sandbox_psp.pix p USING (end_to_end_id)
            WHERE p.chave = ${chave} AND d.status <> 'NAO_REALIZADO')
        - (SELECT coalesce(sum(valor_cents), 0) FROM sandbox_psp.sent WHERE pagador_chave = ${chave} AND status <> 'NAO_REALIZADO')
        + (SELECT coalesce(sum((r->>'valor')::numeric * 100), 0) FROM sandbox_psp.sent, jsonb_array_elements(devolucoes) r
            WHERE pagador_chave = ${chave}))::text AS balance`,
  );
  return Number(one(r).balance);
}

/**
 * The account's balance, as GET /v2/gn/saldo tells it: the paying key's balance (its float
 * included: the money the account held before any movement) plus the boletos paid at a bank. A
 * boleto paid by its Pix is not added: that Pix is already among those received.
 */
export async function accountBalanceCents(q: Queryable, chave: string, floatCents: number): Promise<number> {
  const boletos = await run<{ cents: number }>(
    q,
    sql`SELECT coalesce(sum((h ->> 'value')::bigint), 0)::bigint AS cents FROM sandbox_psp.charges c, jsonb_array_elements(c.history) h
        WHERE h ->> 'status' = 'paid' AND h ->> 'value' IS NOT NULL AND (h ->> 'via') IS DISTINCT FROM 'pix'`,
  );
  return (await payerBalanceCents(q, chave, floatCents)) + Number(one(boletos).cents);
}

export interface SentFilter {
  inicio: Date;
  fim: Date;
  status: SentStatus | null;
  /** The payee's document, as Efí's cpf/cnpj filters take it. */
  documento: string | null;
}

/** One page of GET /v2/gn/pix/enviados, oldest request first (duplicates included), and how many match in all. */
export async function listSent(q: Queryable, f: SentFilter, page: number, perPage: number): Promise<{ total: number; rows: SentRow[] }> {
  const where = sql`s.solicitacao >= ${f.inicio} AND s.solicitacao <= ${f.fim}
    AND (${f.status}::text IS NULL OR s.status = ${f.status}::text)
    AND (${f.documento}::text IS NULL OR s.favorecido_documento = ${f.documento}::text)`;
  const total = one(await run<{ n: number }>(q, sql`SELECT count(*)::int AS n FROM sandbox_psp.sent s WHERE ${where}`)).n;
  const rows = await run<SentRow>(
    q,
    sql`SELECT s.* FROM sandbox_psp.sent s WHERE ${where} ORDER BY s.solicitacao, s.seq LIMIT ${perPage} OFFSET ${page * perPage}`,
  );
  return { total, rows: rows.rows };
}

/** Efí's GET /v2/gn/pix/enviados/id-envio/{idEnvio} answer, and an item of GET /v2/gn/pix/enviados. */
export function sentJson(row: SentRow) {
  return compact({
    endToEndId: row.end_to_end_id,
    idEnvio: row.id_envio,
    valor: valorOf(row.valor_cents),
    chave: row.pagador_chave,
    status: row.status,
    infoPagador: row.info_pagador ?? undefined,
    horario: compact({ solicitacao: iso(row.solicitacao), liquidacao: row.liquidacao ? iso(row.liquidacao) : undefined }),
    favorecido: { chave: row.favorecido_chave },
    gnExtras: row.status === 'NAO_REALIZADO' && row.motivo ? { erro: { codigo: 'AB03', motivo: row.motivo } } : undefined,
    devolucoes: row.devolucoes.length > 0 ? row.devolucoes : undefined,
  });
}

/** The callback item of a sent Pix, as Efí posts it to the paying key's webhook. */
export function sentCallbackItem(row: SentRow) {
  return compact({
    endToEndId: row.end_to_end_id,
    chave: row.favorecido_chave,
    status: row.status,
    tipo: 'SOLICITACAO',
    valor: valorOf(row.valor_cents),
    horario: iso(row.liquidacao ?? row.solicitacao),
    gnExtras: compact({
      idEnvio: row.id_envio,
      erro: row.status === 'NAO_REALIZADO' && row.motivo ? { codigo: 'AB03', motivo: row.motivo } : undefined,
    }),
    devolucoes: row.devolucoes.length > 0 ? row.devolucoes : undefined,
  });
}
