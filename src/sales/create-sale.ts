import type { Queryable } from '../db/db.ts';
import { one } from '../db/sql.ts';
import { cardFingerprint } from '../domain/card.ts';
import { DEFAULT_FEE_SCHEDULE } from '../domain/fees.ts';
import type { SaleRequest } from '../domain/sale-request.ts';
import type { PixCharge, Providers } from '../providers/ports.ts';
import { qrPngDataUri } from '../qr/pix-qr.ts';

export interface SaleDeps {
  providers: Providers;
  cardFingerprintKey: string;
}

/** A sale as written: its id, the request it came from and what the method added. */
export interface CreatedSale {
  id: number;
  sale: SaleRequest;
  createdAt: Date;
  installments: number | null;
  pix: { code: string; expiresAt: Date | null; qrCodeBase64: string } | null;
  boleto: { code: string; barcode: string; dueDate: string } | null;
}

interface MethodFields {
  id: number | null;
  installments: number | null;
  card: { brand: string; lastFour: string; bin: string; fingerprint: string } | null;
  pix: { code: string; txid: string; expiresAt: Date | null; charge: PixCharge['charge'] } | null;
  boleto: { code: string; barcode: string; dueDate: string } | null;
  externalId: string;
  providerData: Record<string, unknown> | null;
}

// One statement writes the sale and its items (one round trip). The fee schedule in force is
// snapshotted from the seller's own schedule or the platform default.
const insert_sql = `
  WITH t AS (
    INSERT INTO transactions (id, seller_id, status, payment_method, amount, fee_schedule,
      customer_name, customer_email, customer_document, customer_phone, shipping, postback_url, installments,
      card_brand, card_last_four, card_bin, card_fingerprint, pix_code, pix_txid, pix_expires_at,
      boleto_code, boleto_barcode, boleto_due_date, external_transaction_id, provider_data, created_at, updated_at, pix_charge)
    SELECT coalesce($1::bigint, nextval('transactions_id_seq')), s.id, 'PENDENTE', $3, $4, coalesce(s.fee_schedule, (SELECT fee_schedule FROM platform_settings), $5::jsonb),
      $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22::date, $23, $24::jsonb, $25, $25, $30
    FROM sellers s WHERE s.id = $2
    RETURNING id
  ), i AS (
    INSERT INTO sale_items (transaction_id, title, unit_price, quantity, tangible)
    SELECT t.id, x.title, x.unit_price, x.quantity, x.tangible
    FROM t, unnest($26::text[], $27::bigint[], $28::int[], $29::bool[]) WITH ORDINALITY AS x (title, unit_price, quantity, tangible, n)
    ORDER BY x.n
  )
  SELECT id FROM t`;

/**
 * A PIX sale's charge, made before the sale is written and outside any database transaction: with
 * an expiry it is a call to the PSP (CONTRACT §11.1). Null for other methods.
 */
export async function prepareCharge(deps: SaleDeps, sale: SaleRequest): Promise<PixCharge | null> {
  if (sale.paymentMethod !== 'PIX') return null;
  const document = sale.customer.document;
  return deps.providers.pix.createCharge({
    amountCents: sale.amount,
    expiresInSeconds: sale.pix?.expiresInSeconds ?? null,
    debtor: document ? { name: sale.customer.name, document } : null,
  });
}

/**
 * Creates a sale (status PENDENTE) with its charge (`prepareCharge`'s, for PIX). Its only write is
 * one statement (the sale route relies on it to run outside a transaction); the boleto's id draw
 * before it writes nothing.
 */
export async function createSale(
  q: Queryable,
  deps: SaleDeps,
  sellerId: number,
  sale: SaleRequest,
  now: Date,
  charge: PixCharge | null,
): Promise<CreatedSale> {
  const m = await methodFields(q, deps, sale, now, charge);
  const r = await q.query<{ id: number }>(insert_sql, [
    m.id,
    sellerId,
    sale.paymentMethod,
    sale.amount,
    JSON.stringify(DEFAULT_FEE_SCHEDULE),
    sale.customer.name,
    sale.customer.email,
    sale.customer.document,
    sale.customer.phone,
    sale.shipping ? JSON.stringify(sale.shipping) : null,
    sale.postbackUrl,
    m.installments,
    m.card?.brand ?? null,
    m.card?.lastFour ?? null,
    m.card?.bin ?? null,
    m.card?.fingerprint ?? null,
    m.pix?.code ?? null,
    m.pix?.txid ?? null,
    m.pix?.expiresAt ?? null,
    m.boleto?.code ?? null,
    m.boleto?.barcode ?? null,
    m.boleto?.dueDate ?? null,
    m.externalId,
    m.providerData ? JSON.stringify(m.providerData) : null,
    now,
    sale.items.map((i) => i.title),
    sale.items.map((i) => i.unitPrice),
    sale.items.map((i) => i.quantity),
    sale.items.map((i) => i.tangible),
    m.pix?.charge ?? null,
  ]);
  return {
    id: one(r).id,
    sale,
    createdAt: now,
    installments: m.installments,
    pix: m.pix && { code: m.pix.code, expiresAt: m.pix.expiresAt, qrCodeBase64: qrPngDataUri(m.pix.code) },
    boleto: m.boleto,
  };
}

async function methodFields(q: Queryable, deps: SaleDeps, sale: SaleRequest, now: Date, charge: PixCharge | null): Promise<MethodFields> {
  const none = { id: null, installments: null, card: null, pix: null, boleto: null, providerData: null };
  switch (sale.paymentMethod) {
    case 'PIX': {
      if (!charge) throw new Error('a PIX sale is written with its charge (prepareCharge)');
      const seconds = sale.pix?.expiresInSeconds ?? null;
      const expiresAt = seconds === null ? null : new Date(now.getTime() + seconds * 1000);
      // CONTRACT §11.1: the transaction's externalTransactionId is the charge's txid.
      return { ...none, pix: { code: charge.brCode, txid: charge.txid, expiresAt, charge: charge.charge }, externalId: charge.txid };
    }
    case 'BOLETO': {
      // The boleto's free field carries the sale id, so the id is drawn before the insert.
      const id = one(await q.query<{ id: number }>("SELECT nextval('transactions_id_seq') AS id")).id;
      const dueDate = sale.boleto!.dueDate;
      const issued = deps.providers.boleto.issue({ saleId: id, amountCents: sale.amount, dueDate });
      return { ...none, id, boleto: { code: issued.digitableLine, barcode: issued.barcode, dueDate }, externalId: issued.externalId };
    }
    case 'CREDIT_CARD':
    case 'DEBIT_CARD': {
      const card = sale.card!;
      const installments = sale.installments ?? 1;
      // The sale id is the processor's reference for the payment (CONTRACT §11.2), so it is drawn first.
      const id = one(await q.query<{ id: number }>("SELECT nextval('transactions_id_seq') AS id")).id;
      const auth = deps.providers.card.authorize({
        saleId: Number(id),
        amountCents: sale.amount,
        installments,
        brand: card.brand,
        number: card.number,
      });
      return {
        ...none,
        id,
        installments: sale.paymentMethod === 'CREDIT_CARD' ? installments : null,
        card: { brand: card.brand, lastFour: card.lastFour, bin: card.bin, fingerprint: cardFingerprint(card.number, deps.cardFingerprintKey) },
        externalId: auth.externalId,
        providerData: auth.providerData,
      };
    }
  }
}
