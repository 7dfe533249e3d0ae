/** Charges (`cob`) in sandbox_psp.cobs, and how the API Pix shows them. */

import type { CobFields, Devedor, InfoAdicional } from './cob-validate.ts';
import type { Queryable } from './sql.ts';
import { batchedPer, maybeOne, one, run, sql } from './sql.ts';
import type { CobStatus } from './types.ts';
import { compact, iso, valorOf } from './wire.ts';

export interface CobRow {
  txid: string;
  revisao: number;
  status: CobStatus;
  criacao: Date;
  expiracao: number;
  original_cents: number;
  modalidade_alteracao: 0 | 1;
  chave: string;
  devedor: Devedor | null;
  solicitacao_pagador: string | null;
  info_adicionais: InfoAdicional[] | null;
  loc_id: number;
  loc_token: string;
  location: string;
  loc_criacao: Date;
  pix_copia_e_cola: string;
}

export interface NewCob {
  txid: string;
  fields: CobFields;
  criacao: Date;
  locToken: string;
  location: string;
  pixCopiaECola: string;
}

const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

export async function findCob(q: Queryable, txid: string, lock = false): Promise<CobRow | null> {
  const r = lock
    ? await run<CobRow>(q, sql`SELECT * FROM sandbox_psp.cobs WHERE txid = ${txid} FOR UPDATE`)
    : await run<CobRow>(q, sql`SELECT * FROM sandbox_psp.cobs WHERE txid = ${txid}`);
  return maybeOne(r);
}

export async function findCobByToken(q: Queryable, token: string): Promise<CobRow | null> {
  return maybeOne(await run<CobRow>(q, sql`SELECT * FROM sandbox_psp.cobs WHERE loc_token = ${token}`));
}

// jsonb refuses a lone surrogate that a text parameter turns into U+FFFD: it is replaced alike.
const jsonText = (value: unknown) => JSON.stringify(value, (_, v: unknown) => (typeof v === 'string' ? v.replace(/[\ud800-\udfff]/gu, '\ufffd') : v));

/** The new charge, or null when the txid is taken (by a concurrent PUT, say): the caller reads that one. */
export async function insertCob(q: Queryable, c: NewCob): Promise<CobRow | null> {
  return (await insertCobs(q, [c]))[0]!;
}

/** New charges in one statement: each charge's row, or null when its txid is taken. */
async function insertCobs(q: Queryable, cobs: NewCob[]): Promise<(CobRow | null)[]> {
  const input = jsonText(
    cobs.map((c) => ({
      txid: c.txid,
      criacao: c.criacao,
      expiracao: c.fields.expiracao,
      original_cents: c.fields.originalCents,
      modalidade_alteracao: c.fields.modalidadeAlteracao,
      chave: c.fields.chave,
      devedor: c.fields.devedor ?? null,
      solicitacao_pagador: c.fields.solicitacaoPagador ?? null,
      info_adicionais: c.fields.infoAdicionais ?? null,
      loc_token: c.locToken,
      location: c.location,
      pix_copia_e_cola: c.pixCopiaECola,
    })),
  );
  const r = await run<CobRow>(
    q,
    sql`INSERT INTO sandbox_psp.cobs (txid, criacao, expiracao, original_cents, modalidade_alteracao, chave, devedor,
          solicitacao_pagador, info_adicionais, loc_token, location, loc_criacao, pix_copia_e_cola)
        SELECT x.txid, x.criacao, x.expiracao, x.original_cents, x.modalidade_alteracao, x.chave, x.devedor,
          x.solicitacao_pagador, x.info_adicionais, x.loc_token, x.location, x.criacao, x.pix_copia_e_cola
        FROM jsonb_to_recordset(${input}::jsonb) AS x (txid text, criacao timestamptz, expiracao integer, original_cents bigint,
          modalidade_alteracao smallint, chave text, devedor jsonb, solicitacao_pagador text, info_adicionais jsonb,
          loc_token text, location text, pix_copia_e_cola text)
        ORDER BY x.txid
        ON CONFLICT (txid) DO NOTHING RETURNING *`,
  );
  const made = new Map(r.rows.map((row) => [row.txid, row]));
  return cobs.map((c) => made.get(c.txid) ?? null);
}

/** insertCob outside a transaction, in one statement with the charges made meanwhile (a burst of PUTs shares one round trip and one commit). */
export const insertCobInGroup = batchedPer(insertCobs, (c: NewCob) => c.txid);

/** A revision: new fields (and status), revisao + 1. */
export async function reviseCob(q: Queryable, txid: string, f: CobFields, status: CobStatus): Promise<CobRow> {
  const r = await run<CobRow>(
    q,
    sql`UPDATE sandbox_psp.cobs SET revisao = revisao + 1, status = ${status}, expiracao = ${f.expiracao},
          original_cents = ${f.originalCents}, modalidade_alteracao = ${f.modalidadeAlteracao}, chave = ${f.chave},
          devedor = ${json(f.devedor)}::jsonb, solicitacao_pagador = ${f.solicitacaoPagador ?? null},
          info_adicionais = ${json(f.infoAdicionais)}::jsonb
        WHERE txid = ${txid} RETURNING *`,
  );
  return one(r);
}

/** Paid: a change of state, not a revision by the receiver, so revisao stays. */
export async function concludeCob(q: Queryable, txid: string): Promise<void> {
  await run(q, sql`UPDATE sandbox_psp.cobs SET status = 'CONCLUIDA' WHERE txid = ${txid} AND status = 'ATIVA'`);
}

export async function saveRevision(q: Queryable, row: CobRow): Promise<void> {
  await run(
    q,
    sql`INSERT INTO sandbox_psp.cob_revisoes (txid, revisao, cob) VALUES (${row.txid}, ${row.revisao}, ${JSON.stringify(cobJson(row))}::jsonb)
        ON CONFLICT DO NOTHING`,
  );
}

export async function findRevision(q: Queryable, txid: string, revisao: number): Promise<Record<string, unknown> | null> {
  const r = await run<{ cob: Record<string, unknown> }>(
    q,
    sql`SELECT cob FROM sandbox_psp.cob_revisoes WHERE txid = ${txid} AND revisao = ${revisao}`,
  );
  return maybeOne(r)?.cob ?? null;
}

export function fieldsOf(row: CobRow): CobFields {
  return compact({
    expiracao: row.expiracao,
    originalCents: row.original_cents,
    modalidadeAlteracao: row.modalidade_alteracao,
    chave: row.chave,
    devedor: row.devedor ?? undefined,
    solicitacaoPagador: row.solicitacao_pagador ?? undefined,
    infoAdicionais: row.info_adicionais ?? undefined,
  });
}

/** True once calendario.criacao + expiracao has passed; the status stays ATIVA (CobrancaStatus says so). */
export function isExpired(row: CobRow, now: Date): boolean {
  return now.getTime() >= row.criacao.getTime() + row.expiracao * 1000;
}

/** CobGerada / CobCompleta without `pix` (the caller adds the Pix received). */
export function cobJson(row: CobRow): Record<string, unknown> {
  return compact({
    calendario: { criacao: iso(row.criacao), expiracao: row.expiracao },
    txid: row.txid,
    revisao: row.revisao,
    // The file requires txid in CobGerada's loc (PayloadLocationCompleta's shape), beyond PayloadLocation's own fields.
    loc: { id: row.loc_id, txid: row.txid, location: row.location, tipoCob: 'cob', criacao: iso(row.loc_criacao) },
    location: row.location,
    status: row.status,
    devedor: row.devedor,
    valor: { original: valorOf(row.original_cents), modalidadeAlteracao: row.modalidade_alteracao },
    chave: row.chave,
    solicitacaoPagador: row.solicitacao_pagador,
    infoAdicionais: row.info_adicionais,
    pixCopiaECola: row.pix_copia_e_cola,
  });
}

/** The location payload (CobPayload): what a payer's app shows, signed. */
export function cobPayloadJson(row: CobRow, apresentacao: Date): Record<string, unknown> {
  return compact({
    calendario: { criacao: iso(row.criacao), apresentacao: iso(apresentacao), expiracao: row.expiracao },
    txid: row.txid,
    revisao: row.revisao,
    status: row.status,
    devedor: row.devedor,
    valor: { original: valorOf(row.original_cents), modalidadeAlteracao: row.modalidade_alteracao },
    chave: row.chave,
    solicitacaoPagador: row.solicitacao_pagador,
    infoAdicionais: row.info_adicionais,
  });
}
