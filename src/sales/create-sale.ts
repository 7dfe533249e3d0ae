import type { Queryable } from '../db/db.ts';
import { one, run, type Sql, sql } from '../db/sql.ts';
import { cardFingerprint } from '../domain/card.ts';
import { DEFAULT_FEE_SCHEDULE } from '../domain/fees.ts';
import { ok, type Result, refuse } from '../domain/result.ts';
import type { SaleRequest } from '../domain/sale-request.ts';
import { type BoletoIssued, operation, type PixCharge, type ProviderName, type Providers } from '../providers/ports.ts';
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
  pix: { code: string; txid: string; expiresAt: Date | null; qrCodeBase64: string } | null;
  boleto: CreatedBoleto | null;
}

export interface CreatedBoleto {
  code: string;
  barcode: string;
  dueDate: string;
  pdfUrl: string | null;
  /** The boleto híbrido's Pix, when its issuer made one. */
  pix: { key: string; qrCodeBase64: string } | null;
}

/** What a sale's provider made before the write: a PIX charge, or a registered boleto and the sale id it carries. */
export type Prepared =
  | { pix: PixCharge; boleto: null }
  | { pix: null; boleto: { saleId: number; issued: BoletoIssued } }
  | { pix: null; boleto: null };

interface MethodFields {
  id: number | null;
  provider: ProviderName;
  card: { brand: string; lastFour: string; bin: string; fingerprint: string } | null;
  pix: { code: string; txid: string; expiresAt: Date | null; charge: PixCharge['charge'] } | null;
  boleto: { code: string; barcode: string; dueDate: string; pdfUrl: string | null; pixCode: string | null } | null;
  /** null: the sale's own id. */
  externalId: string | null;
  providerData: Record<string, unknown> | null;
}

/**
 * What a sale's provider must make before the sale is written, outside any database transaction
 * (CONTRACT §11.1, §11.4): a PIX charge (with an expiry, a call to the PSP), or a boleto registered at
 * its issuer under a sale id drawn first. Nothing for cards; a refusal when the provider did not make
 * it (nothing is written then).
 */
export async function prepareProvider(q: Queryable, deps: SaleDeps, sale: SaleRequest): Promise<Result<Prepared>> {
  if (sale.paymentMethod === 'BOLETO') return prepareBoleto(q, deps, sale);
  if (sale.paymentMethod !== 'PIX') return ok({ pix: null, boleto: null });
  const document = sale.customer.document;
  const charged = await operation(
    deps.providers.connector(deps.providers.rails.PIX),
    'charge',
  )({
    amountCents: sale.amount,
    expiresInSeconds: sale.pix.expiresInSeconds,
    debtor: document ? { name: sale.customer.name, document } : null,
  });
  return charged.ok ? ok({ pix: charged.charge, boleto: null }) : refuse('PROVIDER_ERROR', charged.reason);
}

async function prepareBoleto(q: Queryable, deps: SaleDeps, sale: Extract<SaleRequest, { paymentMethod: 'BOLETO' }>): Promise<Result<Prepared>> {
  // The issuer's charge carries the sale id: drawn before, written with the sale after.
  const saleId = await drawId(q);
  const issued = await operation(
    deps.providers.connector(deps.providers.rails.BOLETO),
    'issueBoleto',
  )({
    saleId,
    amountCents: sale.amount,
    dueDate: sale.boleto.dueDate,
    customer: { name: sale.customer.name, email: sale.customer.email, document: sale.customer.document ?? '', phone: sale.customer.phone },
    items: sale.items.map((i) => ({ title: i.title, unitPrice: i.unitPrice, quantity: i.quantity })),
    shipping: sale.shipping,
  });
  return issued.ok ? ok({ pix: null, boleto: { saleId, issued: issued.boleto } }) : refuse('PROVIDER_ERROR', issued.reason);
}

/**
 * A sale (status PENDENTE) with what its provider made before (`prepareProvider`): its write, one
 * statement's CTEs (`written` gives the sale's id), and the sale as created once its id is known.
 */
export function plannedSale(
  deps: SaleDeps,
  sellerId: number,
  sale: SaleRequest,
  now: Date,
  prepared: Prepared,
): { ctes: Sql; created(id: number): CreatedSale } {
  const m = methodFields(deps, sale, now, prepared);
  return {
    ctes: insertSale(sellerId, sale, m, now),
    created: (id) => ({
      id,
      sale,
      createdAt: now,
      installments: sale.installments,
      pix: m.pix && { code: m.pix.code, txid: m.pix.txid, expiresAt: m.pix.expiresAt, qrCodeBase64: qrPngDataUri(m.pix.code) },
      boleto: m.boleto && {
        code: m.boleto.code,
        barcode: m.boleto.barcode,
        dueDate: m.boleto.dueDate,
        pdfUrl: m.boleto.pdfUrl,
        pix: m.boleto.pixCode === null ? null : { key: m.boleto.pixCode, qrCodeBase64: qrPngDataUri(m.boleto.pixCode) },
      },
    }),
  };
}

// A registered boleto is read back from Efí this long after it is made (its notifications come first).
const first_boleto_check_ms = 5 * 60_000;

// The sale and its items, CTEs of one statement (one round trip). The fee schedule in force is
// snapshotted from the seller's own schedule or the platform default.
function insertSale(sellerId: number, sale: SaleRequest, m: MethodFields, now: Date) {
  return sql`
  written AS (
    INSERT INTO transactions (id, seller_id, status, payment_method, amount, fee_schedule,
      customer_name, customer_email, customer_document, customer_phone, shipping, postback_url, installments,
      card_brand, card_last_four, card_bin, card_fingerprint, pix_code, pix_txid, pix_expires_at,
      boleto_code, boleto_barcode, boleto_due_date, boleto_pdf_url, boleto_pix_code, boleto_charge, next_check_at,
      external_transaction_id, provider_data, created_at, updated_at, pix_charge, provider)
    SELECT n.id, s.id, 'PENDENTE', ${sale.paymentMethod}, ${sale.amount},
      coalesce(s.fee_schedule, (SELECT fee_schedule FROM platform_settings), ${JSON.stringify(DEFAULT_FEE_SCHEDULE)}::jsonb),
      ${sale.customer.name}, ${sale.customer.email}, ${sale.customer.document}, ${sale.customer.phone},
      ${sale.shipping ? JSON.stringify(sale.shipping) : null}::jsonb, ${sale.postbackUrl}, ${sale.installments},
      ${m.card?.brand ?? null}, ${m.card?.lastFour ?? null}, ${m.card?.bin ?? null}, ${m.card?.fingerprint ?? null},
      ${m.pix?.code ?? null}, ${m.pix?.txid ?? null}, ${m.pix?.expiresAt ?? null},
      ${m.boleto?.code ?? null}, ${m.boleto?.barcode ?? null}, ${m.boleto?.dueDate ?? null}::date, ${m.boleto?.pdfUrl ?? null},
      ${m.boleto?.pixCode ?? null}, ${m.boleto ? 'ACTIVE' : null}, ${m.boleto && m.provider === 'efi' ? new Date(now.getTime() + first_boleto_check_ms) : null}, coalesce(${m.externalId}, n.id::text),
      ${m.providerData ? JSON.stringify(m.providerData) : null}::jsonb, ${now}, ${now}, ${m.pix?.charge ?? null}, ${m.provider}
    FROM (SELECT coalesce(${m.id}::bigint, nextval('transactions_id_seq')) AS id) n, sellers s WHERE s.id = ${sellerId}
    RETURNING id
  ), items AS (
    INSERT INTO sale_items (transaction_id, title, unit_price, quantity, tangible)
    SELECT written.id, x.title, x.unit_price, x.quantity, x.tangible
    FROM written, unnest(${sale.items.map((i) => i.title)}::text[], ${sale.items.map((i) => i.unitPrice)}::bigint[],
      ${sale.items.map((i) => i.quantity)}::int[], ${sale.items.map((i) => i.tangible)}::bool[]) WITH ORDINALITY AS x (title, unit_price, quantity, tangible, n)
    ORDER BY x.n
  )`;
}

/** The sale id, drawn before the write where the provider's reference carries it. */
const drawId = async (q: Queryable) => Number(one(await run<{ id: number }>(q, sql`SELECT nextval('transactions_id_seq') AS id`)).id);

function methodFields(deps: SaleDeps, sale: SaleRequest, now: Date, prepared: Prepared): MethodFields {
  const none = { id: null, card: null, pix: null, boleto: null, providerData: null };
  const provider = deps.providers.rails[sale.paymentMethod];
  const connector = deps.providers.connector(provider);
  switch (sale.paymentMethod) {
    case 'PIX': {
      const charge = prepared.pix;
      if (!charge) throw new Error('a PIX sale is written with its charge (prepareProvider)');
      const seconds = sale.pix.expiresInSeconds;
      const expiresAt = seconds === null ? null : new Date(now.getTime() + seconds * 1000);
      // CONTRACT §11.1: the transaction's externalTransactionId is the charge's txid.
      return { ...none, provider, pix: { code: charge.brCode, txid: charge.txid, expiresAt, charge: charge.charge }, externalId: charge.txid };
    }
    case 'BOLETO': {
      if (!prepared.boleto) throw new Error('a boleto sale is written with its registered boleto (prepareProvider)');
      const { saleId, issued } = prepared.boleto;
      const boleto = {
        code: issued.digitableLine,
        barcode: issued.barcode,
        dueDate: sale.boleto.dueDate,
        pdfUrl: issued.pdfUrl,
        pixCode: issued.pixCode,
      };
      return { ...none, id: saleId, provider, boleto, externalId: issued.externalId };
    }
    case 'CREDIT_CARD':
    case 'DEBIT_CARD': {
      const { card } = sale;
      // A processor that knows the payment by the sale id (CONTRACT §11.2) gets it from the write itself.
      const reference = operation(
        connector,
        'reference',
      )({
        amountCents: sale.amount,
        installments: sale.installments ?? 1,
        brand: card.brand,
        number: card.number,
      });
      return {
        ...none,
        provider,
        card: { brand: card.brand, lastFour: card.lastFour, bin: card.bin, fingerprint: cardFingerprint(card.number, deps.cardFingerprintKey) },
        externalId: reference.externalId,
        providerData: reference.providerData,
      };
    }
  }
}
