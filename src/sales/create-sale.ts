import type { Queryable } from '../db/db.ts';
import { one, run, sql } from '../db/sql.ts';
import { cardFingerprint } from '../domain/card.ts';
import { DEFAULT_FEE_SCHEDULE } from '../domain/fees.ts';
import { ok, type Result, refuse } from '../domain/result.ts';
import type { SaleRequest } from '../domain/sale-request.ts';
import { operation, type PixCharge, type ProviderName, type Providers } from '../providers/ports.ts';
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
  provider: ProviderName;
  card: { brand: string; lastFour: string; bin: string; fingerprint: string } | null;
  pix: { code: string; txid: string; expiresAt: Date | null; charge: PixCharge['charge'] } | null;
  boleto: { code: string; barcode: string; dueDate: string } | null;
  externalId: string;
  providerData: Record<string, unknown> | null;
}

/**
 * A PIX sale's charge, made before the sale is written and outside any database transaction: with
 * an expiry it is a call to the PSP (CONTRACT §11.1). Null for other methods; a refusal when the PSP
 * did not make it (nothing is written then).
 */
export async function prepareCharge(deps: SaleDeps, sale: SaleRequest): Promise<Result<PixCharge | null>> {
  if (sale.paymentMethod !== 'PIX') return ok(null);
  const document = sale.customer.document;
  const charged = await operation(
    deps.providers.connector(deps.providers.rails.PIX),
    'charge',
  )({
    amountCents: sale.amount,
    expiresInSeconds: sale.pix.expiresInSeconds,
    debtor: document ? { name: sale.customer.name, document } : null,
  });
  return charged.ok ? ok(charged.charge) : refuse('PROVIDER_ERROR', charged.reason);
}

/**
 * Creates a sale (status PENDENTE) with its charge (`prepareCharge`'s, for PIX). Its only write is
 * one statement (the sale route relies on it to run outside a transaction); the id drawn before it,
 * for boletos and cards, writes nothing.
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
  const id = one(await run<{ id: number }>(q, insertSale(sellerId, sale, m, now))).id;
  return {
    id,
    sale,
    createdAt: now,
    installments: sale.installments,
    pix: m.pix && { code: m.pix.code, expiresAt: m.pix.expiresAt, qrCodeBase64: qrPngDataUri(m.pix.code) },
    boleto: m.boleto,
  };
}

// One statement writes the sale and its items (one round trip). The fee schedule in force is
// snapshotted from the seller's own schedule or the platform default.
function insertSale(sellerId: number, sale: SaleRequest, m: MethodFields, now: Date) {
  return sql`
  WITH t AS (
    INSERT INTO transactions (id, seller_id, status, payment_method, amount, fee_schedule,
      customer_name, customer_email, customer_document, customer_phone, shipping, postback_url, installments,
      card_brand, card_last_four, card_bin, card_fingerprint, pix_code, pix_txid, pix_expires_at,
      boleto_code, boleto_barcode, boleto_due_date, external_transaction_id, provider_data, created_at, updated_at, pix_charge, provider)
    SELECT coalesce(${m.id}::bigint, nextval('transactions_id_seq')), s.id, 'PENDENTE', ${sale.paymentMethod}, ${sale.amount},
      coalesce(s.fee_schedule, (SELECT fee_schedule FROM platform_settings), ${JSON.stringify(DEFAULT_FEE_SCHEDULE)}::jsonb),
      ${sale.customer.name}, ${sale.customer.email}, ${sale.customer.document}, ${sale.customer.phone},
      ${sale.shipping ? JSON.stringify(sale.shipping) : null}::jsonb, ${sale.postbackUrl}, ${sale.installments},
      ${m.card?.brand ?? null}, ${m.card?.lastFour ?? null}, ${m.card?.bin ?? null}, ${m.card?.fingerprint ?? null},
      ${m.pix?.code ?? null}, ${m.pix?.txid ?? null}, ${m.pix?.expiresAt ?? null},
      ${m.boleto?.code ?? null}, ${m.boleto?.barcode ?? null}, ${m.boleto?.dueDate ?? null}::date, ${m.externalId},
      ${m.providerData ? JSON.stringify(m.providerData) : null}::jsonb, ${now}, ${now}, ${m.pix?.charge ?? null}, ${m.provider}
    FROM sellers s WHERE s.id = ${sellerId}
    RETURNING id
  ), i AS (
    INSERT INTO sale_items (transaction_id, title, unit_price, quantity, tangible)
    SELECT t.id, x.title, x.unit_price, x.quantity, x.tangible
    FROM t, unnest(${sale.items.map((i) => i.title)}::text[], ${sale.items.map((i) => i.unitPrice)}::bigint[],
      ${sale.items.map((i) => i.quantity)}::int[], ${sale.items.map((i) => i.tangible)}::bool[]) WITH ORDINALITY AS x (title, unit_price, quantity, tangible, n)
    ORDER BY x.n
  )
  SELECT id FROM t`;
}

/** The sale id, drawn before the write where the provider's reference carries it. */
const drawId = async (q: Queryable) => Number(one(await run<{ id: number }>(q, sql`SELECT nextval('transactions_id_seq') AS id`)).id);

async function methodFields(q: Queryable, deps: SaleDeps, sale: SaleRequest, now: Date, charge: PixCharge | null): Promise<MethodFields> {
  const none = { id: null, card: null, pix: null, boleto: null, providerData: null };
  const provider = deps.providers.rails[sale.paymentMethod];
  const connector = deps.providers.connector(provider);
  switch (sale.paymentMethod) {
    case 'PIX': {
      if (!charge) throw new Error('a PIX sale is written with its charge (prepareCharge)');
      const seconds = sale.pix.expiresInSeconds;
      const expiresAt = seconds === null ? null : new Date(now.getTime() + seconds * 1000);
      // CONTRACT §11.1: the transaction's externalTransactionId is the charge's txid.
      return { ...none, provider, pix: { code: charge.brCode, txid: charge.txid, expiresAt, charge: charge.charge }, externalId: charge.txid };
    }
    case 'BOLETO': {
      // The boleto's free field carries the sale id.
      const id = await drawId(q);
      const dueDate = sale.boleto.dueDate;
      const issued = operation(connector, 'issue')({ saleId: id, amountCents: sale.amount, dueDate });
      return { ...none, id, provider, boleto: { code: issued.digitableLine, barcode: issued.barcode, dueDate }, externalId: issued.externalId };
    }
    case 'CREDIT_CARD':
    case 'DEBIT_CARD': {
      const { card } = sale;
      // The sale id is the processor's reference for the payment (CONTRACT §11.2).
      const id = await drawId(q);
      const reference = operation(
        connector,
        'reference',
      )({
        saleId: id,
        amountCents: sale.amount,
        installments: sale.installments ?? 1,
        brand: card.brand,
        number: card.number,
      });
      return {
        ...none,
        id,
        provider,
        card: { brand: card.brand, lastFour: card.lastFour, bin: card.bin, fingerprint: cardFingerprint(card.number, deps.cardFingerprintKey) },
        externalId: reference.externalId,
        providerData: reference.providerData,
      };
    }
  }
}
